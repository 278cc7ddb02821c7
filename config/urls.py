from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_replace
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from agentdocs.api import signing
from agentdocs.api.errors import json_not_found
from agentdocs.api.mcp import McpView

# The split view serves Swagger UI's start-up script as a file, not inline; the
# page still has drf-spectacular's own `<style>` element, allowed on this page only
# (replaced, not added to: beside a hash, browsers ignore 'unsafe-inline').
api_docs = csp_replace({"style-src": [SELF, UNSAFE_INLINE]})(
    SpectacularSwaggerSplitView.as_view(url_name="api-schema")
)

urlpatterns = [
    path("admin/", admin.site.urls),
    path(".well-known/agentdocs/keys.json", signing.published_keys, name="signing-keys"),
    # Browsers ask for /favicon.ico whatever the page's <link rel="icon"> says.
    path("favicon.ico", RedirectView.as_view(url=static("agentdocs/favicon.svg"))),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", api_docs, name="api-docs"),
    path("api/v1/", include("agentdocs.api.urls")),
    # Anything else under /api/ (/api/schema/ with a newline after it) is the API's
    # JSON 404 too, never the HTML page.
    re_path(r"^api/", json_not_found),
    # MCP over Streamable HTTP (issue 12): the trailing slash is optional, for clients
    # that drop it (a redirect would lose the POST).
    re_path(r"^mcp/?$", McpView.as_view(), name="mcp"),
    re_path(r"^mcp/(?P<tenant>[^/]+)/(?P<project>[^/]+)/?$", McpView.as_view(), name="mcp-project"),
    path("", include("agentdocs.web.urls")),
]

# The 403 page says what is true of each refusal (agentdocs.web.pages.refusal_heading).
handler403 = "agentdocs.web.pages.permission_denied"

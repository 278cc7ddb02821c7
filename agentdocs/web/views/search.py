"""The search page: the tenant's current documents matching `?q=`, grouped by project.

The header's search box (in `base.html`, on every page of a tenant) sends here; `/`
focuses it (`static/agentdocs/app.js`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from agentdocs import permissions
from agentdocs.core.errors import InvalidInput
from agentdocs.selectors import search as search_selectors
from agentdocs.selectors.search import MAX_QUERY_LENGTH, SearchHit
from agentdocs.web.pages import list_page, member_page

HITS_PER_PAGE = 25


@dataclass(frozen=True)
class ShownHit:
    hit: SearchHit
    snippet_html: SafeString


def marked_snippet(hit: SearchHit) -> SafeString:
    """The snippet escaped for a page, each match in `<mark>`."""
    parts: list[str] = []
    at = 0
    for start, end in hit.highlights:
        parts.append(escape(hit.snippet[at:start]))
        parts.append(f"<mark>{escape(hit.snippet[start:end])}</mark>")
        at = end
    parts.append(escape(hit.snippet[at:]))
    return mark_safe("".join(parts))  # every piece of text was escaped above


@member_page
def search_page(request: HttpRequest, tenant: str) -> HttpResponse:
    project_slug = request.GET.get("project", "")
    if project_slug:
        access: permissions.Access = permissions.project_access(request.user, tenant, project_slug)
    else:
        access = permissions.tenant_access(request.user, tenant)
    q = request.GET.get("q", "")
    context = {
        "access": access,
        "tenant": access.tenant,
        "only_project": access.project,
        "q": q.strip(),
        "max_length": MAX_QUERY_LENGTH,
        "groups": [],
        "page": None,
        "error": None,
    }
    if not q.strip():
        return render(request, "agentdocs/search.html", context)
    try:
        q = search_selectors.validate_search_query(q)
    except InvalidInput as error:
        context["error"] = error.detail
        return render(request, "agentdocs/search.html", context, status=error.status)
    rows = search_selectors.document_search(tenant=access.tenant, q=q, project=access.project)
    page = list_page(request, rows, per_page=HITS_PER_PAGE)
    hits = search_selectors.search_hits(page.object_list, q=q)
    groups = [
        (project, [ShownHit(hit=hit, snippet_html=marked_snippet(hit)) for hit in project_hits])
        for project, project_hits in search_selectors.grouped_by_project(hits)
    ]
    if not groups:
        context["suggested_words"] = search_selectors.query_words(q)
        context["syntax"] = search_selectors.search_syntax()
    return render(request, "agentdocs/search.html", {**context, "groups": groups, "page": page})

"""Refuse a NUL character in a request's path or query string, before any view.

No name in agentdocs can hold a NUL (slugs, paths, recipe names and keys are
all validated) and PostgreSQL text cannot store one, so such a request names
nothing. Without this, a `%00` in a URL reached the database as a lookup value
and failed there. The API and `/mcp/` answer with the API's JSON error naming the
field (the URL part or query parameter); pages answer 400 in plain text.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.urls import Resolver404, resolve

from agentdocs.api.errors import error_body
from agentdocs.core.storable import NUL

API_PREFIX = "/api/"
# Where clients read JSON only: the API, and MCP over HTTP (`/mcp/`, `/mcp/T/P/`).
JSON_PREFIXES = (API_PREFIX, "/mcp")


def _field_with_nul(request: HttpRequest) -> str | None:
    """The URL part or query parameter that holds a NUL, or None when none does."""
    if NUL in request.path_info:
        try:
            kwargs = resolve(request.path_info).kwargs
        except Resolver404:
            return "url"
        return next((name for name, value in kwargs.items() if NUL in str(value)), "url")
    query = request.META.get("QUERY_STRING", "")
    if "%00" in query or NUL in query:
        for name, values in request.GET.lists():
            if NUL in name or any(NUL in value for value in values):
                return name.replace(NUL, "") or "query"
    return None


class RejectNulMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        field = _field_with_nul(request)
        if field is None:
            return self.get_response(request)
        detail = f"`{field}` contains a NUL character, which no name or value here can hold."
        if request.path_info.startswith(JSON_PREFIXES):
            return JsonResponse(error_body("invalid", detail, field), status=400)
        return HttpResponseBadRequest(detail, content_type="text/plain; charset=utf-8")

"""The documentation pages: `docs/*.md` at `/docs/` and `/docs/<page>/`, and their
pictures. Public, like the site MkDocs builds from the same files: nothing in them is a
tenant's."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_safe

from agentdocs.web import docs

# The pictures change only when the files do; a day keeps a page's reload cheap.
SCREENSHOT_MAX_AGE_SECONDS = 24 * 3600


@require_safe
def docs_index(request: HttpRequest) -> HttpResponse:
    return _page(request, docs.INDEX)


@require_safe
def docs_page(request: HttpRequest, page: str) -> HttpResponse:
    if page == docs.INDEX:
        return redirect("docs", permanent=True)  # one URL per page
    return _page(request, page)


@require_safe
def docs_screenshot(request: HttpRequest, name: str) -> FileResponse:
    path = docs.screenshot_path(name)
    if path is None:
        raise Http404("No such picture in the documentation.")
    response = FileResponse(path.open("rb"), content_type="image/png")
    response["Cache-Control"] = f"public, max-age={SCREENSHOT_MAX_AGE_SECONDS}"
    return response


def _page(request: HttpRequest, name: str) -> HttpResponse:
    page = docs.docs_page(name)
    if page is None:
        raise Http404("No such page in the documentation.")
    context = {"page": page, "nav": docs.docs_nav()}
    return render(request, "agentdocs/docs_page.html", context)

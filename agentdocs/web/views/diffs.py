"""The whole unified diff of two versions of a document, as a file to download.

The diff and revert pages show a bounded diff; this is where they send a reader
who wants all of it. Same access as the diff page: any member of the project.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, QueryDict
from django.utils.http import content_disposition_header

from agentdocs import permissions
from agentdocs.core.errors import NotFound
from agentdocs.core.numbers import positive_int
from agentdocs.services import documents as document_service
from agentdocs.web.diffview import whole_unified_diff
from agentdocs.web.pages import member_page


def _version_param(params: QueryDict, name: str, default: int) -> int:
    value = params.get(name, "")
    if not value:
        return default
    version = positive_int(value)
    if version is None:
        raise NotFound(f"`{name}` must be a version number.", field=name)
    return version


@member_page
def document_diff_download(
    request: HttpRequest, tenant: str, project: str, path: str
) -> HttpResponse:
    """`from` and `to` as on the diff page: by default the last two versions."""
    access = permissions.project_access(request.user, tenant, project)
    document = document_service.document_get(
        project=access.project, path=path, include_deleted=True
    )
    to_version = _version_param(request.GET, "to", document.version)
    from_version = _version_param(request.GET, "from", max(to_version - 1, 1))
    old = document_service.document_version(document=document, version=from_version)
    new = document_service.document_version(document=document, version=to_version)
    text = whole_unified_diff(
        old.body,
        new.body,
        old_label=f"{document.path}@{from_version}",
        new_label=f"{document.path}@{to_version}",
    )
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    filename = f"{document.path.replace('/', '_')}.v{from_version}-v{to_version}.diff"
    response["Content-Disposition"] = content_disposition_header(True, filename) or "attachment"
    return response

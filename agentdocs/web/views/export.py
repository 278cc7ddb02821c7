"""The Export page: each file a tool reads (listed, each a download, with the warnings of
the tool limits it is over), a zip download and the sync command."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import content_disposition_header

from agentdocs import permissions
from agentdocs.core.errors import InvalidInput, NotFound, TooLarge
from agentdocs.core.export import ALL, EXPORT_FORMATS, Export
from agentdocs.core.labels import LATEST, validate_label_name
from agentdocs.core.targets import TARGETS
from agentdocs.selectors import export as export_selectors
from agentdocs.selectors import labels as label_selectors
from agentdocs.selectors import policy as policy_selectors
from agentdocs.web.forms.export import ExportForm
from agentdocs.web.pages import add_service_error, list_page, member_page

# The page lists this many files at a time (a project of a thousand context documents
# exports thousands), the first few with a preview of this many characters; each whole
# file is a download.
FILES_PER_PAGE = 100
PREVIEWED_FILES = 5
PREVIEW_CHARS = 2048
# And this many of the documents the files came from.
SHOWN_SOURCES = 100


@member_page
def export_page(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    """Readers may export. The page lists the files with their sizes, a short preview
    of each and a download link; `?download=zip` returns the zip the API returns and
    `?file=PATH` one file. An export over `AGENTDOCS_MAX_EXPORT_BYTES` is listed, but
    its zip is refused with 413 as in the API. `?label=L` reads each document at its
    version under L (its latest where it has none), as the API's export does; the
    listed files, the zip and each file download alike."""
    access = permissions.project_access(request.user, tenant, project)
    form = ExportForm(request.GET or {"format": ALL})
    export = None
    status = 200
    refusal: TooLarge | None = None
    if form.is_valid():
        label = form.cleaned_data["label"]
        try:
            export = export_selectors.export_build(
                project=access.project,
                format=form.cleaned_data["format"] or ALL,
                recipe_name=form.cleaned_data["recipe"] or None,
                profile_name=form.cleaned_data["profile"] or None,
                within_limit=False,
                # `latest` stays: it overrides the recipe's label, as on the API.
                label=validate_label_name(label) if label else None,
            )
        except (InvalidInput, NotFound) as error:
            if error.field not in ("format", "recipe", "profile", "label"):
                raise
            status = error.status  # an unknown recipe stays 404, as on the API
            add_service_error(form, error)
    else:
        status = 400
    if export is not None and request.GET.get("download") == "zip":
        try:
            export_selectors.export_check_size(export)
        except TooLarge as error:
            refusal, status = error, error.status
        else:
            response = HttpResponse(export.zip_bytes(), content_type="application/zip")
            filename = f"agentdocs-{access.tenant.slug}-{access.project.slug}-{export.format}.zip"
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
    if export is not None and request.GET.get("file"):
        return _file_download(export, request.GET["file"])
    # The label the files were read by, for the links and the command (none when refused).
    export_label = form.cleaned_data.get("label", "") if export is not None else ""
    # `all` is a format of its own (every path once, as the server dedupes it).
    sync_formats = export.format if export is not None else ALL
    page = list_page(
        request, list(export.files) if export is not None else [], per_page=FILES_PER_PAGE
    )
    files = [
        {
            "path": file.path,
            "size": file.size,
            "sha256": file.sha256,
            "preview": file.preview(PREVIEW_CHARS) if index < PREVIEWED_FILES else None,
            "previewed_whole": len(file.content) <= PREVIEW_CHARS,
            "warnings": [w.message for w in export.warnings_for(file.path)] if export else [],
        }
        for index, file in enumerate(page.object_list)
    ]
    file_paths = {file.path for file in export.files} if export is not None else set()
    return render(
        request,
        "agentdocs/export.html",
        {
            "access": access,
            "project": access.project,
            "form": form,
            "formats": EXPORT_FORMATS,
            "targets": TARGETS,
            # Warnings on no single file: a limit on all of a tool's files together.
            "folder_warnings": [
                warning.message
                for warning in (export.warnings if export is not None else ())
                if warning.path not in file_paths
            ],
            "recipes": list(policy_selectors.recipe_list(tenant=access.tenant)),
            "label_names": [LATEST, *label_selectors.label_names_in_use(project=access.project)],
            "export": export,
            "files": files,
            "files_page": page,
            "sources": export.sources[:SHOWN_SOURCES] if export is not None else (),
            "more_sources": max(len(export.sources) - SHOWN_SOURCES, 0) if export else 0,
            "over_limit": export is not None and export_selectors.export_over_limit(export),
            "limit": settings.AGENTDOCS_MAX_EXPORT_BYTES,
            "refusal": refusal,
            "sync_command": _sync_command(access, sync_formats, label=export_label),
        },
        status=status,
    )


def _sync_command(access: permissions.ProjectAccess, formats: str, *, label: str) -> str:
    command = (
        f"agentdocs sync --tenant {access.tenant.slug} --project {access.project.slug} "
        f"--format {formats}"
    )
    return f"{command} --label {label}" if label else command


def _file_download(export: Export, path: str) -> HttpResponse:
    """One file of the export, whole, as an attachment."""
    file = export.file(path)
    if file is None:
        raise NotFound(f"The {export.format} export has no file {path!r}.", field="file")
    if file.size > settings.AGENTDOCS_MAX_EXPORT_BYTES:
        detail = (
            f"{path} holds {file.size:,} bytes; a download holds at most "
            f"{settings.AGENTDOCS_MAX_EXPORT_BYTES:,}."
        )
        return HttpResponse(detail, status=TooLarge.status, content_type="text/plain")
    response = HttpResponse(file.content, content_type="text/markdown; charset=utf-8")
    filename = path.rsplit("/", 1)[-1]
    response["Content-Disposition"] = content_disposition_header(True, filename) or "attachment"
    return response

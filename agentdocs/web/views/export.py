"""The Export page: each file a tool reads, a zip download and the sync command."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agentdocs import permissions
from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.core.export import ALL, EXPORT_FORMATS
from agentdocs.selectors import policy as policy_selectors
from agentdocs.services import export as export_service
from agentdocs.web.forms import ExportForm
from agentdocs.web.pages import add_service_error, member_page


@member_page
def export_page(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    """Readers may export. `?download=zip` returns the zip the API returns."""
    access = permissions.project_access(request.user, tenant, project)
    form = ExportForm(request.GET or {"format": ALL})
    export = None
    status = 200
    if form.is_valid():
        try:
            export = export_service.export_build(
                project=access.project,
                format=form.cleaned_data["format"] or ALL,
                recipe_name=form.cleaned_data["recipe"] or None,
                profile_name=form.cleaned_data["profile"] or None,
            )
        except (InvalidInput, NotFound) as error:
            if error.field not in ("format", "recipe", "profile"):
                raise
            status = 400
            add_service_error(form, error)
    else:
        status = 400
    if export is not None and request.GET.get("download") == "zip":
        response = HttpResponse(export.zip_bytes(), content_type="application/zip")
        filename = f"agentdocs-{access.tenant.slug}-{access.project.slug}-{export.format}.zip"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    formats = [f for f in EXPORT_FORMATS if f != ALL]
    chosen = export.format if export is not None else ALL
    sync_formats = ",".join(formats) if chosen == ALL else chosen
    return render(
        request,
        "agentdocs/export.html",
        {
            "access": access,
            "project": access.project,
            "form": form,
            "formats": EXPORT_FORMATS,
            "recipes": list(policy_selectors.recipe_list(tenant=access.tenant)),
            "export": export,
            "sync_command": (
                f"agentdocs sync --tenant {access.tenant.slug} --project {access.project.slug} "
                f"--format {sync_formats}"
            ),
        },
        status=status,
    )

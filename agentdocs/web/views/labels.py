"""Labels of a document's versions on the document page: move one to a version, or
remove one, directly or as a change request under review (`services.label_review`).

The label's rights and name are decided once, by `permissions.movable_label_for`. The
page's label form posts to the document page itself (`documents.document_detail`), so
that a refused move shows the page again at its own address; `document-label` stays
for scripts that used it.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from agentdocs import permissions
from agentdocs.core.errors import AgentdocsError
from agentdocs.models import ChangeRequest
from agentdocs.services import label_review
from agentdocs.web.document_pages import detail_context, document_url
from agentdocs.web.forms.labels import LabelMoveForm, LabelRemoveForm
from agentdocs.web.pages import form_page, member_page


@member_page
@require_POST
def document_label(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    """Move a label of the document (the page's form posts to the page itself; this
    address stays for scripts that used it)."""
    return label_move(request, tenant, project, path)


def label_move(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    """Move a label of the document: directly, or as a change request under review."""
    access = permissions.project_access(request.user, tenant, project)
    document = permissions.document_for(access, path)
    form = LabelMoveForm(request.POST)
    refusal: AgentdocsError | None = None
    if form.is_valid():
        data = form.cleaned_data
        try:
            name = permissions.movable_label_for(access, document, data["label"])
            done = label_review.label_request(
                document=document,
                name=name,
                version=data["version"],
                user=access.user,
                reason=data["reason"],
                may_bypass_review=access.may_bypass_review,
            )
        except AgentdocsError as error:
            refusal = error
        else:
            if isinstance(done, ChangeRequest):
                proposes = f"moving {name} to version {done.base_version}"
                return _proposed(request, access, document.path, done, proposes)
            messages.success(request, f"Moved {name} to version {done.label.version}.")
            return redirect(document_url("document", access, document.path))
    context = detail_context(request, access, document, document, label_form=form)
    return form_page(request, "agentdocs/document.html", context, form=form, refusal=refusal)


@member_page
@require_POST
def document_label_remove(
    request: HttpRequest, tenant: str, project: str, path: str
) -> HttpResponse:
    """Remove a label of the document: directly, or as a change request under review,
    through the same rules and gate as a move."""
    access = permissions.project_access(request.user, tenant, project)
    document = permissions.document_for(access, path)
    form = LabelRemoveForm(request.POST)
    refusal: AgentdocsError | None = None
    if form.is_valid():
        data = form.cleaned_data
        try:
            name = permissions.movable_label_for(access, document, data["label"])
            proposed = label_review.label_remove_request(
                document=document,
                name=name,
                user=access.user,
                reason=data["reason"],
                may_bypass_review=access.may_bypass_review,
            )
        except AgentdocsError as error:
            refusal = error
        else:
            if proposed is not None:
                return _proposed(request, access, document.path, proposed, f"removing {name}")
            messages.success(request, f"Removed {name}: readers of it get latest.")
            return redirect(document_url("document", access, document.path))
    context = detail_context(request, access, document, document, remove_form=form)
    return form_page(request, "agentdocs/document.html", context, form=form, refusal=refusal)


def _proposed(
    request: HttpRequest,
    access: permissions.ProjectAccess,
    path: str,
    change: ChangeRequest,
    proposes: str,
) -> HttpResponse:
    """Under review, a label's move or removal became a change request: say so and go
    to it."""
    messages.success(
        request, f"{path} is protected by review: change #{change.pk} proposes {proposes}."
    )
    return redirect(
        "change", tenant=access.tenant.slug, project=access.project.slug, change_id=change.pk
    )

"""Document pages: read (with the document's labels), create, edit with live preview,
delete, lock. Moving or removing a label is `labels`'.

Every view resolves the project through `agentdocs.permissions` and changes
documents only through `agentdocs.services.documents`. A view that takes a form
shows it (GET) or hands it to `_save_*` (POST), which calls one service and
redirects, or shows the page again with the refusal under its own status
(`agentdocs.web.pages.form_page`). A refused save keeps what the user typed on
the page. After the secret check refused a save, the page offers to save it anyway
with an acknowledgement and a reason; the same after a refusal for hidden
characters, which the editor lists by line and column.

A stale save is merged (`document_merge`: the merged and three-way pages); history,
diff and revert are `document_history`'s.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from agentdocs import permissions, ratelimit
from agentdocs.core.errors import (
    AgentdocsError,
    InvalidInput,
    Locked,
    MergeConflict,
    NotFound,
    VersionConflict,
)
from agentdocs.core.paths import validate_path
from agentdocs.models import RESERVED_PROJECT, Document
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import documents as document_selectors
from agentdocs.services import document_locks
from agentdocs.services import documents as document_service
from agentdocs.validation import documents as document_checks
from agentdocs.web import hidden_characters
from agentdocs.web.document_pages import (
    DocumentVersion,
    current_document,
    detail_context,
    document_url,
    edit_page,
    lock_context,
    offers_acknowledgement,
    shadowed_tenant_document,
    stale_save,
    version_param,
)
from agentdocs.web.forms.documents import (
    DeleteForm,
    DocumentCreateForm,
    DocumentEditForm,
    LockForm,
    MarkdownPreviewForm,
)
from agentdocs.web.forms.labels import LabelMoveForm
from agentdocs.web.guideline import measure
from agentdocs.web.markdown import PREVIEW_CACHE_SECONDS, render_markdown
from agentdocs.web.pages import form_page, member_page
from agentdocs.web.views import labels
from agentdocs.web.views.document_merge import after_save, conflict_page


@member_page
@require_http_methods(["GET", "POST"])
def document_detail(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    """The document (GET); a POST is the page's label form, so a refused move shows the
    page again at its own address."""
    if request.method == "POST":
        return labels.label_move(request, tenant, project, path)
    access = permissions.project_access(request.user, tenant, project)
    document = permissions.document_for(access, path, include_deleted=True)
    shown: DocumentVersion = document
    version = version_param(request.GET, "version", 0)
    if version:
        shown = document_selectors.document_version(document=document, version=version)
    form = LabelMoveForm(initial={"version": shown.version})
    return render(
        request,
        "agentdocs/document.html",
        detail_context(request, access, document, shown, label_form=form),
    )


@member_page
@require_http_methods(["GET", "POST"])
def document_create(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    access.require_write()
    if request.method == "POST":
        return _save_create(request, access)
    path = request.GET.get("path", "")
    initial = {"path": path}
    inherited = _inherited_document(access, path)
    if inherited is not None and request.GET.get("start") == "inherited":
        initial["body"] = inherited.body
        initial["reason"] = f"Start from {RESERVED_PROJECT}/{inherited.path} v{inherited.version}"
    form = DocumentCreateForm(initial=initial)
    return _create_page(request, access, form)


def _inherited_document(access: ProjectAccess, path: object) -> Document | None:
    """The tenant-wide document a new document at ``path`` would shadow, if any."""
    if not isinstance(path, str) or not path:
        return None
    try:
        validate_path(path)
    except InvalidInput:
        return None
    return shadowed_tenant_document(access, path)


def _save_create(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
    form = DocumentCreateForm(request.POST)
    if not form.is_valid():
        return _create_page(request, access, form)
    path = form.cleaned_data["path"]
    try:
        access.require_write(path)
        document = document_service.document_create(
            project=access.project,
            path=path,
            body=form.cleaned_data["body"],
            user=access.user,
            reason=form.cleaned_data["reason"],
            acknowledge_secret=form.cleaned_data["acknowledge_secret"],
            acknowledge_hidden=form.cleaned_data["acknowledge_hidden"],
        )
    except AgentdocsError as error:
        return _create_page(request, access, form, refusal=error)
    messages.success(request, f"Created {document.path}, version {document.version}.")
    return redirect(document_url("document", access, document.path))


def _create_page(
    request: HttpRequest,
    access: ProjectAccess,
    form: DocumentCreateForm,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    body = form["body"].value() or ""
    context = {
        "access": access,
        "project": access.project,
        "form": form,
        "measure": measure(body),
        "preview_html": render_markdown(body),
        "offer_acknowledgement": offers_acknowledgement(access, form, refusal),
        "offer_hidden_acknowledgement": hidden_characters.offers_acknowledgement(
            tenant_id=access.tenant.pk, form=form, refusal=refusal
        ),
        "inherited": _inherited_document(access, form["path"].value()),
    }
    return form_page(request, "agentdocs/document_create.html", context, form=form, refusal=refusal)


@member_page
@require_http_methods(["GET", "POST"])
def document_edit(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    if request.method == "POST":
        return _save_edit(request, access, path)
    document = permissions.document_for(access, path, intent="write")
    form = DocumentEditForm(initial={"body": document.body, "base_version": document.version})
    return edit_page(request, access, document, form)


def _save_edit(request: HttpRequest, access: ProjectAccess, path: str) -> HttpResponse:
    # A document deleted while someone edits it must not cost them their text.
    document = permissions.document_for(access, path, intent="write", include_deleted=True)
    form = DocumentEditForm(request.POST)
    if not form.is_valid():
        return edit_page(request, access, document, form)
    if form.cleaned_data["bypass_review"]:
        access.require_bypass_review()
    body = form.cleaned_data["body"]
    base_version = form.cleaned_data["base_version"]
    try:
        written = document_service.document_write(
            document=document,
            body=body,
            base_version=base_version,
            user=access.user,
            reason=form.cleaned_data["reason"],
            acknowledge_secret=form.cleaned_data["acknowledge_secret"],
            acknowledge_hidden=form.cleaned_data["acknowledge_hidden"],
            merge=True,
            bypass_review=form.cleaned_data["bypass_review"],
        )
    except MergeConflict as error:
        return conflict_page(
            request,
            access,
            path,
            error,
            body=body,
            reason=form.cleaned_data["reason"],
            acknowledge_secret=form.cleaned_data["acknowledge_secret"],
            acknowledge_hidden=form.cleaned_data["acknowledge_hidden"],
        )
    except VersionConflict as error:
        # Deleted meanwhile, or a base version the history does not hold: nothing to
        # merge with, so the page shows the difference and keeps the text.
        stale = stale_save(request, access, path, DocumentEditForm)
        return edit_page(
            request,
            access,
            stale.document,
            stale.form,
            refusal=error,
            conflict=stale.conflict_panel(mine=body),
        )
    except AgentdocsError as error:
        # Read again: a lock taken meanwhile names its holder beside the editor.
        return edit_page(request, access, current_document(access, path), form, refusal=error)
    version = written.document.version
    return after_save(
        request,
        access,
        written,
        before=document,
        unchanged=f"No changes: {path} is still version {version}.",
        changed=f"Saved {path} as version {version}.",
    )


@member_page
@require_POST
def markdown_preview(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    """The edit page's live preview: sanitised HTML and the one-screen meter.

    For the editor, so for those who may write: parsing Markdown costs the server
    CPU on every pause in typing."""
    permissions.project_access(request.user, tenant, project).require_write()
    ratelimit.check("markdown_preview", f"user:{request.user.pk}")
    form = MarkdownPreviewForm(request.POST)
    body = form.cleaned_data["body"] if form.is_valid() else ""
    size = measure(body)
    # Past the largest storable body there is nothing worth rendering: the save will refuse it.
    too_large = size.bytes > document_checks.MAX_BODY_BYTES
    return render(
        request,
        "agentdocs/partials/preview.html",
        {
            "preview_html": ""
            if too_large
            else render_markdown(body, cache_seconds=PREVIEW_CACHE_SECONDS),
            "too_large": too_large,
            "measure": size,
            "preview_text": body,
            "oob": True,
        },
    )


@member_page
@require_http_methods(["GET", "POST"])
def document_delete(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    document = permissions.document_for(access, path, intent="write")
    if request.method == "POST":
        return _save_delete(request, access, document)
    form = DeleteForm(initial={"base_version": document.version})
    return _delete_page(request, access, document, form)


def _save_delete(request: HttpRequest, access: ProjectAccess, document: Document) -> HttpResponse:
    form = DeleteForm(request.POST)
    if not form.is_valid():
        return _delete_page(request, access, document, form)
    try:
        deleted = document_service.document_delete(
            document=document,
            base_version=form.cleaned_data["base_version"],
            user=access.user,
            reason=form.cleaned_data["reason"],
        )
    except AgentdocsError as error:
        return _delete_page(request, access, document, form, refusal=error)
    messages.success(
        request,
        f"Deleted {document.path} (version {deleted.version}). Its history keeps every "
        "version: restore it from there.",
    )
    return redirect("project", tenant=access.tenant.slug, project=access.project.slug)


def _delete_page(
    request: HttpRequest,
    access: ProjectAccess,
    document: Document,
    form: DeleteForm,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    context = {
        "access": access,
        "project": access.project,
        "document": document,
        "form": form,
        **lock_context(access, document),
    }
    return form_page(request, "agentdocs/document_delete.html", context, form=form, refusal=refusal)


@member_page
@require_POST
def document_lock(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    document = permissions.document_for(access, path, intent="write")
    form = LockForm(request.POST)
    if not form.is_valid():
        raise NotFound("Unknown lock action.", field="action")
    force = form.cleaned_data["force"]
    if force:
        access.require_admin()
    try:
        if form.cleaned_data["action"] == "lock":
            document = document_locks.document_lock(
                document=document, user=access.user, force=force
            )
            messages.success(
                request,
                f"You hold the edit lock on {path} until "
                f"{document.lock_expires_at:%H:%M} UTC; others cannot save until then.",
            )
        else:
            document_locks.document_unlock(document=document, user=access.user, force=force)
            messages.success(request, f"The edit lock on {path} is released.")
    except Locked as error:
        messages.error(request, error.detail)
    return redirect(document_url("document-edit", access, path))

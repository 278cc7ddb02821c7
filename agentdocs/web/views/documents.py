"""Document pages: read, create, edit with live preview, history, diff, revert, delete, lock.

Every view resolves the project through `agentdocs.permissions` and changes
documents only through `agentdocs.services.documents`. A view that takes a form
shows it (GET) or hands it to `_save_*` (POST), which calls one service and
redirects, or shows the page again with the refusal under its own status
(`agentdocs.web.pages.form_page`). A refused save keeps what the user typed on
the page: nothing here throws text away. After the secret check refused a save,
the page offers to save it anyway with an acknowledgement and a reason; the same
after a refusal for hidden characters, which the editor lists by line and column.

A save based on a stale version is merged onto the current one (three-way, by
lines): the page then says with whom and shows which lines came from whom. Where
both changed the same lines, the three-way page (`document_resolve`) shows the
base, their change and the user's per conflict and saves the user's choices; a
choice that drops their change needs an explicit confirmation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.contrib import messages
from django.forms import Form
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods, require_POST

from agentdocs import permissions, ratelimit
from agentdocs.core.errors import (
    AgentdocsError,
    InvalidInput,
    Locked,
    MergeConflict,
    NotFound,
    SecretDetected,
    VersionConflict,
)
from agentdocs.core.merge import MergeResult, three_way
from agentdocs.core.numbers import positive_int
from agentdocs.core.paths import validate_path
from agentdocs.models import RESERVED_PROJECT, ChangeType, Document
from agentdocs.paging import LateRows
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.selectors.search import validate_search_query
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.web import hidden_characters
from agentdocs.web.diffview import side_by_side, whole_unified_diff
from agentdocs.web.forms import (
    DeleteForm,
    DocumentCreateForm,
    DocumentEditForm,
    LockForm,
    MarkdownPreviewForm,
    MergeResolutionForm,
    RevertForm,
)
from agentdocs.web.guideline import measure
from agentdocs.web.markdown import PREVIEW_CACHE_SECONDS, render_markdown
from agentdocs.web.pages import form_page, member_page

HISTORY_PAGE_SIZE = 50

# One row of a document's history (simple-history builds its class at run time).
DocumentVersion = Any
F = TypeVar("F", bound=Form)


def _document_url(name: str, access: ProjectAccess, path: str) -> str:
    return reverse(
        name, kwargs={"tenant": access.tenant.slug, "project": access.project.slug, "path": path}
    )


def _reach(access: ProjectAccess, path: str) -> dict | None:
    """For a `_vance` document: the projects that inherit it and those that shadow it."""
    if not access.project.is_reserved:
        return None
    projects = list(tenancy_selectors.project_list_with_document(tenant=access.tenant, path=path))
    return {
        # `has_document` is the selector's annotation.
        "inheriting": [p for p in projects if not p.has_document],  # type: ignore[attr-defined]
        "shadowing": [p for p in projects if p.has_document],  # type: ignore[attr-defined]
    }


def _shadowed_tenant_document(access: ProjectAccess, path: str) -> Document | None:
    """The `_vance` document this project's own document hides from the cascade."""
    if access.project.is_reserved:
        return None
    for candidate in document_selectors.cascade_documents(project=access.project, path=path):
        if candidate.project.slug == RESERVED_PROJECT:
            return candidate
    return None


def _lock_context(access: ProjectAccess, document: Document) -> dict:
    lock = document_service.lock_state(document)
    held_by_me = lock is not None and document.lock_holder_id == access.user.pk
    return {
        "lock": lock,
        "lock_expires_at": document.lock_expires_at if lock else None,
        "lock_held_by_me": held_by_me,
        "lock_held_by_other": lock is not None and not held_by_me,
    }


def _offers_acknowledgement(
    access: ProjectAccess, form: Form, refusal: AgentdocsError | None
) -> bool:
    """Whether the page shows the "save anyway" choice: once the secret check refused
    the text (and the tenant allows overrides), and while the user has it chosen."""
    if form["acknowledge_secret"].value():
        return True
    return isinstance(refusal, SecretDetected) and policy_service.secret_override_allowed(
        tenant_id=access.tenant.pk
    )


def _current(access: ProjectAccess, path: str) -> Document:
    """The document as it is now, deleted or not: history, diffs and refused saves show it."""
    return document_selectors.document_get(project=access.project, path=path, include_deleted=True)


@dataclass(frozen=True)
class StaleSave(Generic[F]):
    """A save refused because the document moved on (VersionConflict).

    `document` is the document as it is now; `form` is what the user sent, with
    its base version moved to the current one: nothing they typed is lost, and
    their next save is a deliberate one over a version they have now seen.
    """

    document: Document
    form: F

    def conflict_panel(self, *, mine: str) -> dict:
        """The edit page's conflict panel: who saved first and why, and what
        differs between their version and the user's unsaved text."""
        document = self.document
        winner = document_selectors.document_version(document=document, version=document.version)
        saved_by = document.updated_by.get_username() if document.updated_by else "someone"
        return {
            "document": document,
            "reason": winner.history_change_reason,
            "old_label": f"Version {document.version}, saved by {saved_by}",
            "diff": side_by_side(document.body, mine),
        }


def _stale_save(
    request: HttpRequest, access: ProjectAccess, path: str, form_class: type[F]
) -> StaleSave[F]:
    """What every page that refuses a stale save shows: see `StaleSave`."""
    document = _current(access, path)
    data = request.POST.copy()
    data["base_version"] = str(document.version)
    form = form_class(data)
    form.is_valid()
    return StaleSave(document=document, form=form)


@member_page
def document_detail(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    document = _current(access, path)
    shown: DocumentVersion = document
    version = _version_param(request.GET, "version", 0)
    if version:
        shown = document_selectors.document_version(document=document, version=version)
    is_current = shown.version == document.version
    return render(
        request,
        "agentdocs/document.html",
        {
            "access": access,
            "project": access.project,
            "document": document,
            "shown": shown,
            "shown_author": shown.history_user if shown is not document else document.updated_by,
            "shown_when": shown.history_date if shown is not document else document.updated_at,
            "is_current": is_current,
            "is_deleted": shown.is_deleted,
            "html": render_markdown(shown.body),
            "measure": measure(shown.body),
            "may_write": access.may_write(path),
            "reach": _reach(access, path),
            "shadowed": _shadowed_tenant_document(access, path),
            **_lock_context(access, document),
        },
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
    return _shadowed_tenant_document(access, path)


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
    return redirect(_document_url("document", access, document.path))


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
        "offer_acknowledgement": _offers_acknowledgement(access, form, refusal),
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
    document = document_selectors.document_get(project=access.project, path=path)
    access.require_write(path)
    form = DocumentEditForm(initial={"body": document.body, "base_version": document.version})
    return _edit_page(request, access, document, form)


def _save_edit(request: HttpRequest, access: ProjectAccess, path: str) -> HttpResponse:
    # A document deleted while someone edits it must not cost them their text.
    document = _current(access, path)
    access.require_write(path)
    form = DocumentEditForm(request.POST)
    if not form.is_valid():
        return _edit_page(request, access, document, form)
    body = form.cleaned_data["body"]
    base_version = form.cleaned_data["base_version"]
    try:
        saved = document_service.document_write(
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
        return _conflict_page(
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
        stale = _stale_save(request, access, path, DocumentEditForm)
        return _edit_page(
            request,
            access,
            stale.document,
            stale.form,
            refusal=error,
            conflict=stale.conflict_panel(mine=body),
        )
    except AgentdocsError as error:
        # Read again: a lock taken meanwhile names its holder beside the editor.
        return _edit_page(request, access, _current(access, path), form, refusal=error)
    return _after_save(
        request,
        access,
        saved,
        before=document,
        base_version=base_version,
        body=body,
        unchanged=f"No changes: {path} is still version {saved.version}.",
        changed=f"Saved {path} as version {saved.version}.",
    )


def _after_save(
    request: HttpRequest,
    access: ProjectAccess,
    saved: Document,
    *,
    before: Document,
    base_version: int,
    body: str,
    unchanged: str,
    changed: str,
) -> HttpResponse:
    """Where a save from the edit page or the three-way page goes: the merged page when
    it was merged onto a version saved since ``base_version``, else the document, saying
    ``unchanged`` when no version was written (the text was the same) or ``changed``."""
    if _was_merged(saved, base_version):
        story = _merge_story(
            saved, base_version=base_version, theirs_version=saved.version - 1, body=body
        )
        return _merged_page(request, access, saved, story)
    if saved.version == before.version:
        messages.info(request, unchanged)
    else:
        messages.success(request, changed)
    return redirect(_document_url("document", access, saved.path))


def _edit_page(
    request: HttpRequest,
    access: ProjectAccess,
    document: Document,
    form: DocumentEditForm,
    *,
    refusal: AgentdocsError | None = None,
    conflict: dict | None = None,
) -> HttpResponse:
    body = form["body"].value() or ""
    context = {
        "access": access,
        "project": access.project,
        "document": document,
        "form": form,
        "conflict": conflict,
        "measure": measure(body),
        "preview_html": render_markdown(body),
        "reach": _reach(access, document.path),
        "shadowed": _shadowed_tenant_document(access, document.path),
        "offer_acknowledgement": _offers_acknowledgement(access, form, refusal),
        "offer_hidden_acknowledgement": hidden_characters.offers_acknowledgement(
            tenant_id=access.tenant.pk, form=form, refusal=refusal
        ),
        **_lock_context(access, document),
    }
    # The conflict panel explains a stale save in its own words, with the diff.
    return form_page(
        request,
        "agentdocs/document_edit.html",
        context,
        form=form,
        refusal=refusal,
        beside_form=conflict is None,
    )


@dataclass(frozen=True)
class MergeStory:
    """A merge as a page tells it: the merge of the user's text (based on
    `base_version`) with `theirs`, the history row of the version it met."""

    result: MergeResult
    base_version: int
    theirs: DocumentVersion

    @property
    def their_author(self) -> str:
        user = self.theirs.history_user
        return user.get_username() if user else "someone"

    def segments(self, form: MergeResolutionForm | None = None) -> list[dict]:
        """The merged text in order: clean stretches with where they came from, and
        each conflict with its three sides (and, given the form, its fields)."""
        segments: list[dict] = []
        index = 0
        for piece in self.result.pieces:
            if piece.conflict is None:
                lines = piece.text.count("\n") + (0 if piece.text.endswith("\n") else 1)
                segments.append({"origin": piece.origin, "text": piece.text, "lines": lines})
                continue
            segment = {"origin": "conflict", "conflict": piece.conflict, "number": index + 1}
            if form is not None:
                segment["choice"] = form[f"choice_{index}"]
                segment["text"] = form[f"text_{index}"]
            segments.append(segment)
            index += 1
        return segments


def _merge_story(
    document: Document, *, base_version: int, theirs_version: int, body: str
) -> MergeStory:
    base = document_selectors.document_version(document=document, version=base_version)
    theirs = document_selectors.document_version(document=document, version=theirs_version)
    return MergeStory(
        result=three_way(base.body, theirs.body, body), base_version=base_version, theirs=theirs
    )


def _was_merged(saved: Document, base_version: int) -> bool:
    """Whether this save wrote a version merged onto one saved since `base_version`."""
    return saved.merged_with is not None and base_version < saved.merged_with == saved.version - 1


def _merged_page(
    request: HttpRequest, access: ProjectAccess, saved: Document, story: MergeStory
) -> HttpResponse:
    """What a stale save that merged cleanly answers: saved, with whom, and who wrote what."""
    return render(
        request,
        "agentdocs/document_merged.html",
        {
            "access": access,
            "project": access.project,
            "document": saved,
            "story": story,
            "segments": story.segments(),
            "origins": story.result.origins(),
        },
    )


def _conflict_page(
    request: HttpRequest,
    access: ProjectAccess,
    path: str,
    error: MergeConflict,
    *,
    body: str,
    reason: str,
    acknowledge_secret: str,
    acknowledge_hidden: str,
) -> HttpResponse:
    """The three-way page for a save whose change overlaps the current version's: the
    user's text, reason and base version ride along, so the choices are saved as theirs."""
    document = _current(access, path)
    theirs = document_selectors.document_version(document=document, version=error.current_version)
    story = MergeStory(result=error.result, base_version=error.base_version, theirs=theirs)
    form = MergeResolutionForm(
        initial={
            "body": body,
            "base_version": error.base_version,
            "theirs_version": error.current_version,
            "reason": reason,
            "acknowledge_secret": acknowledge_secret,
            "acknowledge_hidden": acknowledge_hidden,
        },
        conflicts=len(error.result.conflicts),
    )
    for index, conflict in enumerate(error.result.conflicts):
        # "Write it myself" starts from both sides, theirs first.
        both = (*conflict.theirs.lines, *conflict.yours.lines)
        form.fields[f"text_{index}"].initial = "".join(line + "\n" for line in both)
    return _resolve_page(request, access, document, form, story, refusal=error)


@member_page
@require_POST
def document_resolve(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    """Save the three-way page's choices: their change, yours, both or a text of one's
    own per conflict, merged again onto whatever was saved meanwhile."""
    access = permissions.project_access(request.user, tenant, project)
    document = _current(access, path)
    access.require_write(path)
    # First the text and its two versions: they say how many conflicts there are.
    given = MergeResolutionForm(request.POST)
    given.is_valid()
    if not {"body", "base_version", "theirs_version"} <= set(given.cleaned_data):
        raise InvalidInput("The merge form is incomplete; open the editor again.", field="body")
    story = _merge_story(
        document,
        base_version=given.cleaned_data["base_version"],
        theirs_version=given.cleaned_data["theirs_version"],
        body=given.cleaned_data["body"],
    )
    form = MergeResolutionForm(request.POST, conflicts=len(story.result.conflicts))
    if not form.is_valid():
        return _resolve_page(request, access, document, form, story)
    choices = form.resolutions()
    dropped = story.result.discarded(choices)
    if dropped and not form.cleaned_data["discard_theirs"]:
        numbers = ", ".join(str(index + 1) for index in dropped)
        form.add_error(
            "discard_theirs",
            f"Your choice for conflict {numbers} drops {story.their_author}'s change. "
            f"Tick “I am discarding {story.their_author}'s change” to save it so, or "
            "choose their change or both.",
        )
        return _resolve_page(request, access, document, form, story)
    resolved = story.result.resolve(choices)
    theirs_version = form.cleaned_data["theirs_version"]
    reason = form.cleaned_data["reason"]
    acknowledge_secret = form.cleaned_data["acknowledge_secret"]
    acknowledge_hidden = form.cleaned_data["acknowledge_hidden"]
    try:
        saved = document_service.document_write(
            document=document,
            body=resolved,
            base_version=theirs_version,
            user=access.user,
            reason=reason,
            acknowledge_secret=acknowledge_secret,
            acknowledge_hidden=acknowledge_hidden,
            merge=True,
        )
    except MergeConflict as error:
        # Saved again meanwhile, over the same lines: resolve against that version.
        return _conflict_page(
            request,
            access,
            path,
            error,
            body=resolved,
            reason=reason,
            acknowledge_secret=acknowledge_secret,
            acknowledge_hidden=acknowledge_hidden,
        )
    except VersionConflict as error:
        current = _current(access, path)
        edit_form = DocumentEditForm(
            {
                "body": resolved,
                "base_version": current.version,
                "reason": reason,
                "acknowledge_secret": acknowledge_secret,
                "acknowledge_hidden": acknowledge_hidden,
            }
        )
        edit_form.is_valid()
        conflict = StaleSave(document=current, form=edit_form).conflict_panel(mine=resolved)
        return _edit_page(request, access, current, edit_form, refusal=error, conflict=conflict)
    except AgentdocsError as error:
        return _resolve_page(request, access, _current(access, path), form, story, refusal=error)
    return _after_save(
        request,
        access,
        saved,
        before=document,
        base_version=theirs_version,
        body=resolved,
        unchanged=f"No changes: {path} version {saved.version} already says that.",
        changed=f"Saved {path} as version {saved.version} with your choices.",
    )


def _resolve_page(
    request: HttpRequest,
    access: ProjectAccess,
    document: Document,
    form: MergeResolutionForm,
    story: MergeStory,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    context = {
        "access": access,
        "project": access.project,
        "document": document,
        "form": form,
        "story": story,
        "segments": story.segments(form),
        "conflict_count": len(story.result.conflicts),
        "offer_acknowledgement": _offers_acknowledgement(access, form, refusal),
        "offer_hidden_acknowledgement": hidden_characters.offers_acknowledgement(
            tenant_id=access.tenant.pk, form=form, refusal=refusal
        ),
    }
    # A merge conflict is what the page is about: it says so in its own words.
    return form_page(
        request,
        "agentdocs/document_resolve.html",
        context,
        form=form,
        refusal=refusal,
        beside_form=not isinstance(refusal, MergeConflict),
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
    too_large = size.bytes > document_service.MAX_BODY_BYTES
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


def _history_rows(document: Document, page: int) -> tuple[list, bool]:
    """One page of versions, newest first, each with its size change against the one before."""
    start = (page - 1) * HISTORY_PAGE_SIZE
    # One row more than shown: the oldest row on the page needs its predecessor's size.
    history = LateRows(document_selectors.document_history(document=document))
    records = list(history[start : start + HISTORY_PAGE_SIZE + 1])
    has_older = len(records) > HISTORY_PAGE_SIZE
    shown = records[:HISTORY_PAGE_SIZE]
    reverted_to = _reverted_to(document, shown)
    rows = []
    for index, record in enumerate(shown):
        previous = records[index + 1] if index + 1 < len(records) else None
        rows.append(
            {
                "record": record,
                "size_delta": record.size - previous.size if previous else record.size,
                "is_current": record.version == document.version,
                "reverted_to": reverted_to.get(record.version),
                # Reverting to the text the document already has would change nothing.
                "may_revert": record.change_type != ChangeType.DELETED
                and (document.is_deleted or record.sha256 != document.sha256),
            }
        )
    return rows, has_older


def _reverted_to(document: Document, records: list) -> dict[int, int]:
    """version → the version whose text a revert (or restore) brought back: the newest
    earlier version with the same sha256. One query, and only when a page shows one."""
    reverts = [r for r in records if r.change_type in (ChangeType.REVERTED, ChangeType.RESTORED)]
    if not reverts:
        return {}
    candidates = document_selectors.document_versions_with_text(
        document=document,
        sha256s={r.sha256 for r in reverts},
        before_version=max(r.version for r in reverts),
    )
    found = {}
    for record in reverts:
        match = next(
            (v for v, sha in candidates if v < record.version and sha == record.sha256), None
        )
        if match is not None:
            found[record.version] = match
    return found


@member_page
def document_history(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    document = _current(access, path)
    page_param = request.GET.get("page", "1")
    page = positive_int(page_param) or 1
    rows, has_older = _history_rows(document, page)
    finding = _introductions(document, request.GET.get("q", ""), request.GET.get("before", ""))
    return render(
        request,
        "agentdocs/document_history.html",
        {
            "access": access,
            "project": access.project,
            "document": document,
            "rows": rows,
            "page": page,
            "has_older": has_older,
            "may_write": access.may_write(path),
            "default_from": max(document.version - 1, 1),
            "default_to": document.version,
            **finding,
        },
        status=400 if finding["phrase_error"] else 200,
    )


def _introductions(document: Document, phrase: str, before: str = "") -> dict[str, Any]:
    """`?q=` on the history page: the versions that introduced the phrase, newest first
    (the last of them, when the search reached version 1, is where it first appeared).
    Like the API, one request searches a bounded number of versions, older than
    `?before=` when given, and the page links to the next older ones."""
    found: dict[str, Any] = {
        "phrase": phrase.strip(),
        "introductions": None,
        "phrase_error": "",
        "scan": None,
        "scan_before": None,
    }
    if not found["phrase"]:
        return found
    try:
        phrase = validate_search_query(phrase)
    except InvalidInput as error:
        return {**found, "phrase_error": error.detail}
    before_version = positive_int(before) if before else None
    if before and before_version is None:
        return {**found, "phrase_error": "`before` must be a version number."}
    scan = document_selectors.document_history_introducing(
        document=document, phrase=phrase, before=before_version
    )
    introductions = list(scan.records[: HISTORY_PAGE_SIZE + 1])
    return {
        **found,
        "introductions": introductions[:HISTORY_PAGE_SIZE],
        "more_introductions": len(introductions) > HISTORY_PAGE_SIZE,
        "scan": scan,
        "scan_before": before_version,
    }


def _version_param(params: QueryDict, name: str, default: int) -> int:
    value = params.get(name, "")
    if not value:
        return default
    version = positive_int(value)
    if version is None:
        raise NotFound(f"`{name}` must be a version number.", field=name)
    return version


def _diff_pair(request: HttpRequest, document: Document) -> tuple[Any, Any]:
    """The two versions `?from=` and `?to=` name: by default the last two."""
    to_version = _version_param(request.GET, "to", document.version)
    from_version = _version_param(request.GET, "from", max(to_version - 1, 1))
    old = document_selectors.document_version(document=document, version=from_version)
    new = document_selectors.document_version(document=document, version=to_version)
    return old, new


@member_page
def document_diff(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    document = _current(access, path)
    old, new = _diff_pair(request, document)
    return render(
        request,
        "agentdocs/document_diff.html",
        {
            "access": access,
            "project": access.project,
            "document": document,
            "old": old,
            "new": new,
            "old_label": f"Version {old.version}",
            "new_label": f"Version {new.version}",
            "diff": side_by_side(old.body, new.body),
        },
    )


@member_page
def document_diff_download(
    request: HttpRequest, tenant: str, project: str, path: str
) -> HttpResponse:
    """The whole unified diff of the diff page's two versions, as a file: the diff and
    revert pages show a bounded diff and send a reader who wants all of it here."""
    access = permissions.project_access(request.user, tenant, project)
    document = _current(access, path)
    old, new = _diff_pair(request, document)
    text = whole_unified_diff(
        old.body,
        new.body,
        old_label=f"{document.path}@{old.version}",
        new_label=f"{document.path}@{new.version}",
    )
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    filename = f"{document.path.replace('/', '_')}.v{old.version}-v{new.version}.diff"
    response["Content-Disposition"] = content_disposition_header(True, filename) or "attachment"
    return response


@member_page
@require_http_methods(["GET", "POST"])
def document_revert(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    document = _current(access, path)
    access.require_write(path)
    params = request.POST if request.method == "POST" else request.GET
    version = _version_param(params, "version", 0)
    if not version:
        raise NotFound("Say which version to revert to.", field="version")
    target = document_selectors.document_version(document=document, version=version)
    if request.method == "POST":
        return _save_revert(request, access, document, target)
    form = RevertForm(
        initial={
            "version": version,
            "base_version": document.version,
            "reason": f"Revert to version {version}",
        }
    )
    return _revert_page(request, access, document, target, form)


def _save_revert(
    request: HttpRequest, access: ProjectAccess, document: Document, target: DocumentVersion
) -> HttpResponse:
    form = RevertForm(request.POST)
    if not form.is_valid():
        return _revert_page(request, access, document, target, form)
    path, version = document.path, target.version
    try:
        reverted = document_service.document_revert(
            document=document,
            version=version,
            base_version=form.cleaned_data["base_version"],
            user=access.user,
            reason=form.cleaned_data["reason"],
            acknowledge_secret=form.cleaned_data["acknowledge_secret"],
            acknowledge_hidden=form.cleaned_data["acknowledge_hidden"],
        )
    except VersionConflict as error:
        stale = _stale_save(request, access, path, RevertForm)
        stale.form.add_error(None, f"{error.detail} The comparison below is now up to date.")
        return _revert_page(
            request, access, stale.document, target, stale.form, refusal=error, beside_form=False
        )
    except AgentdocsError as error:
        return _revert_page(request, access, document, target, form, refusal=error)
    if reverted.version == document.version:
        messages.info(
            request,
            f"{path} already has the text of version {version}; "
            "nothing changed and no version was written.",
        )
    else:
        messages.success(
            request,
            f"Reverted {path} to the text of version {version}: "
            f"it is now version {reverted.version}.",
        )
    return redirect(_document_url("document-history", access, path))


def _revert_page(
    request: HttpRequest,
    access: ProjectAccess,
    document: Document,
    target: DocumentVersion,
    form: RevertForm,
    *,
    refusal: AgentdocsError | None = None,
    beside_form: bool = True,
) -> HttpResponse:
    current = "" if document.is_deleted else document.body
    context = {
        "access": access,
        "project": access.project,
        "document": document,
        "target": target,
        "form": form,
        "old_label": "Current text" if not document.is_deleted else "Deleted",
        "new_label": f"Version {target.version}, after the revert",
        "diff": side_by_side(current, target.body),
        "unchanged": not document.is_deleted and document.body == target.body,
        "offer_acknowledgement": _offers_acknowledgement(access, form, refusal),
        "offer_hidden_acknowledgement": hidden_characters.offers_acknowledgement(
            tenant_id=access.tenant.pk, form=form, refusal=refusal
        ),
        **_lock_context(access, document),
    }
    return form_page(
        request,
        "agentdocs/document_revert.html",
        context,
        form=form,
        refusal=refusal,
        beside_form=beside_form,
    )


@member_page
@require_http_methods(["GET", "POST"])
def document_delete(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    document = document_selectors.document_get(project=access.project, path=path)
    access.require_write(path)
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
        **_lock_context(access, document),
    }
    return form_page(request, "agentdocs/document_delete.html", context, form=form, refusal=refusal)


@member_page
@require_POST
def document_lock(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    document = document_selectors.document_get(project=access.project, path=path)
    access.require_write(path)
    form = LockForm(request.POST)
    if not form.is_valid():
        raise NotFound("Unknown lock action.", field="action")
    force = form.cleaned_data["force"]
    if force:
        access.require_admin()
    try:
        if form.cleaned_data["action"] == "lock":
            document = document_service.document_lock(
                document=document, user=access.user, force=force
            )
            messages.success(
                request,
                f"You hold the edit lock on {path} until "
                f"{document.lock_expires_at:%H:%M} UTC; others cannot save until then.",
            )
        else:
            document_service.document_unlock(document=document, user=access.user, force=force)
            messages.success(request, f"The edit lock on {path} is released.")
    except Locked as error:
        messages.error(request, error.detail)
    return redirect(_document_url("document-edit", access, path))

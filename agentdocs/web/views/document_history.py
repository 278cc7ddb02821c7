"""A document's history pages: its versions (with the versions that introduced a
phrase), the diff of two versions (on the page and as a file) and the revert to one.

Like every document page, they resolve the project through `agentdocs.permissions`
and change documents only through `agentdocs.services.documents`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods

from agentdocs import permissions
from agentdocs.core.errors import (
    AgentdocsError,
    InvalidInput,
    NotFound,
    VersionConflict,
)
from agentdocs.core.numbers import positive_int
from agentdocs.models import ChangeType, Document
from agentdocs.paging import LateRows
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import labels as label_selectors
from agentdocs.selectors.search import validate_search_query
from agentdocs.services import documents as document_service
from agentdocs.web import hidden_characters
from agentdocs.web.diffview import side_by_side, whole_unified_diff
from agentdocs.web.document_pages import (
    DocumentVersion,
    document_url,
    lock_context,
    offers_acknowledgement,
    stale_save,
    version_param,
)
from agentdocs.web.forms.document_history import RevertForm
from agentdocs.web.pages import form_page, member_page

HISTORY_PAGE_SIZE = 50


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
    document = permissions.document_for(access, path, include_deleted=True)
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
            "labels": label_selectors.label_list(document=document),
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


def _diff_pair(request: HttpRequest, document: Document) -> tuple[Any, Any]:
    """The two versions `?from=` and `?to=` name: by default the last two."""
    to_version = version_param(request.GET, "to", document.version)
    from_version = version_param(request.GET, "from", max(to_version - 1, 1))
    old = document_selectors.document_version(document=document, version=from_version)
    new = document_selectors.document_version(document=document, version=to_version)
    return old, new


@member_page
def document_diff(request: HttpRequest, tenant: str, project: str, path: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    document = permissions.document_for(access, path, include_deleted=True)
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
    document = permissions.document_for(access, path, include_deleted=True)
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
    document = permissions.document_for(access, path, intent="write", include_deleted=True)
    params = request.POST if request.method == "POST" else request.GET
    version = version_param(params, "version", 0)
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
        stale = stale_save(request, access, path, RevertForm)
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
    return redirect(document_url("document-history", access, path))


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
        "offer_acknowledgement": offers_acknowledgement(access, form, refusal),
        "offer_hidden_acknowledgement": hidden_characters.offers_acknowledgement(
            tenant_id=access.tenant.pk, form=form, refusal=refusal
        ),
        **lock_context(access, document),
    }
    return form_page(
        request,
        "agentdocs/document_revert.html",
        context,
        form=form,
        refusal=refusal,
        beside_form=beside_form,
    )

"""The one write path for documents.

Nothing else saves a `Document`: the API, the pages, the Django admin, the
management commands and the test fixtures all call these functions, and a body is
replaced by one of them only, `document_write`. Each write is optimistic (it names
the version it was based on), respects edit locks (`services.document_locks`),
refuses secret-like content (the body checks, `validation.documents`), and
leaves a history row with its writer, reason and change type. Nothing is ever lost:
delete and revert are versions too.

A writer may save a text the secret check refused by acknowledging it
(``acknowledge_secret``: a false positive, or a test value) with a reason,
unless the tenant set `security.secretOverride: off`; the history row keeps
the acknowledgement. It overrides the secret check only, nothing else.

A text holding characters a reader cannot see but a model reads (bidi controls,
zero-width or tag characters: `agentdocs.core.hidden_characters`) is refused the
same way (422 `hidden_characters`, naming the line, the column and each code
point); ``acknowledge_hidden="intended"`` with a reason saves it anyway, unless the
tenant set `security.hiddenOverride: off`, and the history row keeps that too.

A write based on a stale version is refused, unless it asks to be merged
(``merge``): then its change is merged, line by line, onto the current version
(`agentdocs.core.merge.three_way` of its base version, the current text and its
text) and saved as a new version that records ``merged_with``; edits of the same
lines refuse the whole write with the conflicts (`MergeConflict`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from agentdocs.core.errors import (
    AlreadyExists,
    InvalidInput,
    MergeConflict,
    NotFound,
    VersionConflict,
)
from agentdocs.core.merge import MergeResult, three_way
from agentdocs.core.paths import validate_new_path
from agentdocs.models import ChangeType, Document, Project
from agentdocs.models.history import mark_change
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import policy as policy_selectors
from agentdocs.services import document_locks, events, render_cache
from agentdocs.services import review as review_service
from agentdocs.validation import documents as document_checks
from agentdocs.validation.documents import validate_reason


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_base(current: Document, base_version: int, *, merge: bool = False) -> bool:
    """Refuse a write based on a stale version; with ``merge``, return True instead
    (the write is to be merged), unless the document was deleted meanwhile."""
    if not isinstance(base_version, int) or isinstance(base_version, bool) or base_version < 1:
        raise InvalidInput("The base version must be a positive integer.", field="version")
    if current.version == base_version:
        return False
    if not merge or current.is_deleted:
        raise VersionConflict(base_version=base_version, current_version=current.version)
    return True


def _not_in_history(current: Document, base_version: int) -> VersionConflict:
    return VersionConflict(
        base_version=base_version,
        current_version=current.version,
        detail=f"Version {base_version} is not in the document's history (it is at "
        f"version {current.version}), so there is no base to merge your change with. "
        "Nothing was written: fetch the current version and apply your change to it.",
    )


def _base_text(current: Document, base_version: int) -> str:
    """The text of the version a stale write was based on: the base of its merge."""
    try:
        return document_selectors.document_version(document=current, version=base_version).body
    except NotFound:
        raise _not_in_history(current, base_version) from None


@dataclass(frozen=True)
class Merge:
    """What a write merged: the writer's text, based on ``base_version``, three-way
    with the version then current (``theirs``), line by line."""

    result: MergeResult
    base_version: int
    theirs: document_selectors.MergedOnto


@dataclass(frozen=True)
class Written:
    """What `document_write` did: the document as saved (the same version when the text
    was already its text) and, for a stale write, the merge it made."""

    document: Document
    merge: Merge | None = None


def _merge(current: Document, *, base_version: int, body: str) -> Merge:
    """``body`` (based on ``base_version``) merged onto the current text, with the two
    history rows it needs read in one query; raises MergeConflict where both changed
    the same lines."""
    rows = document_selectors.document_versions(
        document=current, versions=(base_version, current.version)
    )
    if base_version not in rows:
        raise _not_in_history(current, base_version)
    result = three_way(rows[base_version].body, current.body, body)
    if not result.clean:
        raise MergeConflict(
            result=result, base_version=base_version, current_version=current.version
        )
    theirs = rows.get(current.version)
    met = (
        document_selectors.merged_onto(theirs)
        if theirs is not None
        else document_selectors.MergedOnto(
            version=current.version, author="someone", saved_at=current.updated_at, reason=""
        )
    )
    return Merge(result=result, base_version=base_version, theirs=met)


def _save_version(
    document: Document,
    *,
    body: str,
    user: User,
    reason: str,
    change_type: ChangeType,
    event_type: str,
    is_deleted: bool = False,
    secret_acknowledgement: str = "",
    hidden_acknowledgement: str = "",
    restored_from: int | None = None,
    merged_with: int | None = None,
    review_bypassed: bool = False,
    change_request_id: int | None = None,
) -> Document:
    document.body = body
    document.sha256 = sha256_of(body)
    document.size = len(body.encode("utf-8"))
    document.version = (document.version or 0) + 1
    document.is_deleted = is_deleted
    document.secret_acknowledgement = secret_acknowledgement
    document.hidden_acknowledgement = hidden_acknowledgement
    document.merged_with = merged_with

    document.review_bypassed = review_bypassed
    document.change_request_id = change_request_id
    document.updated_by = user
    document.updated_at = timezone.now()
    mark_change(document, user=user, reason=reason, change_type=change_type)
    document.save()
    render_cache.render_inputs_changed(tenant_id=document.project.tenant_id)
    _emit(document, event_type=event_type, user=user, reason=reason, restored_from=restored_from)
    return document


def _emit(
    document: Document, *, event_type: str, user: User, reason: str, restored_from: int | None
) -> None:
    """The version's event, in the write's transaction (webhooks and the activity feed)."""
    project = document.project
    tenant = project.tenant
    data = events.document_data(
        path=document.path,
        version=document.version,
        sha256=document.sha256,
        actor=user,
        reason=reason,
    )
    if restored_from is not None:
        data["restored_from"] = restored_from
    events.emit(
        type=event_type,
        tenant=tenant,
        project=project,
        actor=user,
        target=document.path,
        reason=reason,
        version=document.version,
        data=data,
    )


def document_create(
    *,
    project: Project,
    path: str,
    body: str,
    user: User,
    reason: str = "",
    acknowledge_secret: str = "",
    acknowledge_hidden: str = "",
    bypass_review: bool = False,
) -> Document:
    """Create a document; a deleted one at the same path comes back as its next version."""
    validate_new_path(path)
    reason = validate_reason(reason)
    bypassed = review_service.review_gate(
        project=project, path=path, bypass_review=bypass_review, reason=reason
    )
    checked = document_checks.checked_body(
        body,
        acknowledge_secret=acknowledge_secret,
        acknowledge_hidden=acknowledge_hidden,
        reason=reason,
        overridable=policy_selectors.overrides(lambda: project.tenant_id),
    )
    try:
        with transaction.atomic():
            existing = (
                Document.objects.select_for_update().filter(project=project, path=path).first()
            )
            if existing is not None and not existing.is_deleted:
                raise AlreadyExists(
                    f"A document already exists at {path!r} (version {existing.version}); "
                    "write to it with its version instead.",
                    field="path",
                    current_version=existing.version,
                )
            document = existing or Document(project=project, path=path, version=0)
            return _save_version(
                document,
                body=checked.text,
                user=user,
                reason=reason,
                change_type=ChangeType.CREATED,
                event_type=events.DOCUMENT_CREATED,
                secret_acknowledgement=checked.secret_acknowledgement,
                hidden_acknowledgement=checked.hidden_acknowledgement,
                review_bypassed=bypassed,
            )
    except IntegrityError:
        # Another request created the same path between our read and our insert.
        raise AlreadyExists(f"A document already exists at {path!r}.", field="path") from None


def document_write(
    *,
    document: Document,
    body: str,
    base_version: int,
    user: User,
    reason: str = "",
    change_type: ChangeType = ChangeType.WRITTEN,
    acknowledge_secret: str = "",
    acknowledge_hidden: str = "",
    merge: bool = False,
    bypass_review: bool = False,
    change_request_id: int | None = None,
    resolves_merge_with: int | None = None,
) -> Written:
    """Replace the body; what it did (`Written`: the document as saved, and the merge
    it made). Writing the identical body creates no new version.

    With ``merge``, a stale ``base_version`` is no refusal: the change is merged onto
    the current version, the new version's ``merged_with`` names that version, and the
    answer holds the merge (`Merge`: its pieces, and whom it met).

    ``resolves_merge_with``: the body is the writer's resolution of a three-way merge
    with that version (the three-way page, which saves it based on that version):
    the new version records it as ``merged_with``, unless it is merged again onto a
    version saved meanwhile, which it then names.

    ``change_request_id``: the write merges that change request (`services.changes`),
    whose reviews stand in for the review gate."""
    reason = validate_reason(reason)
    if resolves_merge_with is not None and (
        not isinstance(resolves_merge_with, int)
        or isinstance(resolves_merge_with, bool)
        or not 1 <= resolves_merge_with <= base_version
    ):
        raise InvalidInput(
            "The version a merge was resolved with is a version up to the base version.",
            field="theirs_version",
        )
    overridable = policy_selectors.overrides(lambda: document.project.tenant_id)
    checked = document_checks.checked_body(
        body,
        acknowledge_secret=acknowledge_secret,
        acknowledge_hidden=acknowledge_hidden,
        reason=reason,
        overridable=overridable,
        unneeded="keep" if merge else "refuse",
    )
    body = checked.text
    with transaction.atomic():
        current = document_locks.lock_for_write(document)
        must_merge = _check_base(current, base_version, merge=merge)
        document_locks.require_not_deleted(current)
        document_locks.require_unlocked(current, user)
        merged_with = resolves_merge_with
        made = None
        if must_merge:
            made = _merge(current, base_version=base_version, body=body)
            body = made.result.text
            merged_with = current.version
        if merge and (must_merge or any(checked[1:])):
            # The text to store, checked as any: a secret may span lines from both
            # sides, the current text may hold hidden characters, and what the writer
            # acknowledged must be there.
            checked = document_checks.checked_body(
                body,
                acknowledge_secret=checked.secret_acknowledgement,
                acknowledge_hidden=checked.hidden_acknowledgement,
                reason=reason,
                overridable=overridable,
                unneeded="refuse" if not must_merge else "drop",
            )
        if current.body == body:
            return Written(document=current)
        bypassed = change_request_id is None and review_service.review_gate(
            project=current.project,
            path=current.path,
            bypass_review=bypass_review,
            reason=reason,
        )
        saved = _save_version(
            current,
            body=body,
            user=user,
            reason=reason,
            change_type=change_type,
            event_type=events.DOCUMENT_UPDATED,
            secret_acknowledgement=checked.secret_acknowledgement,
            hidden_acknowledgement=checked.hidden_acknowledgement,
            merged_with=merged_with,
            review_bypassed=bypassed,
            change_request_id=change_request_id,
        )
        return Written(document=saved, merge=made)


MAX_COUNTED_MATCHES = 100


def _occurrences(text: str, old: str, *, at_most: int = MAX_COUNTED_MATCHES) -> int:
    """How often ``old`` occurs in ``text``, overlapping ones included ("aba" twice in
    "ababa"): an edit must name one place, and overlapping matches name several."""
    count, start = 0, text.find(old)
    while start != -1 and count < at_most:
        count, start = count + 1, text.find(old, start + 1)
    return count


def document_edit(
    *,
    document: Document,
    old: str,
    new: str,
    base_version: int,
    user: User,
    reason: str = "",
    acknowledge_secret: str = "",
    acknowledge_hidden: str = "",
    merge: bool = False,
    bypass_review: bool = False,
) -> Document:
    """Replace one exact, unique occurrence of ``old`` with ``new``, as an agent's edit tool.

    With ``merge`` and a stale ``base_version``, ``old`` is looked for in the base
    version's text and the edited text is merged onto the current one (`document_write`).
    """
    if not isinstance(old, str) or old == "":
        raise InvalidInput("`old` must be a non-empty string to find in the body.", field="old")
    if not isinstance(new, str):
        raise InvalidInput("`new` must be a string.", field="new")
    with transaction.atomic():
        current = document_locks.lock_for_write(document)
        must_merge = _check_base(current, base_version, merge=merge)
        document_locks.require_not_deleted(current)
        document_locks.require_unlocked(current, user)
        text = _base_text(current, base_version) if must_merge else current.body
        matches = _occurrences(text, old)
        if matches == 0:
            raise InvalidInput(
                "`old` does not occur in the document; nothing changed.", field="old"
            )
        if matches > 1:
            raise InvalidInput(
                f"`old` occurs {'at least ' if matches == MAX_COUNTED_MATCHES else ''}"
                f"{matches} times in the document; include more surrounding "
                "text so it matches exactly once.",
                field="old",
            )
        body = text.replace(old, new, 1)
        return document_write(
            document=current,
            body=body,
            base_version=base_version,
            user=user,
            reason=reason,
            change_type=ChangeType.EDITED,
            acknowledge_secret=acknowledge_secret,
            acknowledge_hidden=acknowledge_hidden,
            merge=merge,
            bypass_review=bypass_review,
        ).document


def document_delete(
    *,
    document: Document,
    base_version: int,
    user: User,
    reason: str = "",
    bypass_review: bool = False,
) -> Document:
    """Delete as a new version: the row and every earlier version stay restorable."""
    reason = validate_reason(reason)
    with transaction.atomic():
        current = document_locks.lock_for_write(document)
        _check_base(current, base_version)
        document_locks.require_not_deleted(current)
        document_locks.require_unlocked(current, user)
        bypassed = review_service.review_gate(
            project=current.project,
            path=current.path,
            bypass_review=bypass_review,
            reason=reason,
        )
        current.lock_holder = None
        current.lock_expires_at = None
        return _save_version(
            current,
            body=current.body,
            user=user,
            reason=reason,
            change_type=ChangeType.DELETED,
            event_type=events.DOCUMENT_DELETED,
            is_deleted=True,
            review_bypassed=bypassed,
        )


def document_revert(
    *,
    document: Document,
    version: int,
    user: User,
    reason: str = "",
    base_version: int | None = None,
    acknowledge_secret: str = "",
    acknowledge_hidden: str = "",
    bypass_review: bool = False,
) -> Document:
    """Make an earlier version's body current again, as a new version.

    The earlier text passes the secret check like any other write: a version saved
    with an acknowledged secret (or hidden characters) comes back only with a new
    acknowledgement."""
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput("The version to revert to must be a positive integer.", field="version")
    reason = validate_reason(reason)
    document_checks.validate_secret_acknowledgement(acknowledge_secret)
    document_checks.validate_hidden_acknowledgement(acknowledge_hidden)
    with transaction.atomic():
        current = document_locks.lock_for_write(document)
        if base_version is not None:
            _check_base(current, base_version)
        document_locks.require_unlocked(current, user)
        target = document_selectors.document_version(document=current, version=version)
        if target.is_deleted:
            raise InvalidInput(
                f"Version {version} is a deletion; revert to a version before it.",
                field="version",
            )
        if not current.is_deleted and current.body == target.body:
            return current
        checked = document_checks.checked_body(
            target.body,
            acknowledge_secret=acknowledge_secret,
            acknowledge_hidden=acknowledge_hidden,
            reason=reason,
            overridable=policy_selectors.overrides(lambda: current.project.tenant_id),
        )
        change_type = ChangeType.RESTORED if current.is_deleted else ChangeType.REVERTED
        bypassed = review_service.review_gate(
            project=current.project,
            path=current.path,
            bypass_review=bypass_review,
            reason=reason,
        )
        return _save_version(
            current,
            body=checked.text,
            user=user,
            reason=reason or f"Revert to version {version}",
            change_type=change_type,
            event_type=events.DOCUMENT_RESTORED,
            secret_acknowledgement=checked.secret_acknowledgement,
            hidden_acknowledgement=checked.hidden_acknowledgement,
            restored_from=version,
            review_bypassed=bypassed,
        )

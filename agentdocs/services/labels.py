"""Labels of document versions: move one to a version, remove one. Proposing the move
or the removal for review when the document's path is under `review.required` is
`services.label_review`.

A move is a history row of the label (who, why, which version; in the tenant's hash
chain), a `document.label_moved` event, and a change of what renders read, so the
render cache's generation is replaced. A removal is `document.label_removed`. Who may
move or remove which label is decided before, and the label's name checked there,
once: `permissions.movable_label_for` (a merged change request's label was checked
when it was proposed).

A document carries at most `AGENTDOCS_MAX_LABELS_PER_DOCUMENT` labels: a new one past
it is 409 `too_many_labels`, counted under the document's row lock so that two new
labels at once cannot both pass (moving an existing label adds none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from agentdocs.core.errors import InvalidInput, NotFound, TooManyLabels
from agentdocs.models import ChangeType, Document, DocumentLabel
from agentdocs.models.history import mark_change
from agentdocs.selectors import labels as label_selectors
from agentdocs.services import events, render_cache

MAX_REASON = 500
LABEL_MOVED = "document.label_moved"
LABEL_REMOVED = "document.label_removed"


@dataclass(frozen=True)
class LabelMoved:
    """What `label_move` did: the label as it is now, and whether it was new."""

    label: DocumentLabel
    created: bool


def _reason(reason: object) -> str:
    if reason is None:
        return ""
    if not isinstance(reason, str):
        raise InvalidInput("The reason must be a string.", field="reason")
    if len(reason) > MAX_REASON:
        raise InvalidInput(f"The reason is longer than {MAX_REASON} characters.", field="reason")
    return reason.strip()


def _emit(
    document: Document,
    *,
    type: str,
    name: str,
    version: int | None,
    previous: int | None,
    user: User,
    reason: str,
) -> None:
    data: events.LabelEventData = {
        "path": document.path,
        "label": name,
        "version": version,
        "previous_version": previous,
        "actor": user.get_username(),
        "reason": reason,
    }
    events.emit(
        type=type,
        tenant=document.project.tenant,
        project=document.project,
        actor=user,
        target=f"{document.path}@{name}",
        reason=reason,
        version=version,
        data=data,
    )


def _with_project(document: Document, *, lock: bool = False) -> Document:
    """The document with its project and tenant; its row locked (in the caller's
    transaction) with ``lock``: what a new label is counted under."""
    rows = Document.objects.select_related("project__tenant")
    if lock:
        rows = rows.select_for_update(of=("self",))
    return rows.get(pk=document.pk)


def require_room(labels: QuerySet[Any], *, what: str) -> None:
    """TooManyLabels when the labelled row (locked by the caller) carries as many
    ``labels`` as one may: a document's or a skill's."""
    limit = settings.AGENTDOCS_MAX_LABELS_PER_DOCUMENT
    if labels.count() >= limit:
        raise TooManyLabels(
            f"{what} carries the most labels one may ({limit}, "
            "AGENTDOCS_MAX_LABELS_PER_DOCUMENT); remove one, or move one it has, instead.",
            field="label",
            limit=limit,
        )


def label_row_move(
    labels: QuerySet[Any],
    *,
    new: Callable[[], Any],
    what: str,
    name: str,
    version: int,
    user: User,
    reason: str,
) -> tuple[Any, int | None]:
    """Point the label ``name`` among ``labels`` (a document's or a skill's, its row
    locked by the caller) at ``version``, made by ``new`` when there is none and room
    for one (`require_room`), with its history row. The label and the version it
    pointed at before (None: it is new)."""
    label = labels.select_for_update(of=("self",)).filter(name=name).first()
    previous = None if label is None else label.version
    if label is None:
        require_room(labels, what=what)
        label = new()
    label.version = version
    label.moved_by = user
    label.moved_at = timezone.now()
    label.reason = reason
    change_type = ChangeType.CREATED if previous is None else ChangeType.UPDATED
    mark_change(label, user=user, reason=reason, change_type=change_type)
    label.save()
    return label, previous


def label_row_remove(
    labels: QuerySet[Any], *, what: str, name: str, user: User, reason: str
) -> int:
    """Remove the label ``name`` among ``labels`` with its history row; the version it
    pointed at. NotFound naming `label` when there is none."""
    found = labels.select_for_update().filter(name=name).first()
    if found is None:
        raise NotFound(f"{what} has no label {name!r}.", field="label")
    mark_change(found, user=user, reason=reason, change_type=ChangeType.DELETED)
    found.delete()
    return found.version


def label_move(
    *, document: Document, name: str, version: object, user: User, reason: object = ""
) -> LabelMoved:
    """Point the label ``name`` of ``document`` at ``version`` (creating it when new,
    when the document has room for one more: `require_room`)."""
    reason = _reason(reason)
    with transaction.atomic():
        document = _with_project(document, lock=True)
        number = label_selectors.version_for_label(document=document, version=version)
        label, previous = label_row_move(
            document.labels.all(),
            new=lambda: DocumentLabel(document=document, name=name),
            what=f"The document {document.path!r}",
            name=name,
            version=number,
            user=user,
            reason=reason,
        )
        render_cache.render_inputs_changed(tenant_id=document.project.tenant_id)
        _emit(
            document,
            type=LABEL_MOVED,
            name=name,
            version=number,
            previous=previous,
            user=user,
            reason=reason,
        )
        return LabelMoved(label=label, created=previous is None)


def label_remove(*, document: Document, name: str, user: User, reason: object = "") -> None:
    """Remove the label ``name`` of ``document``: readers asking for it get latest."""
    reason = _reason(reason)
    with transaction.atomic():
        document = _with_project(document, lock=True)
        previous = label_row_remove(
            document.labels.all(),
            what=f"The document {document.path!r}",
            name=name,
            user=user,
            reason=reason,
        )
        render_cache.render_inputs_changed(tenant_id=document.project.tenant_id)
        _emit(
            document,
            type=LABEL_REMOVED,
            name=name,
            version=None,
            previous=previous,
            user=user,
            reason=reason,
        )

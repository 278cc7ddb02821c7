"""The review gate of a label: move or remove it, or, when the document's path is under
`review.required` and the member may not bypass review, propose the move or the removal
as a change request (merging it moves or removes the label, `services.changes`).

The label's name and the member's right to move it are checked before, once
(`permissions.movable_label_for`). Above both `services.labels` (the move itself)
and `services.changes` (the proposal), so that neither imports the other back.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from agentdocs.models import ChangeRequest, Document
from agentdocs.selectors import labels as label_selectors
from agentdocs.selectors import review as review_selectors
from agentdocs.services import changes as change_service
from agentdocs.services import labels as label_service


def _review_required(document: Document, *, may_bypass_review: bool) -> bool:
    """Whether a change of the document's labels by this member goes through review: its
    path is under `review.required` and the member may not bypass review."""
    return not may_bypass_review and review_selectors.review_required(
        project=document.project, path=document.path
    )


def label_request(
    *,
    document: Document,
    name: str,
    version: object,
    user: User,
    reason: object = "",
    may_bypass_review: bool,
) -> label_service.LabelMoved | ChangeRequest:
    """Move the label, or, when the document's path is under `review.required` and the
    user may not bypass review, open a change request that names the label (merging it
    moves the label). The same gate for the API and the pages."""
    if _review_required(document, may_bypass_review=may_bypass_review):
        return change_service.change_propose_label(
            document=document,
            label=name,
            version=label_selectors.version_for_label(document=document, version=version),
            reason=reason,
            user=user,
        )
    return label_service.label_move(
        document=document, name=name, version=version, user=user, reason=reason
    )


def label_remove_request(
    *,
    document: Document,
    name: str,
    user: User,
    reason: object = "",
    may_bypass_review: bool,
) -> ChangeRequest | None:
    """Remove the label (None), or, through the same gate as a move (`label_request`),
    open a change request that names the label as a removal (merging it removes the
    label). NotFound naming `label` when the document has no such label, either way."""
    if _review_required(document, may_bypass_review=may_bypass_review):
        label = label_selectors.label_get(document=document, name=name)
        return change_service.change_propose_label(
            document=document,
            label=name,
            version=label.version,
            reason=reason,
            user=user,
            removal=True,
        )
    label_service.label_remove(document=document, name=name, user=user, reason=reason)
    return None

"""The review gate of a label, a document's or a skill's: move or remove it, or, when
the document's path (the skill's `skills/<name>`) is under `review.required` and the
member may not bypass review, propose the move or the removal as a change request
(merging it moves or removes the label, `services.changes`).

The label's name and the member's right to move it are checked before, once
(`permissions.movable_label_for`, `movable_skill_label_for`). Above both
`services.labels` / `services.skill_labels` (the move itself) and `services.changes`
(the proposal), so that neither imports the other back.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from agentdocs.core.skills import skill_path
from agentdocs.models import ChangeRequest, Document, Skill
from agentdocs.selectors import labels as label_selectors
from agentdocs.selectors import review as review_selectors
from agentdocs.selectors import skill_labels as skill_label_selectors
from agentdocs.services import changes as change_service
from agentdocs.services import labels as label_service
from agentdocs.services import skill_labels as skill_label_service


def _review_required(document: Document, *, may_bypass_review: bool) -> bool:
    return review_selectors.review_required_for(
        project=document.project, path=document.path, may_bypass_review=may_bypass_review
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


def _skill_review_required(skill: Skill, *, may_bypass_review: bool) -> bool:
    return review_selectors.review_required_for(
        project=skill.project, path=skill_path(skill.name), may_bypass_review=may_bypass_review
    )


def skill_label_request(
    *,
    skill: Skill,
    name: str,
    version: object,
    user: User,
    reason: object = "",
    may_bypass_review: bool,
) -> skill_label_service.SkillLabelMoved | ChangeRequest:
    """A skill's label moved, or proposed as a change request, through the gate of a
    document's (`label_request`; the skill's path is `skills/<name>`)."""
    if _skill_review_required(skill, may_bypass_review=may_bypass_review):
        return change_service.change_propose_label(
            skill=skill,
            label=name,
            version=skill_label_selectors.skill_version_for_label(skill=skill, version=version),
            reason=reason,
            user=user,
        )
    return skill_label_service.skill_label_move(
        skill=skill, name=name, version=version, user=user, reason=reason
    )


def skill_label_remove_request(
    *,
    skill: Skill,
    name: str,
    user: User,
    reason: object = "",
    may_bypass_review: bool,
) -> ChangeRequest | None:
    """A skill's label removed (None), or its removal proposed, as a document's
    (`label_remove_request`)."""
    if _skill_review_required(skill, may_bypass_review=may_bypass_review):
        label = skill_label_selectors.skill_label_get(skill=skill, name=name)
        return change_service.change_propose_label(
            skill=skill,
            label=name,
            version=label.version,
            reason=reason,
            user=user,
            removal=True,
        )
    skill_label_service.skill_label_remove(skill=skill, name=name, user=user, reason=reason)
    return None

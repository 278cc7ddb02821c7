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


def _under_review(
    document: Document | None, skill: Skill | None, *, may_bypass_review: bool
) -> bool:
    """Whether a change of the labels of ``document`` (or of ``skill``, whose path is
    `skills/<name>`) by this member goes through review."""
    if skill is not None:
        project, path = skill.project, skill_path(skill.name)
    else:
        assert document is not None
        project, path = document.project, document.path
    return review_selectors.review_required_for(
        project=project, path=path, may_bypass_review=may_bypass_review
    )


def label_request(
    *,
    document: Document | None = None,
    skill: Skill | None = None,
    name: str,
    version: object,
    user: User,
    reason: object = "",
    may_bypass_review: bool,
) -> label_service.LabelMoved | skill_label_service.SkillLabelMoved | ChangeRequest:
    """Move the label of ``document`` (or of ``skill``), or, when its path is under
    `review.required` and the user may not bypass review, open a change request that
    names the label (merging it moves the label). The same gate for the API and the
    pages."""
    if _under_review(document, skill, may_bypass_review=may_bypass_review):
        if skill is not None:
            number = skill_label_selectors.skill_version_for_label(skill=skill, version=version)
        else:
            assert document is not None
            number = label_selectors.version_for_label(document=document, version=version)
        return change_service.change_propose_label(
            document=document, skill=skill, label=name, version=number, reason=reason, user=user
        )
    if skill is not None:
        return skill_label_service.skill_label_move(
            skill=skill, name=name, version=version, user=user, reason=reason
        )
    assert document is not None
    return label_service.label_move(
        document=document, name=name, version=version, user=user, reason=reason
    )


def label_remove_request(
    *,
    document: Document | None = None,
    skill: Skill | None = None,
    name: str,
    user: User,
    reason: object = "",
    may_bypass_review: bool,
) -> ChangeRequest | None:
    """Remove the label (None), or, through the same gate as a move (`label_request`),
    open a change request that names the label as a removal (merging it removes the
    label). NotFound naming `label` when there is no such label, either way."""
    if _under_review(document, skill, may_bypass_review=may_bypass_review):
        if skill is not None:
            version = skill_label_selectors.skill_label_get(skill=skill, name=name).version
        else:
            assert document is not None
            version = label_selectors.label_get(document=document, name=name).version
        return change_service.change_propose_label(
            document=document,
            skill=skill,
            label=name,
            version=version,
            reason=reason,
            user=user,
            removal=True,
        )
    if skill is not None:
        skill_label_service.skill_label_remove(skill=skill, name=name, user=user, reason=reason)
    else:
        assert document is not None
        label_service.label_remove(document=document, name=name, user=user, reason=reason)
    return None

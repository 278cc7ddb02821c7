"""The review gate of a skill's files: create, write or revert it, or, when the skill's
path (`skills/<name>`) is under `review.required` and the member may not bypass review,
propose the files as a change request instead (merging it writes the version,
`services.changes`); deleting such a skill is refused (409 `review_required`), as
deleting a protected document is.

The same gate as labels' (`selectors.review.review_required_for`). Above both
`services.skills` (the write itself) and `services.changes` (the proposal), so that
neither imports the other back.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import User

from agentdocs.core import review as review_rules
from agentdocs.core.errors import ReviewRequired
from agentdocs.core.skills import skill_path
from agentdocs.models import ChangeRequest, Project, Skill
from agentdocs.selectors import review as review_selectors
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import changes as change_service
from agentdocs.services import skills as skill_service


def _gated(project: Project, name: str, *, may_bypass_review: bool) -> bool:
    return review_selectors.review_required_for(
        project=project, path=skill_path(name), may_bypass_review=may_bypass_review
    )


def skill_create_request(
    *,
    project: Project,
    name: str,
    files: Mapping[str, str],
    user: User,
    reason: str = "",
    may_bypass_review: bool,
) -> skill_service.SkillWritten | ChangeRequest:
    """Create the skill, or propose it (base version 0) under review."""
    if _gated(project, name, may_bypass_review=may_bypass_review):
        return change_service.change_propose_skill(
            project=project, name=name, files=files, base_version=0, reason=reason, user=user
        )
    return skill_service.skill_create(
        project=project, name=name, files=files, user=user, reason=reason
    )


def skill_write_request(
    *,
    skill: Skill,
    files: Mapping[str, str],
    base_version: int,
    user: User,
    reason: str = "",
    merge: bool = False,
    may_bypass_review: bool,
) -> skill_service.SkillWritten | ChangeRequest:
    """Write the skill's next version, or propose it under review: a change request
    based on ``base_version`` (a stale one too: the merge is three-way, file by file)."""
    if _gated(skill.project, skill.name, may_bypass_review=may_bypass_review):
        return change_service.change_propose_skill(
            project=skill.project,
            name=skill.name,
            files=files,
            base_version=base_version,
            reason=reason,
            user=user,
        )
    return skill_service.skill_write(
        skill=skill,
        files=files,
        base_version=base_version,
        user=user,
        reason=reason,
        merge=merge,
    )


def skill_revert_request(
    *,
    skill: Skill,
    version: int,
    user: User,
    reason: str = "",
    base_version: int | None = None,
    may_bypass_review: bool,
) -> skill_service.SkillWritten | ChangeRequest:
    """Revert the skill, or propose the old version's files under review (based on the
    current version, or ``base_version``; a deleted skill's, as a new one)."""
    if _gated(skill.project, skill.name, may_bypass_review=may_bypass_review):
        target = skill_selectors.skill_version(skill=skill, version=version)
        return change_service.change_propose_skill(
            project=skill.project,
            name=skill.name,
            files=target.files,
            base_version=0 if skill.is_deleted else base_version or skill.version,
            reason=reason or f"Revert to version {version}",
            user=user,
        )
    return skill_service.skill_revert(
        skill=skill, version=version, user=user, reason=reason, base_version=base_version
    )


def skill_delete_request(
    *, skill: Skill, base_version: int, user: User, reason: str = "", may_bypass_review: bool
) -> Skill:
    """Delete the skill; under review, 409 `review_required` (a deletion is not proposed)."""
    if _gated(skill.project, skill.name, may_bypass_review=may_bypass_review):
        raise ReviewRequired(
            f"The skill {skill.name!r} is protected by `{review_rules.REVIEW_REQUIRED_KEY}`: "
            "only a tenant admin deletes it.",
            field="name",
            tenant=skill.project.tenant.slug,
            project=skill.project.slug,
        )
    return skill_service.skill_delete(
        skill=skill, base_version=base_version, user=user, reason=reason
    )

"""The review gate of a skill's files, the same as a document's (`services.review`):
when the skill's path (`skills/<name>`) is under `review.required`, a direct create,
write, revert or delete answers 409 `review_required` (the faces add the URL to propose
at) for everyone; the files are proposed as a change request instead
(`services.changes.change_propose_skill`; merging it writes the version). A tenant admin
may write anyway with ``bypass_review`` and a reason: the version's event says so
(`review_bypassed`; a skill's chained history rows carry no such column).

Who may ask to bypass is decided before, by `Access.require_bypass_review` in the face.
Above `services.skills` (the write itself), as `services.review` is above documents'.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import User

from agentdocs.core.skills import skill_path
from agentdocs.models import Project, Skill
from agentdocs.services import review as review_service
from agentdocs.services import skills as skill_service


def _gate(project: Project, name: str, *, bypass_review: bool, reason: str) -> bool:
    """Let the write through (True when it bypasses review), or raise `ReviewRequired`
    naming `name`, or `InvalidInput` naming `reason` for a bypass without one."""
    return review_service.review_gate(
        project=project,
        path=skill_path(name),
        bypass_review=bypass_review,
        reason=reason.strip() if isinstance(reason, str) else reason,
        field="name",
    )


def skill_create_request(
    *,
    project: Project,
    name: str,
    files: Mapping[str, str],
    user: User,
    reason: str = "",
    bypass_review: bool = False,
) -> skill_service.SkillWritten:
    """Create the skill, unless review protects it."""
    bypassed = _gate(project, name, bypass_review=bypass_review, reason=reason)
    return skill_service.skill_create(
        project=project, name=name, files=files, user=user, reason=reason, review_bypassed=bypassed
    )


def skill_write_request(
    *,
    skill: Skill,
    files: Mapping[str, str],
    base_version: int,
    user: User,
    reason: str = "",
    merge: bool = False,
    bypass_review: bool = False,
) -> skill_service.SkillWritten:
    """Write the skill's next version, unless review protects it."""
    bypassed = _gate(skill.project, skill.name, bypass_review=bypass_review, reason=reason)
    return skill_service.skill_write(
        skill=skill,
        files=files,
        base_version=base_version,
        user=user,
        reason=reason,
        merge=merge,
        review_bypassed=bypassed,
    )


def skill_revert_request(
    *,
    skill: Skill,
    version: int,
    user: User,
    reason: str = "",
    base_version: int | None = None,
    bypass_review: bool = False,
) -> skill_service.SkillWritten:
    """Revert the skill, unless review protects it."""
    bypassed = _gate(skill.project, skill.name, bypass_review=bypass_review, reason=reason)
    return skill_service.skill_revert(
        skill=skill,
        version=version,
        user=user,
        reason=reason,
        base_version=base_version,
        review_bypassed=bypassed,
    )


def skill_delete_request(
    *, skill: Skill, base_version: int, user: User, reason: str = "", bypass_review: bool = False
) -> Skill:
    """Delete the skill, unless review protects it (a deletion is not proposed)."""
    bypassed = _gate(skill.project, skill.name, bypass_review=bypass_review, reason=reason)
    return skill_service.skill_delete(
        skill=skill, base_version=base_version, user=user, reason=reason, review_bypassed=bypassed
    )

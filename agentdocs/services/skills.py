"""The one write path for skills.

Every change to any file of a skill is a new version of the whole bundle, with its
writer, reason and change type in the history row (chained into the tenant's audit
chain like every history row). Each write names the version it was based on (a stale
one is refused with 412); delete and revert are versions too, so nothing is lost.
Every file passes `agentdocs.core.skills.check_skill` (the specification, and the
secret, hidden-character and look-alike checks every stored text gets) first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from agentdocs.core.errors import AlreadyExists, InvalidInput, VersionConflict
from agentdocs.core.skills import CheckedSkill, check_skill, validate_skill_name
from agentdocs.models import ChangeType, Project, Skill
from agentdocs.models.history import mark_change
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import events, render_cache

# The reason's rule is the documents' (a string of at most 500 characters, trimmed).
from agentdocs.services.documents import validate_reason


@dataclass(frozen=True)
class SkillWritten:
    """What a write did: the skill as saved (the same version when the bundle was
    already its bundle) and the specification's recommendations it misses."""

    skill: Skill
    warnings: list[str] = field(default_factory=list)


def skill_check(*, name: str, files: object) -> CheckedSkill:
    """``files`` checked as the skill ``name``'s bundle, under the configured caps."""
    return check_skill(
        name=name,
        files=files,
        max_file_bytes=settings.AGENTDOCS_SKILL_MAX_FILE_BYTES,
        max_bytes=settings.AGENTDOCS_SKILL_MAX_BYTES,
    )


def _locked(skill: Skill) -> Skill:
    """The row again, under a row lock, so concurrent writers queue up here."""
    return (
        Skill.objects.select_related("project__tenant")
        .select_for_update(of=("self",))
        .get(pk=skill.pk)
    )


def _check_base(current: Skill, base_version: int) -> None:
    if not isinstance(base_version, int) or isinstance(base_version, bool) or base_version < 1:
        raise InvalidInput("The base version must be a positive integer.", field="version")
    if current.version != base_version:
        raise VersionConflict(
            base_version=base_version,
            current_version=None if current.is_deleted else current.version,
            detail=f"The skill changed since version {base_version}; it is now at version "
            f"{current.version}. Nothing was written: fetch the current version and apply "
            "your change to it.",
        )


def _save_version(
    skill: Skill,
    *,
    checked: CheckedSkill | None,
    user: User,
    reason: str,
    change_type: ChangeType,
    is_deleted: bool = False,
) -> Skill:
    if checked is not None:
        skill.files = checked.files
        skill.description = checked.description
        skill.size = checked.size
        skill.sha256 = checked.sha256
    skill.version = (skill.version or 0) + 1
    skill.is_deleted = is_deleted
    skill.updated_by = user
    skill.updated_at = timezone.now()
    mark_change(skill, user=user, reason=reason, change_type=change_type)
    skill.save()
    # A skill's name and description are in the skills index of the project's renders
    # (of every project's, for a `_vance` skill): the cached render rows are retired.
    render_cache.render_inputs_changed(tenant_id=skill.project.tenant_id)
    _emit(skill, user=user, reason=reason, change_type=change_type)
    return skill


def _emit(skill: Skill, *, user: User, reason: str, change_type: ChangeType) -> None:
    """The version's event, in the write's transaction (the activity feed)."""
    project = skill.project
    data: events.SkillEventData = {
        "name": skill.name,
        "action": change_type.value,
        "version": skill.version,
        "sha256": skill.sha256,
        "files": len(skill.files),
        "actor": user.get_username(),
        "reason": reason,
    }
    events.emit(
        type=events.SKILL_CHANGED,
        action=change_type.value,
        tenant=project.tenant,
        project=project,
        actor=user,
        target=skill.name,
        reason=reason,
        version=skill.version,
        data=data,
    )


def skill_create(
    *, project: Project, name: str, files: Mapping[str, str], user: User, reason: str = ""
) -> SkillWritten:
    """Create a skill (version 1); a deleted one of the same name comes back as its next
    version. AlreadyExists (409) when the project has a live one."""
    validate_skill_name(name)
    reason = validate_reason(reason)
    checked = skill_check(name=name, files=files)
    try:
        with transaction.atomic():
            existing = Skill.objects.select_for_update().filter(project=project, name=name).first()
            if existing is not None and not existing.is_deleted:
                raise AlreadyExists(
                    f"The skill {name!r} exists (version {existing.version}); write to it "
                    "with its version instead.",
                    field="name",
                    current_version=existing.version,
                )
            skill = existing or Skill(project=project, name=name, version=0)
            saved = _save_version(
                skill, checked=checked, user=user, reason=reason, change_type=ChangeType.CREATED
            )
    except IntegrityError:
        raise AlreadyExists(f"The skill {name!r} exists.", field="name") from None
    return SkillWritten(skill=saved, warnings=checked.warnings)


def skill_write(
    *, skill: Skill, files: Mapping[str, str], base_version: int, user: User, reason: str = ""
) -> SkillWritten:
    """Replace the whole file set as a new version; the identical bundle writes none."""
    reason = validate_reason(reason)
    checked = skill_check(name=skill.name, files=files)
    with transaction.atomic():
        current = _locked(skill)
        _check_base(current, base_version)
        if current.is_deleted:
            raise VersionConflict(base_version=base_version, current_version=None)
        if current.sha256 == checked.sha256 and current.files == checked.files:
            return SkillWritten(skill=current, warnings=checked.warnings)
        saved = _save_version(
            current, checked=checked, user=user, reason=reason, change_type=ChangeType.WRITTEN
        )
    return SkillWritten(skill=saved, warnings=checked.warnings)


def skill_delete(*, skill: Skill, base_version: int, user: User, reason: str = "") -> Skill:
    """Delete as a new version: every earlier version stays restorable (revert)."""
    reason = validate_reason(reason)
    with transaction.atomic():
        current = _locked(skill)
        _check_base(current, base_version)
        return _save_version(
            current,
            checked=None,
            user=user,
            reason=reason,
            change_type=ChangeType.DELETED,
            is_deleted=True,
        )


def skill_revert(
    *,
    skill: Skill,
    version: int,
    user: User,
    reason: str = "",
    base_version: int | None = None,
) -> SkillWritten:
    """Make an earlier version's bundle current again, as a new version (a deleted skill
    comes back). The old bundle passes today's checks like any write."""
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput("The version to revert to must be a positive integer.", field="version")
    reason = validate_reason(reason)
    with transaction.atomic():
        current = _locked(skill)
        if base_version is not None:
            _check_base(current, base_version)
        target = skill_selectors.skill_version(skill=current, version=version)
        if target.is_deleted:
            raise InvalidInput(
                f"Version {version} is a deletion; revert to a version before it.",
                field="version",
            )
        checked = skill_check(name=current.name, files=target.files)
        if not current.is_deleted and current.sha256 == checked.sha256:
            return SkillWritten(skill=current, warnings=checked.warnings)
        change_type = ChangeType.RESTORED if current.is_deleted else ChangeType.REVERTED
        saved = _save_version(
            current,
            checked=checked,
            user=user,
            reason=reason or f"Revert to version {version}",
            change_type=change_type,
        )
    return SkillWritten(skill=saved, warnings=checked.warnings)

"""The one write path for skills.

Every change to any file of a skill is a new version of the whole bundle, with its
writer, reason and change type in the history row (chained into the tenant's audit
chain like every history row). Each write names the version it was based on (a stale
one is refused with 412, unless the write asks to be merged: then its files are merged
onto the current version, three-way and file by file, `core.skill_merge`, and a
conflict refuses the whole write with 409); delete and revert are versions too, so
nothing is lost. A live edit lock of another member refuses every write with 423
(`services.skill_locks`).
Every file passes `agentdocs.core.skills.check_skill` (the specification, and the
secret, hidden-character and look-alike checks every stored text gets) first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from agentdocs.core.errors import (
    AlreadyExists,
    InvalidInput,
    SkillMergeConflict,
    VersionConflict,
)
from agentdocs.core.skill_merge import BundleMerge, merge_bundles
from agentdocs.core.skills import CheckedSkill, validate_skill_name
from agentdocs.models import ChangeType, Project, Skill
from agentdocs.models.history import mark_change
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import events, render_cache
from agentdocs.services.skill_locks import require_skill_unlocked

# The reason's rule is the documents' (a string of at most 500 characters, trimmed).
from agentdocs.validation.documents import validate_reason
from agentdocs.validation.skills import skill_check


@dataclass(frozen=True)
class SkillWritten:
    """What a write did: the skill as saved (the same version when the bundle was
    already its bundle) and the specification's recommendations it misses."""

    skill: Skill
    warnings: list[str] = field(default_factory=list)
    # A stale write merged onto the version then current: that version's number, and
    # the files whose lines came from both sides (a file only one side changed is not).
    merged_with: int | None = None
    merged_files: list[str] = field(default_factory=list)


def _locked(skill: Skill) -> Skill:
    """The row again, under a row lock, so concurrent writers queue up here."""
    return (
        Skill.objects.select_related("project__tenant", "lock_holder")
        .select_for_update(of=("self",))
        .get(pk=skill.pk)
    )


def _check_base(current: Skill, base_version: int, *, merge: bool = False) -> bool:
    """Refuse a write based on a stale version; with ``merge``, return True instead
    (the write is to be merged), unless the skill was deleted meanwhile."""
    if not isinstance(base_version, int) or isinstance(base_version, bool) or base_version < 1:
        raise InvalidInput("The base version must be a positive integer.", field="version")
    if current.version == base_version:
        return False
    if merge and not current.is_deleted:
        return True
    if current.version != base_version:
        raise VersionConflict(
            base_version=base_version,
            current_version=None if current.is_deleted else current.version,
            detail=f"The skill changed since version {base_version}; it is now at version "
            f"{current.version}. Nothing was written: fetch the current version and apply "
            "your change to it.",
        )
    return False


def _merged(current: Skill, *, base_version: int, files: Mapping[str, str]) -> BundleMerge:
    """``files`` (based on ``base_version``) merged onto the current bundle, file by
    file; SkillMergeConflict (409) where both changed the same lines of a file, or one
    removed a file the other changed; 412 for a base version not in the history."""
    rows = skill_selectors.skill_versions_by_number(skill=current, versions=(base_version,))
    base = rows.get(base_version)
    if base is None:
        raise VersionConflict(
            base_version=base_version,
            current_version=current.version,
            detail=f"Version {base_version} is not in the skill's history (it is at version "
            f"{current.version}), so there is no base to merge your change with. Nothing was "
            "written: fetch the current version and apply your change to it.",
        )
    made = merge_bundles(base.files, current.files, files)
    if not made.clean:
        raise SkillMergeConflict(
            conflicts=made.conflicts, base_version=base_version, current_version=current.version
        )
    return made


def _save_version(
    skill: Skill,
    *,
    checked: CheckedSkill | None,
    user: User,
    reason: str,
    change_type: ChangeType,
    is_deleted: bool = False,
    merged_with: int | None = None,
    review_bypassed: bool = False,
) -> Skill:
    if checked is not None:
        skill.files = checked.files
        skill.description = checked.description
        skill.size = checked.size
        skill.sha256 = checked.sha256
    skill.version = (skill.version or 0) + 1
    skill.is_deleted = is_deleted
    skill.merged_with = merged_with
    skill.updated_by = user
    skill.updated_at = timezone.now()
    mark_change(skill, user=user, reason=reason, change_type=change_type)
    skill.save()
    # A skill's name and description are in the skills index of the project's renders
    # (of every project's, for a `_vance` skill): the cached render rows are retired.
    render_cache.render_inputs_changed(tenant_id=skill.project.tenant_id)
    _emit(skill, user=user, reason=reason, change_type=change_type, review_bypassed=review_bypassed)
    return skill


def _emit(
    skill: Skill, *, user: User, reason: str, change_type: ChangeType, review_bypassed: bool
) -> None:
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
        "review_bypassed": review_bypassed,
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
    *,
    project: Project,
    name: str,
    files: Mapping[str, str],
    user: User,
    reason: str = "",
    review_bypassed: bool = False,
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
                skill,
                checked=checked,
                user=user,
                reason=reason,
                change_type=ChangeType.CREATED,
                review_bypassed=review_bypassed,
            )
    except IntegrityError:
        raise AlreadyExists(f"The skill {name!r} exists.", field="name") from None
    return SkillWritten(skill=saved, warnings=checked.warnings)


def skill_write(
    *,
    skill: Skill,
    files: Mapping[str, str],
    base_version: int,
    user: User,
    reason: str = "",
    merge: bool = False,
    review_bypassed: bool = False,
) -> SkillWritten:
    """Replace the whole file set as a new version; the identical bundle writes none.

    With ``merge``, a stale ``base_version`` is no refusal: the files are merged onto
    the current version, file by file (`core.skill_merge`), the merged bundle checked
    again as any, and the answer says the version it was merged onto."""
    reason = validate_reason(reason)
    checked = skill_check(name=skill.name, files=files)
    with transaction.atomic():
        current = _locked(skill)
        must_merge = _check_base(current, base_version, merge=merge)
        if current.is_deleted:
            raise VersionConflict(base_version=base_version, current_version=None)
        require_skill_unlocked(current, user)
        merged_with: int | None = None
        merged_files: list[str] = []
        if must_merge:
            made = _merged(current, base_version=base_version, files=checked.files)
            # The merged bundle, checked as any: a secret may span lines of both sides.
            checked = skill_check(name=skill.name, files=made.files)
            merged_with = current.version
            merged_files = made.merged_paths
        if current.sha256 == checked.sha256 and current.files == checked.files:
            return SkillWritten(skill=current, warnings=checked.warnings)
        saved = _save_version(
            current,
            checked=checked,
            user=user,
            reason=reason,
            change_type=ChangeType.WRITTEN,
            merged_with=merged_with,
            review_bypassed=review_bypassed,
        )
    return SkillWritten(
        skill=saved,
        warnings=checked.warnings,
        merged_with=merged_with,
        merged_files=merged_files,
    )


def skill_delete(
    *,
    skill: Skill,
    base_version: int,
    user: User,
    reason: str = "",
    review_bypassed: bool = False,
) -> Skill:
    """Delete as a new version: every earlier version stays restorable (revert)."""
    reason = validate_reason(reason)
    with transaction.atomic():
        current = _locked(skill)
        _check_base(current, base_version)
        require_skill_unlocked(current, user)
        return _save_version(
            current,
            checked=None,
            user=user,
            reason=reason,
            change_type=ChangeType.DELETED,
            is_deleted=True,
            review_bypassed=review_bypassed,
        )


def skill_revert(
    *,
    skill: Skill,
    version: int,
    user: User,
    reason: str = "",
    base_version: int | None = None,
    review_bypassed: bool = False,
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
        require_skill_unlocked(current, user)
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
            review_bypassed=review_bypassed,
        )
    return SkillWritten(skill=saved, warnings=checked.warnings)

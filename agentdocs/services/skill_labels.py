"""Labels of skill versions: move one to a version, remove one, as a document's
(`services.labels`).

A move is a history row of the label (who, why, which version; in the tenant's hash
chain), a `skill.changed` event whose action is `label_moved` (`label_removed` for a
removal), and a change of what renders read, so the render cache's generation is
replaced. Who may move or remove which label is decided before, and the label's name
checked there, once: `permissions.movable_skill_label_for`.

A skill carries at most `AGENTDOCS_MAX_LABELS_PER_DOCUMENT` labels, as a document: a
new one past it is 409 `too_many_labels`, counted under the skill's row lock so that
two new labels at once cannot both pass (moving an existing label adds none).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agentdocs.core.errors import NotFound, TooManyLabels
from agentdocs.models import ChangeType, Skill, SkillLabel
from agentdocs.models.history import mark_change
from agentdocs.selectors import skill_labels as skill_label_selectors
from agentdocs.services import events, render_cache
from agentdocs.services.documents import validate_reason

LABEL_MOVED = "label_moved"
LABEL_REMOVED = "label_removed"


@dataclass(frozen=True)
class SkillLabelMoved:
    """What `skill_label_move` did: the label as it is now, and whether it was new."""

    label: SkillLabel
    created: bool


def _emit(
    skill: Skill,
    *,
    action: str,
    name: str,
    version: int | None,
    previous: int | None,
    user: User,
    reason: str,
) -> None:
    data: events.SkillLabelEventData = {
        "name": skill.name,
        "action": action,
        "label": name,
        "version": version,
        "previous_version": previous,
        "actor": user.get_username(),
        "reason": reason,
    }
    events.emit(
        type=events.SKILL_CHANGED,
        action=action,
        tenant=skill.project.tenant,
        project=skill.project,
        actor=user,
        target=f"{skill.name}@{name}",
        reason=reason,
        version=version,
        data=data,
    )


def _locked(skill: Skill) -> Skill:
    """The skill with its project and tenant, its row locked (in the caller's
    transaction): what a new label is counted under."""
    return (
        Skill.objects.select_related("project__tenant")
        .select_for_update(of=("self",))
        .get(pk=skill.pk)
    )


def _require_room(skill: Skill) -> None:
    """TooManyLabels when the skill (its row locked) carries as many labels as one may."""
    limit = settings.AGENTDOCS_MAX_LABELS_PER_DOCUMENT
    if SkillLabel.objects.filter(skill=skill).count() >= limit:
        raise TooManyLabels(
            f"The skill {skill.name!r} carries the most labels one may ({limit}, "
            "AGENTDOCS_MAX_LABELS_PER_DOCUMENT); remove one, or move one it has, instead.",
            field="label",
            limit=limit,
        )


def skill_label_move(
    *, skill: Skill, name: str, version: object, user: User, reason: object = ""
) -> SkillLabelMoved:
    """Point the label ``name`` of ``skill`` at ``version`` (creating it when new, when
    the skill has room for one more: `_require_room`)."""
    reason = validate_reason(reason)
    with transaction.atomic():
        skill = _locked(skill)
        number = skill_label_selectors.skill_version_for_label(skill=skill, version=version)
        label = (
            SkillLabel.objects.select_for_update(of=("self",))
            .filter(skill=skill, name=name)
            .first()
        )
        created = label is None
        previous = None if label is None else label.version
        if label is None:
            _require_room(skill)
            label = SkillLabel(skill=skill, name=name)
        label.skill = skill
        label.version = number
        label.moved_by = user
        label.moved_at = timezone.now()
        label.reason = reason
        change_type = ChangeType.CREATED if created else ChangeType.UPDATED
        mark_change(label, user=user, reason=reason, change_type=change_type)
        label.save()
        render_cache.render_inputs_changed(tenant_id=skill.project.tenant_id)
        _emit(
            skill,
            action=LABEL_MOVED,
            name=name,
            version=number,
            previous=previous,
            user=user,
            reason=reason,
        )
        return SkillLabelMoved(label=label, created=created)


def skill_label_remove(*, skill: Skill, name: str, user: User, reason: object = "") -> None:
    """Remove the label ``name`` of ``skill``: readers asking for it get latest."""
    reason = validate_reason(reason)
    with transaction.atomic():
        skill = _locked(skill)
        found = SkillLabel.objects.select_for_update().filter(skill=skill, name=name).first()
        if found is None:
            raise NotFound(f"The skill {skill.name!r} has no label {name!r}.", field="label")
        found.skill = skill
        previous = found.version
        mark_change(found, user=user, reason=reason, change_type=ChangeType.DELETED)
        found.delete()
        render_cache.render_inputs_changed(tenant_id=skill.project.tenant_id)
        _emit(
            skill,
            action=LABEL_REMOVED,
            name=name,
            version=None,
            previous=previous,
            user=user,
            reason=reason,
        )

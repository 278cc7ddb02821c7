"""Labels of skill versions: move one to a version, remove one, as a document's
(`services.labels`).

A move is a history row of the label (who, why, which version; in the tenant's hash
chain), a `skill.changed` event whose action is `label_moved` (`label_removed` for a
removal), and a change of what renders read, so the render cache's generation is
replaced. Who may move or remove which label is decided before, and the label's name
checked there, once: `permissions.movable_skill_label_for`.

A skill carries at most `AGENTDOCS_MAX_LABELS_PER_DOCUMENT` labels, as a document: a
new one past it is 409 `too_many_labels`, counted under the skill's row lock so that
two new labels at once cannot both pass (moving an existing label adds none). The
rows are moved and removed as a document's are (`services.labels.label_row_move`,
`label_row_remove`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction

from agentdocs.models import Skill, SkillLabel
from agentdocs.selectors import skill_labels as skill_label_selectors
from agentdocs.services import events, render_cache
from agentdocs.services.labels import label_row_move, label_row_remove
from agentdocs.validation.documents import validate_reason

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


def skill_label_move(
    *, skill: Skill, name: str, version: object, user: User, reason: object = ""
) -> SkillLabelMoved:
    """Point the label ``name`` of ``skill`` at ``version`` (creating it when new, when
    the skill has room for one more), as a document's (`services.labels`)."""
    reason = validate_reason(reason)
    with transaction.atomic():
        skill = _locked(skill)
        number = skill_label_selectors.skill_version_for_label(skill=skill, version=version)
        label, previous = label_row_move(
            skill.labels.all(),
            new=lambda: SkillLabel(skill=skill, name=name),
            what=f"The skill {skill.name!r}",
            name=name,
            version=number,
            user=user,
            reason=reason,
        )
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
        return SkillLabelMoved(label=label, created=previous is None)


def skill_label_remove(*, skill: Skill, name: str, user: User, reason: object = "") -> None:
    """Remove the label ``name`` of ``skill``: readers asking for it get latest."""
    reason = validate_reason(reason)
    with transaction.atomic():
        skill = _locked(skill)
        previous = label_row_remove(
            skill.labels.all(),
            what=f"The skill {skill.name!r}",
            name=name,
            user=user,
            reason=reason,
        )
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

"""Reads of skill labels: a skill's labels, the version one names, and skills read by a
label (the labelled version's files from the skill's history, else latest), as
documents are read by theirs."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.core.labels import LATEST, optional_label
from agentdocs.core.recipes import LABEL_PARAM
from agentdocs.models import Recipe, Skill, SkillLabel
from agentdocs.selectors import skills as skill_selectors

# What a skill read by a label shows of the labelled version (the rest is the skill's).
_VERSION_FIELDS = ("files", "description", "sha256", "size", "version", "updated_at")


def skill_label_rows(*, skill: Skill) -> QuerySet[SkillLabel]:
    """The skill's labels, by name, with who moved each last. Each row knows ``skill``
    (the related manager sets it), so a row's skill name reads nothing more."""
    return skill.labels.select_related("moved_by").order_by("name", "pk")


def skill_label_get(*, skill: Skill, name: str) -> SkillLabel:
    """The label ``name`` of the skill; NotFound naming `label` when it has none."""
    label = SkillLabel.objects.filter(skill=skill, name=name).select_related("moved_by").first()
    if label is None:
        raise NotFound(f"The skill {skill.name!r} has no label {name!r}.", field="label")
    label.skill = skill
    return label


def skill_version_for_label(*, skill: Skill, version: object) -> int:
    """A version the skill had, with files, for a label to point at: InvalidInput or
    NotFound naming `version`."""
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput("`version` must be a positive integer.", field="version")
    row = skill_selectors.skill_version(skill=skill, version=version)
    if row.is_deleted:
        raise InvalidInput(
            f"Version {version} is a deletion; a label names a version with files.",
            field="version",
        )
    return version


def _shown(skill: Skill, row: object) -> Skill:
    """``skill`` as its history row ``row`` held it (its lock and project as they are)."""
    shown = copy.copy(skill)
    for name in _VERSION_FIELDS:
        setattr(shown, name, getattr(row, name))
    shown.updated_by = row.history_user  # type: ignore[attr-defined]
    shown.merged_with = None
    return shown


def skill_labelled(*, skill: Skill, name: str) -> Skill:
    """The skill as the version its label ``name`` points at held it (`latest`: as it
    is); NotFound naming `label` when it has no such label (what `GET ?label=` reads,
    as a document's)."""
    if name == LATEST:
        return skill
    label = skill_label_get(skill=skill, name=name)
    return _shown(skill, skill_selectors.skill_version(skill=skill, version=label.version))


@dataclass(frozen=True)
class ReadByLabel:
    """A skill as a reader by a label gets it: at the labelled version where the skill
    has the label (``label`` says which), else at its latest (``label`` None: the
    fallback a render and a binding record say)."""

    skill: Skill
    label: str | None


def skills_by_label(*, skills: Sequence[Skill], label: str | None) -> list[ReadByLabel]:
    """Each of ``skills`` read by ``label`` (None or `latest`: as they are): two queries
    whatever their number (the labels, then the labelled versions' history rows)."""
    name = optional_label(label)
    if name is None or not skills:
        return [ReadByLabel(skill=skill, label=None) for skill in skills]
    versions = dict(
        SkillLabel.objects.filter(skill__in=[s.pk for s in skills], name=name).values_list(
            "skill_id", "version"
        )
    )
    rows = {}
    if versions:
        wanted = Q()
        for skill_id, version in versions.items():
            wanted |= Q(id=skill_id, version=version)
        for row in (
            Skill.history.filter(wanted).select_related("history_user").order_by("history_id")
        ):
            rows[row.id] = row
    return [
        ReadByLabel(skill=_shown(skill, rows[skill.pk]), label=name)
        if skill.pk in rows
        else ReadByLabel(skill=skill, label=None)
        for skill in skills
    ]


def recipe_label(*, tenant_id: int, recipe: str | None) -> str | None:
    """The label a recipe's `params.label` reads by (None: none, or no such recipe, as
    a render without the recipe's label reads latest): one query, none without
    ``recipe``."""
    if not recipe:
        return None
    params = (
        Recipe.objects.filter(tenant_id=tenant_id, name=recipe)
        .values_list("params", flat=True)
        .first()
    )
    value = params.get(LABEL_PARAM) if isinstance(params, dict) else None
    return optional_label(value) if isinstance(value, str) else None

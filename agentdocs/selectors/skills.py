"""Reading skills: a project's own and those its tenant offers from `_vance`, first hit
wins (a project skill replaces the tenant one of the same name), and their versions."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from typing import Any

from django.db.models import Q, QuerySet

from agentdocs.core.errors import NotFound
from agentdocs.core.skill_index import (
    ALL,
    SKILLS_PARAM,
    IndexedSkill,
    Selection,
    skill_selection,
)
from agentdocs.models import RESERVED_PROJECT, Project, Recipe, Skill


def _offered(project: Project) -> Q:
    """The live skills of ``project`` and the live `_vance` ones it does not replace."""
    own = Q(project=project)
    if project.is_reserved:
        return own
    replaced = Skill.objects.filter(project=project, is_deleted=False).values("name")
    tenant_wide = Q(project__tenant_id=project.tenant_id, project__slug=RESERVED_PROJECT) & ~Q(
        name__in=replaced
    )
    return own | tenant_wide


def skill_list(*, project: Project) -> QuerySet[Skill]:
    """The skills a project offers, by name, without their files: its own, and its
    tenant's (`_vance`) where it has none of the same name. One query (and the count)."""
    return (
        Skill.objects.filter(_offered(project), is_deleted=False)
        .select_related("project", "updated_by")
        .defer("files")
        .order_by("name")
    )


def skill_offered_bundles(*, project: Project, recipe: str | None = None) -> list[Skill]:
    """The skills a project offers, by name, with their files (what MCP's Skills
    extension lists with each file's digest): one query, and one for ``recipe``, whose
    `params.skills` chooses among them as for the Memory Block's index; NotFound naming
    `recipe` for a recipe the tenant lacks."""
    selection: Selection = ALL
    if recipe is not None:
        params = (
            Recipe.objects.filter(tenant_id=project.tenant_id, name=recipe)
            .values_list("params", flat=True)
            .first()
        )
        if params is None:
            raise NotFound(f"No recipe {recipe!r} in this tenant.", field="recipe")
        selection = skill_selection(params.get(SKILLS_PARAM) if isinstance(params, dict) else None)
    rows = (
        Skill.objects.filter(_offered(project), is_deleted=False)
        .select_related("project")
        .order_by("name")
    )
    return [skill for skill in rows if selection == ALL or skill.name in selection]


def skill_index(*, project: Project) -> list[IndexedSkill]:
    """The skills ``project`` offers as the index shows them (name, description, where
    stored, version, digest), by name: one query, whatever the number of skills and
    files (the files are not read)."""
    rows = (
        Skill.objects.filter(_offered(project), is_deleted=False)
        .order_by("name")
        .values_list("name", "description", "project__slug", "version", "sha256")
    )
    return [IndexedSkill(*row) for row in rows]


def skill_get(*, project: Project, name: str) -> Skill:
    """The skill ``name`` as the project sees it: its own, else its tenant's in `_vance`;
    NotFound naming `name` when neither has a live one. One query."""
    rows = list(
        Skill.objects.filter(
            project__tenant_id=project.tenant_id,
            project__slug__in={project.slug, RESERVED_PROJECT},
            name=name,
            is_deleted=False,
        ).select_related("project", "updated_by")
    )
    rows.sort(key=lambda skill: skill.project_id != project.pk)
    if not rows:
        raise NotFound(f"No skill {name!r} in this project or its tenant.", field="name")
    return rows[0]


def own_skill_get(*, project: Project, name: str, include_deleted: bool = False) -> Skill:
    """The project's own skill ``name`` (what a write changes); NotFound naming `name`
    otherwise, saying when the name is the tenant's skill."""
    skill = (
        Skill.objects.filter(project=project, name=name)
        .select_related("project__tenant", "updated_by")
        .first()
    )
    if skill is not None and (include_deleted or not skill.is_deleted):
        return skill
    inherited = (
        not project.is_reserved
        and Skill.objects.filter(
            project__tenant_id=project.tenant_id,
            project__slug=RESERVED_PROJECT,
            name=name,
            is_deleted=False,
        ).exists()
    )
    if inherited:
        raise NotFound(
            f"The skill {name!r} is the tenant's (`{RESERVED_PROJECT}`): change it there, or "
            "create a skill of the same name in this project to replace it here.",
            field="name",
        )
    raise NotFound(f"No skill {name!r} in this project.", field="name")


def skill_versions(*, skill: Skill) -> QuerySet[Any]:
    """Every version of a skill, newest first, without the files."""
    return (
        skill.history.select_related("history_user")
        .defer("files")
        .order_by("-version", "-history_id")
    )


def skill_version(*, skill: Skill, version: int) -> Any:  # -> HistoricalSkill
    """The history row of one version of a skill (the whole bundle)."""
    row = skill_versions_by_number(skill=skill, versions=(version,)).get(version)
    if row is None:
        raise NotFound(
            f"Version {version} does not exist; the skill is at version {skill.version}.",
            field="version",
        )
    return row


def skill_versions_by_number(*, skill: Skill, versions: Collection[int]) -> dict[int, Any]:
    """The history rows of some versions of a skill, by version, in one query."""
    rows = (
        skill.history.filter(version__in=list(versions))
        .select_related("history_user")
        .order_by("history_id")
    )
    return {row.version: row for row in rows}


def skill_bundles(
    *, versions: Collection[tuple[int, int]]
) -> dict[tuple[int, int], dict[str, str]]:
    """The files of some skill versions, by (skill id, version), from the skills'
    history (what no later write changes): one query whatever their number."""
    if not versions:
        return {}
    wanted = Q()
    for skill_id, version in set(versions):
        wanted |= Q(id=skill_id, version=version)
    rows = Skill.history.filter(wanted).order_by("history_id").values_list("id", "version", "files")
    return {(skill_id, version): files for skill_id, version, files in rows}


def skill_files_of(
    *, tenant_id: int, skills: Collection[IndexedSkill], history: bool = False
) -> dict[tuple[str, str], dict[str, str]]:
    """The files of ``skills`` (each at its version and digest), by (project slug,
    name): one query whatever their number, none for none. From the live rows (a skill
    written since is left out), or with ``history`` from the skills' history (what no
    later write changes: an export rebuilt for a binding record)."""
    if not skills:
        return {}
    wanted = Q()
    for skill in skills:
        wanted |= Q(project__slug=skill.project, name=skill.name, version=skill.version)
    model = Skill.history.model if history else Skill
    rows = (
        model.objects.filter(wanted, project__tenant_id=tenant_id)
        .order_by()
        .values_list("project__slug", "name", "sha256", "files")
    )
    digests = {(skill.project, skill.name): skill.sha256 for skill in skills}
    return {
        (project, name): files
        for project, name, sha256, files in rows
        if digests.get((project, name)) == sha256
    }


def skills_offered_by_name(*, project: Project, names: Collection[str]) -> dict[str, Skill]:
    """The live skills ``project`` offers under ``names`` (its own first, else its
    tenant's), with their files: one query whatever their number, none for none."""
    if not names:
        return {}
    rows = list(
        Skill.objects.filter(
            project__tenant_id=project.tenant_id,
            project__slug__in={project.slug, RESERVED_PROJECT},
            name__in=set(names),
            is_deleted=False,
        ).select_related("project")
    )
    rows.sort(key=lambda skill: skill.project_id != project.pk)
    found: dict[str, Skill] = {}
    for skill in rows:
        found.setdefault(skill.name, skill)
    return found


def skill_version_holding(*, skill: Skill, digests: Mapping[str, str]) -> Any | None:
    """The newest version of ``skill`` whose files at the paths of ``digests`` have those
    sha256 digests (what a sync wrote, as its lock file records them): the version a
    local edit of those files was made on. None when no version held them all. Reads
    the history newest first, one row at a time, and stops at the first that holds them."""

    def holds(files: Mapping[str, str]) -> bool:
        return all(
            path in files and hashlib.sha256(files[path].encode("utf-8")).hexdigest() == digest
            for path, digest in digests.items()
        )

    rows = skill.history.filter(is_deleted=False).order_by("-version", "-history_id")
    return next((row for row in rows.iterator(chunk_size=20) if holds(row.files)), None)

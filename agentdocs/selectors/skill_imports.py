"""Import, skills: a repository's skill folders (`.claude/skills/<name>/`,
`.agents/skills/<name>/`, ... each tool's folder in `agentdocs.core.targets`) become
the project's skills.

The files of one folder are one skill, its name the folder's. The same skill in
several tools' folders is imported once, from the first folder in the registry's
order; a copy that differs from it is skipped, saying so. A skill the project already
offers with the same files (its own, or its tenant's from `_vance`) is `unchanged`, so
importing what `agentdocs sync` wrote changes nothing; otherwise the project's own
skill is created (replacing the tenant's of that name in this project) or written as
its next version, through the one write path (`agentdocs.services.skills`, behind
the review gate of `services.skill_review`: under `review.required`, 409), each
file checked first: a refusal names the file and nothing is imported.

This is the plan, a read that checks each bundle (so a dry run answers with it);
`services.skill_imports` writes its steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentdocs.core.agent_files import Action, SourceFile
from agentdocs.core.errors import AgentdocsError
from agentdocs.core.skills import bundle_sha256
from agentdocs.core.targets import skill_owner, skills_folders
from agentdocs.models import Project, Skill
from agentdocs.selectors import skills as skill_selectors
from agentdocs.validation.skills import skill_check

SKILL_TARGET = "skills/{name}"


@dataclass(frozen=True)
class SkillStep:
    """What the import does with one skill folder: ``index`` is its first file's
    position in the request, ``indexes`` each file's by path in the skill."""

    index: int
    source: str  # the folder, `.claude/skills/handoff/`
    name: str
    files: dict[str, str]
    indexes: dict[str, int]
    action: Action
    detail: str
    current: Skill | None = field(default=None, compare=False)

    @property
    def target(self) -> str:
        return SKILL_TARGET.format(name=self.name)


def skill_file_indexes(files: Sequence[SourceFile]) -> set[int]:
    """The positions of the files that are in a tool's skills folder."""
    return {index for index, file in enumerate(files) if skill_owner(file.path) is not None}


def _folders(files: Sequence[SourceFile]) -> list[tuple[str, str, dict[str, str], dict[str, int]]]:
    """``(folder, name, files, indexes)`` per skill folder, the registry's folders first."""
    found: dict[tuple[str, str], tuple[dict[str, str], dict[str, int]]] = {}
    for index, file in enumerate(files):
        owner = skill_owner(file.path)
        if owner is None:
            continue
        folder, name, path = owner
        texts, indexes = found.setdefault((folder, name), ({}, {}))
        texts[path] = file.content
        indexes[path] = index
    order = {folder: position for position, folder in enumerate(skills_folders())}
    keys = sorted(found, key=lambda key: (order[key[0]], min(found[key][1].values())))
    return [(folder, name, *found[(folder, name)]) for folder, name in keys]


def refused(refusal: AgentdocsError, source: str, indexes: dict[str, int]) -> AgentdocsError:
    """A check's refusal, naming the repository's file (`files.N.content`) and its path."""
    where = refusal.field or ""
    path = where.removeprefix("files/").split("#", 1)[0] if where.startswith("files/") else ""
    index = indexes.get(path, min(indexes.values()))
    return type(refusal)(
        f"{source}{path}: {refusal.detail} Nothing was imported.",
        field=f"files.{index}.content",
        **refusal.extra,
    )


def skill_import_plan(*, project: Project, files: Sequence[SourceFile]) -> list[SkillStep]:
    """One step per skill folder among ``files``, each bundle checked (a refusal names
    the file; nothing is written). Two queries (the skills offered under those names,
    the project's own), whatever their number."""
    folders = _folders(files)
    if not folders:
        return []
    names = {name for _folder, name, _texts, _indexes in folders}
    offered = skill_selectors.skills_offered_by_name(project=project, names=names)
    own = {skill.name: skill for skill in Skill.objects.filter(project=project, name__in=names)}
    steps: list[SkillStep] = []
    taken: dict[str, SkillStep] = {}
    for folder, name, texts, indexes in folders:
        index = min(indexes.values())
        source = f"{folder}{name}/"
        first = taken.get(name)
        if first is not None:
            same = bundle_sha256(texts) == bundle_sha256(first.files)
            detail = (
                f"the same skill as {first.source}"
                if same
                else f"differs from {first.source}, which is imported instead"
            )
            steps.append(SkillStep(index, source, name, texts, indexes, "skipped", detail))
            continue
        try:
            checked = skill_check(name=name, files=texts)
        except AgentdocsError as refusal:
            raise refused(refusal, source, indexes) from None
        current = own.get(name)
        live = offered.get(name)
        if live is not None and live.sha256 == checked.sha256:
            where = "" if live.project_id == project.pk else f" (from {live.project.slug})"
            action: Action = "unchanged"
            detail = f"same files as version {live.version}{where}"
        elif current is None or current.is_deleted:
            action = "create"
            detail = (
                "new skill"
                if current is None
                else f"restores the skill deleted at version {current.version}"
            )
            if live is not None:
                detail += f"; replaces {live.project.slug}'s skill here"
        else:
            action, detail = "update", f"version {current.version} → {current.version + 1}"
        step = SkillStep(index, source, name, checked.files, indexes, action, detail, current)
        taken[name] = step
        steps.append(step)
    return steps

"""Skills into repositories: each offered skill as the folder every tool that reads
skills documents (`agentdocs.core.targets.SkillsFolder`: `.claude/skills/<name>/`,
`.agents/skills/<name>/`, ...), its files byte for byte as stored.

Unlike the rule files, a skill's files carry no provenance line: `SKILL.md` must
start with its frontmatter and a script's bytes are the script. The lock file
(`agentdocs sync`) is what says a sync wrote them. Plain Python, no Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agentdocs.core.targets import Target


@dataclass(frozen=True)
class ExportedSkill:
    """An offered skill as an export writes it: its name and files (path to text), and
    where it is stored, at which version and digest."""

    name: str
    project: str
    version: int
    sha256: str
    files: Mapping[str, str] = field(compare=False)


def skill_files(entry: Target, skills: Sequence[ExportedSkill]) -> list[tuple[str, str]]:
    """``entry``'s files of ``skills`` as ``(path, content)``: each skill's files under
    the tool's skills folder, by skill name then path; none for a tool that reads no
    skills."""
    folder = entry.skills
    if folder is None:
        return []
    return [
        (folder.skill_path(skill.name, path), skill.files[path])
        for skill in sorted(skills, key=lambda skill: skill.name)
        for path in sorted(skill.files)
    ]

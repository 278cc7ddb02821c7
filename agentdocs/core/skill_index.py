"""The skills index a process is offered: which skills a recipe's `params.skills`
selects, and the text of the Memory Block's `## Skills (...)` layer that lists each
one's name and description (the index that lets an agent decide which to read, as
the Agent Skills format intends), as plain data.

`agentdocs.core.memory_block` composes the layer (its account, dedup and budget);
`agentdocs.core.block_structure` keeps a document from forging its heading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal, TypedDict

from agentdocs.core.errors import InvalidInput, InvalidSkill
from agentdocs.core.skills import validate_skill_name

SKILLS_PARAM: Final = "skills"
ALL: Final = "*"
MAX_SELECTED = 200
SKILLS_HEADING = "## Skills (read one when your task needs it)"
SKILLS_INTRO = (
    "Each skill is a procedure with its files, loaded on demand; this index holds only "
    "each one's name and description."
)

# All skills, or these names (none: an empty tuple).
Selection = Literal["*"] | tuple[str, ...]
_WHITE_SPACE = re.compile(r"\s+")


class SkillAccount(TypedDict):
    """One skill the index lists, as the layer's account and a binding record say it."""

    name: str
    project: str
    version: int
    sha256: str


@dataclass(frozen=True)
class IndexedSkill:
    """One offered skill as the index shows it: the project it is stored in (the
    process's own, or `_vance` for the tenant's), its version and bundle digest."""

    name: str
    description: str
    project: str
    version: int
    sha256: str
    # Read by a label the skill does not have: its latest version is listed (as a
    # document's `label_fallback`); not in the account.
    label_fallback: bool = False

    def account(self) -> SkillAccount:
        return {
            "name": self.name,
            "project": self.project,
            "version": self.version,
            "sha256": self.sha256,
        }


def offered(skills: Iterable[IndexedSkill], *, project: str) -> list[IndexedSkill]:
    """The skills ``project`` offers, by name, from its own and its tenant's (`_vance`)
    ones: a project skill replaces the tenant one of the same name (first hit wins)."""
    chosen: dict[str, IndexedSkill] = {}
    for skill in skills:
        if skill.name not in chosen or skill.project == project:
            chosen[skill.name] = skill
    return [chosen[name] for name in sorted(chosen)]


def skill_selection(value: object, *, field: str = f"params.{SKILLS_PARAM}") -> Selection:
    """A recipe's `params.skills`: `"*"` (every skill the project offers), a list of
    skill names (those of them it offers), or `[]` (none). Not set reads as `"*"`."""
    if value is None or value == ALL:
        return ALL
    if not isinstance(value, list):
        raise InvalidInput('`skills` is "*", a list of skill names, or [].', field=field)
    if len(value) > MAX_SELECTED:
        raise InvalidInput(f"`skills` names at most {MAX_SELECTED} skills.", field=field)
    for name in value:
        try:
            validate_skill_name(name, field=field)
        except InvalidSkill as error:
            # A recipe parameter: refused as the recipe's other parameters are (400).
            raise InvalidInput(error.detail, field=field) from None
    return tuple(sorted(set(value)))


def selected(skills: Iterable[IndexedSkill], selection: Selection) -> list[IndexedSkill]:
    """The offered skills ``selection`` keeps, by name."""
    kept = [s for s in skills if selection == ALL or s.name in selection]
    return sorted(kept, key=lambda s: s.name)


def one_line(text: str) -> str:
    """A description on one line: a YAML block scalar's line breaks (or any other white
    space run) become one space, so no description can start a line of the block."""
    return _WHITE_SPACE.sub(" ", text).strip()


def skills_index_lines(skills: Iterable[IndexedSkill]) -> list[tuple[IndexedSkill, str]]:
    """Each skill, by name, with its line of the index (a tenant skill says so)."""
    lines = []
    for skill in sorted(skills, key=lambda s: s.name):
        source = "" if skill.project != "_vance" else " (from _vance)"
        lines.append((skill, f"- `{skill.name}`{source}: {one_line(skill.description)}"))
    return lines


def skills_index_text(skills: Iterable[IndexedSkill], *, left_out: Iterable[str] = ()) -> str:
    """The layer's full text: its heading, a sentence, then one line per skill, then
    the names of those ``left_out`` over the budget; "" when no skill is listed or left
    out (the layer is absent)."""
    lines = [line for _, line in skills_index_lines(skills)]
    names = ", ".join(f"`{name}`" for name in left_out)
    if names:
        lines.append(f"[not listed, over the budget: {names}]")
    if not lines:
        return ""
    return f"{SKILLS_HEADING}\n\n{SKILLS_INTRO}\n\n" + "\n".join(lines)

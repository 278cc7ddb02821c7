"""The skills index a process is offered: which skills a recipe's `params.skills`
selects, and the text of the Memory Block's `## Skills (...)` layer that lists each
one's name and description (the index that lets an agent decide which to read, as
the Agent Skills format intends), as plain data.

Not yet composed into the Memory Block: `agentdocs.core.memory_block` gets the layer
(its account, dedup, budget, the structure rules of `block_structure`) and binding
records its inputs in a later step (issue 37).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from agentdocs.core.errors import InvalidInput
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


@dataclass(frozen=True)
class IndexedSkill:
    """One offered skill as the index shows it: the project it is stored in (the
    process's own, or `_vance` for the tenant's), its version and bundle digest."""

    name: str
    description: str
    project: str
    version: int
    sha256: str


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
        validate_skill_name(name, field=field)
    return tuple(sorted(set(value)))


def selected(skills: Iterable[IndexedSkill], selection: Selection) -> list[IndexedSkill]:
    """The offered skills ``selection`` keeps, by name."""
    kept = [s for s in skills if selection == ALL or s.name in selection]
    return sorted(kept, key=lambda s: s.name)


def one_line(text: str) -> str:
    """A description on one line: a YAML block scalar's line breaks (or any other white
    space run) become one space, so no description can start a line of the block."""
    return _WHITE_SPACE.sub(" ", text).strip()


def skills_index_text(skills: Iterable[IndexedSkill]) -> str:
    """The layer's full text: its heading, a sentence, then one line per skill (a
    tenant skill says so); "" when no skill is offered (the layer is absent)."""
    lines = []
    for skill in sorted(skills, key=lambda s: s.name):
        source = "" if skill.project != "_vance" else " (from _vance)"
        lines.append(f"- `{skill.name}`{source}: {one_line(skill.description)}")
    if not lines:
        return ""
    return f"{SKILLS_HEADING}\n\n{SKILLS_INTRO}\n\n" + "\n".join(lines)

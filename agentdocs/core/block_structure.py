"""Document text that cannot forge the Memory Block's structure.

The block says where each line came from by its own structure: the layer headings
(`## Policy (memory.* settings)`, `## Agent Notes (...)`, `## Project Context
(.AGENTS/)`), the `<context path="...">` ... `</context>` wrappers of the project
context, and, in the single-file exports, the `### .AGENTS/<name>` heading of each
context document. A document is placed inside that structure verbatim, so a line of
its own that reads as structure could close its wrapper and open one naming another
document, or start a layer of its own: `</context>` then `<context
path=".AGENTS/overview.md">` attributes what follows to overview.md.

`neutralize` rewrites each such line so that it displays the same in Markdown but
can no longer open, close or name a layer:

- a line whose text starts `<context` or `</context` (any case, whitespace allowed
  after `<` and around `/`) gets its `<` as `&lt;`;
- a line that is an ATX heading (one `#` or more, any level: a model reads `#` and
  `###` the same way as `##`) whose text starts `Policy (`, `Agent Notes (`,
  `Project Context (` (any case, any whitespace) or `.AGENTS/` gets a backslash
  before its first `#`.

"Starts" is read as a model would read it: after any leading whitespace and
invisible characters, with invisible characters inside removed and NFKC applied
(so `＜context` and `<con<U+200B>text` count); lines are split at every line
boundary Python knows (`str.splitlines`: also U+2028, NEL, form feed ...). A line
that only mentions `<context>` further on, or a heading of another name (`##
Policy`, `## Agent notes for reviewers`), is left alone, and so is a document with
no such line: its text is returned unchanged. Inside a code block the escape shows
(Markdown does not read escapes there); a model reads the raw text in a code block
all the same, so those lines are neutralized too. Neutralizing twice changes
nothing more: a neutralized line no longer starts with `<` or `#`.
"""

from __future__ import annotations

import functools
import re

from agentdocs.core.hidden_characters import visible_text

# The version of these rules a render applies; a binding record stores it, so that a
# block rendered before them (a record without it) is rendered again without them.
STRUCTURE_VERSION = 1

# The characters a structure line can start with once NFKC is applied: `<` and `#`
# and their compatibility forms (fullwidth and small).
_TRIGGERS = frozenset("<#\ufe64\ufe5f\uff1c\uff03")
_CONTEXT_TAG = re.compile(r"<\s*/?\s*context", re.IGNORECASE)
_LAYER_HEADING = re.compile(
    r"#+\s*(?:(?:policy|agent\s*notes|project\s*context)\s*\(|\.agents/)", re.IGNORECASE
)

# Text of printable ASCII, tabs and line feeds only (most documents) has no invisible
# character, no other line boundary and nothing NFKC changes: there the rules above are
# this one expression, which finds in one pass whether there is anything to do.
_NOT_PLAIN = re.compile(r"[^\n\t\x20-\x7e]")
_PLAIN_STRUCTURE_LINE = re.compile(
    r"^[ \t]*(?:<[ \t]*/?[ \t]*context|#+[ \t]*(?:(?:policy|agent[ \t]*notes|"
    r"project[ \t]*context)[ \t]*\(|\.agents/))",
    re.IGNORECASE | re.MULTILINE,
)


def _starts_structure(line: str) -> str | None:
    """``"tag"`` or ``"heading"`` when ``line`` reads as the block's structure."""
    head = line.strip()
    if not (head.isascii() and head.isprintable()):  # else it is what a reader sees
        head = visible_text(line).lstrip()
    if _CONTEXT_TAG.match(head):
        return "tag"
    if _LAYER_HEADING.match(head):
        return "heading"
    return None


def _lead(line: str) -> int:
    """The index of the line's first character that is neither white space nor
    invisible: the `<` or `#` a structure line starts with."""
    for index, character in enumerate(line):
        if not character.isspace() and visible_text(character).strip():
            return index
    return len(line)


@functools.lru_cache(maxsize=4096)
def _may_lead(character: str) -> bool:
    """Whether a line whose first non-blank character is ``character`` may be a
    structure line: it is `<`, `#` (or a compatibility form) or invisible. Most lines
    start with a letter, so this is what makes a document without them cheap."""
    return character in _TRIGGERS or not visible_text(character).strip()


def _neutral_line(line: str) -> str | None:
    """``line`` neutralized, or None when it is no structure line."""
    stripped = line.lstrip()
    if not stripped:
        return None
    if not _may_lead(stripped[0]):
        return None
    kind = _starts_structure(line)
    if kind is None:
        return None
    at = _lead(line)
    if kind == "tag":
        return f"{line[:at]}&lt;{line[at + 1 :]}"
    return f"{line[:at]}\\{line[at:]}"


def neutralize_lines(text: str) -> tuple[str, tuple[int, ...]]:
    """``text`` neutralized, and the offset (in the returned text) of each line changed."""
    no_trigger = "<" not in text and "#" not in text
    if no_trigger and (text.isascii() or not any(t in text for t in _TRIGGERS)):
        return text, ()
    if _NOT_PLAIN.search(text) is None and _PLAIN_STRUCTURE_LINE.search(text) is None:
        return text, ()
    lines = text.splitlines(keepends=True)
    changed: list[int] = []
    offset = 0
    for index, line in enumerate(lines):
        neutral = _neutral_line(line)
        if neutral is not None:
            changed.append(offset)
            lines[index] = line = neutral
        offset += len(line)
    if not changed:
        return text, ()
    return "".join(lines), tuple(changed)


def neutralize(text: str) -> tuple[str, int]:
    """``text`` with every line that reads as the block's structure neutralized, and how
    many lines were changed (0: ``text`` itself is returned)."""
    neutral, changed = neutralize_lines(text)
    return neutral, len(changed)

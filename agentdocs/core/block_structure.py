"""Document text that cannot forge the Memory Block's structure.

The block says where each line came from by its own structure: the layer headings
(`## Policy (memory.* settings)`, `## Agent Notes (...)`, `## Project Context
(.AGENTS/)`, `## Skills (...)`), the `<context path="...">` ... `</context>` wrappers of the project
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
  `Project Context (`, `Skills (` (any case, any whitespace) or `.AGENTS/` gets a
  backslash before its first `#` (`Skills (` from rules version 3, when the block
  got its skills index; a block bound under an earlier version is rendered again
  without it);
- a setext heading of such a text (the text, then a line of nothing but `=` or
  nothing but `-`: `Agent Notes (from _vance: agent.md)` over `===`) gets a backslash
  before its underline's first character, which makes the underline part of the
  paragraph: any line of the paragraph the underline closes that starts with such a
  text makes it a layer heading (rules version 2; version 1 neutralized ATX headings
  and tags only, and a block bound under it is rendered again that way).

"Starts" is read as a model would read it: after any leading whitespace and
invisible characters, with invisible characters inside removed and NFKC applied
(so `＜context` and `<con<U+200B>text` count); lines are split at every line
boundary Python knows (`str.splitlines`: also U+2028, NEL, form feed ...). A line
that only mentions `<context>` further on, or a heading of another name (`##
Policy`, `## Agent notes for reviewers`), is left alone, and so is a document with
no such line: its text is returned unchanged. Inside a code block the escape shows
(Markdown does not read escapes there); a model reads the raw text in a code block
all the same, so those lines are neutralized too. Neutralizing twice changes
nothing more: a neutralized line no longer starts with `<`, `#`, `=` or `-`.
"""

from __future__ import annotations

import functools
import re

from agentdocs.core.hidden_characters import visible_text

# The version of these rules a render applies; a binding record stores it, so that a
# block rendered before them (a record without it) is rendered again without them.
STRUCTURE_VERSION = 3
# From this version on, setext layer headings are neutralized too.
SETEXT_VERSION = 2
# From this version on, `Skills (` is a layer's name too (the skills index, issue 37).
SKILLS_VERSION = 3

# The characters a structure line can start with once NFKC is applied: `<` and `#`
# and their compatibility forms (fullwidth and small).
_TRIGGERS = frozenset("<#\ufe64\ufe5f\uff1c\uff03")
_CONTEXT_TAG = re.compile(r"<\s*/?\s*context", re.IGNORECASE)
_LAYER_TEXT = r"(?:(?:policy|agent\s*notes|project\s*context)\s*\(|\.agents/)"
_LAYER_TEXT_WITH_SKILLS = r"(?:(?:policy|agent\s*notes|project\s*context|skills)\s*\(|\.agents/)"
# By rules version: before SKILLS_VERSION, and from it on.
_LAYER_HEADING = re.compile(r"#+\s*" + _LAYER_TEXT, re.IGNORECASE)
_LAYER_HEADING_WITH_SKILLS = re.compile(r"#+\s*" + _LAYER_TEXT_WITH_SKILLS, re.IGNORECASE)
_LAYER_NAME = re.compile(_LAYER_TEXT, re.IGNORECASE)
_LAYER_NAME_WITH_SKILLS = re.compile(_LAYER_TEXT_WITH_SKILLS, re.IGNORECASE)
# A setext underline, as a reader sees it: `=` or `-` and their compatibility forms
# (small and fullwidth), which NFKC makes plain.
_UNDERLINE = re.compile(r"(?:=+|-+)\Z")
_UNDERLINE_TRIGGERS = frozenset("=-\ufe63\ufe66\uff0d\uff1d")

# Text of printable ASCII, tabs and line feeds only (most documents) has no invisible
# character, no other line boundary and nothing NFKC changes: there the rules above are
# this one expression, which finds in one pass whether there is anything to do.
_PLAIN_STRUCTURE_LINE = re.compile(
    r"^[ \t]*(?:<[ \t]*/?[ \t]*context|#+[ \t]*(?:(?:policy|agent[ \t]*notes|"
    r"project[ \t]*context|skills)[ \t]*\(|\.agents/))",
    re.IGNORECASE | re.MULTILINE,
)
# A line of plain text that starts like a layer's name, looked for in the lower-cased
# text after a line feed (a pattern that starts with a literal is scanned for fast):
# only then can a setext underline make a layer heading of it.
_PLAIN_LAYER_NAME_LINE = re.compile(
    r"\n[ \t]*(?:(?:policy|agent[ \t]*notes|project[ \t]*context|skills)[ \t]*\(|\.agents/)"
)
_PLAIN_BYTES = bytes([0x09, 0x0A, *range(0x20, 0x7F)])


def _starts_structure(line: str, version: int) -> str | None:
    """``"tag"`` or ``"heading"`` when ``line`` reads as the block's structure (by the
    rules of ``version``)."""
    head = line.strip()
    if not (head.isascii() and head.isprintable()):  # else it is what a reader sees
        head = visible_text(line).lstrip()
    if _CONTEXT_TAG.match(head):
        return "tag"
    heading = _LAYER_HEADING_WITH_SKILLS if version >= SKILLS_VERSION else _LAYER_HEADING
    if heading.match(head):
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


def _neutral_line(line: str, version: int) -> str | None:
    """``line`` neutralized, or None when it is no structure line."""
    stripped = line.lstrip()
    if not stripped:
        return None
    if not _may_lead(stripped[0]):
        return None
    kind = _starts_structure(line, version)
    if kind is None:
        return None
    at = _lead(line)
    if kind == "tag":
        return f"{line[:at]}&lt;{line[at + 1 :]}"
    return f"{line[:at]}\\{line[at:]}"


def _visible_head(line: str) -> str:
    """The line as a reader sees it, without its leading and trailing white space."""
    head = line.strip()
    if head.isascii() and head.isprintable():
        return head
    return visible_text(line).strip()


@functools.lru_cache(maxsize=4096)
def _may_lead_text(character: str) -> bool:
    """Whether a line whose first non-blank character is ``character`` may start a
    layer's name (`Policy (`, `Agent Notes (`, `Project Context (`, `Skills (`,
    `.AGENTS/`)."""
    seen = visible_text(character).strip()
    return not seen or seen[0].lower() in "pas."


@functools.lru_cache(maxsize=4096)
def _may_underline(character: str) -> bool:
    return character in _UNDERLINE_TRIGGERS or not visible_text(character).strip()


def _names_a_layer(line: str, version: int) -> bool:
    """Whether ``line`` starts with a layer's name (a setext heading's text)."""
    stripped = line.lstrip()
    name = _LAYER_NAME_WITH_SKILLS if version >= SKILLS_VERSION else _LAYER_NAME
    return bool(stripped) and _may_lead_text(stripped[0]) and bool(name.match(_visible_head(line)))


def _may_be_underline(line: str) -> bool:
    """A cheap first look for the loop over every line: an ASCII first character is
    answered without a call."""
    first = line.lstrip()[:1]
    return first in _UNDERLINE_TRIGGERS or (not first.isascii() and _may_underline(first))


def _is_underline(line: str) -> bool:
    """Whether ``line`` reads as a setext underline: `=` or `-` and nothing else. Its
    first and last characters say no for most lines (a list item's last is a letter)."""
    stripped = line.strip()
    return (
        bool(stripped)
        and _may_underline(stripped[0])
        and _may_underline(stripped[-1])
        and bool(_UNDERLINE.match(_visible_head(line)))
    )


@functools.lru_cache(maxsize=4096)
def _invisible(character: str) -> bool:
    return not visible_text(character).strip()


def _is_blank(line: str) -> bool:
    """Whether a reader sees nothing on ``line``: a blank line ends a paragraph."""
    stripped = line.strip()
    if not stripped:
        return True
    return _invisible(stripped[0]) and not visible_text(stripped).strip()


def _is_plain(text: str) -> bool:
    """Whether ``text`` is printable ASCII, tabs and line feeds only (at memory speed)."""
    return text.isascii() and not text.encode("ascii").translate(None, _PLAIN_BYTES)


def _closes_a_layer_name(
    lines: list[str], index: int, closes: dict[int, bool], version: int
) -> bool:
    """Whether the underline ``lines[index]`` closes a paragraph with a line that starts
    with a layer's name. The look back stops at a blank line or at an underline looked
    at before (``closes``: one that closed no layer name ended its paragraph, one that
    did was neutralized into it), so each line is looked at once."""
    for back in range(index - 1, -1, -1):
        if back in closes:
            return closes[back]
        previous = lines[back]
        if _is_blank(previous):
            return False
        if _names_a_layer(previous, version):
            return True
    return False


def neutralize_lines(text: str, *, version: int = STRUCTURE_VERSION) -> tuple[str, tuple[int, ...]]:
    """``text`` neutralized by the rules of ``version`` (0: none), and the offset (in
    the returned text) of each line changed."""
    if version < 1:
        return text, ()
    no_trigger = "<" not in text and "#" not in text
    if no_trigger and (text.isascii() or not any(t in text for t in _TRIGGERS)):
        tags_or_headings = False
    else:
        tags_or_headings = True
    setext = version >= SETEXT_VERSION and any(c in text for c in _UNDERLINE_TRIGGERS)
    if not (tags_or_headings or setext):
        return text, ()
    if _is_plain(text):
        tags_or_headings = tags_or_headings and bool(_PLAIN_STRUCTURE_LINE.search(text))
        setext = setext and bool(_PLAIN_LAYER_NAME_LINE.search("\n" + text.lower()))
        if not (tags_or_headings or setext):
            return text, ()
    lines = text.splitlines(keepends=True)
    changed: list[int] = []
    offset = 0
    closes: dict[int, bool] = {}  # underline line -> whether it closes a layer name
    for index, line in enumerate(lines):
        neutral = _neutral_line(line, version)
        if neutral is None and setext and _may_be_underline(line) and _is_underline(line):
            closes[index] = _closes_a_layer_name(lines, index, closes, version)
            if closes[index]:
                at = _lead(line)
                neutral = f"{line[:at]}\\{line[at:]}"
        if neutral is not None:
            changed.append(offset)
            lines[index] = line = neutral
        offset += len(line)
    if not changed:
        return text, ()
    return "".join(lines), tuple(changed)


def neutralize(text: str, *, version: int = STRUCTURE_VERSION) -> tuple[str, int]:
    """``text`` with every line that reads as the block's structure neutralized (by the
    rules of ``version``), and how many lines were changed (0: ``text`` itself is
    returned)."""
    neutral, changed = neutralize_lines(text, version=version)
    return neutral, len(changed)

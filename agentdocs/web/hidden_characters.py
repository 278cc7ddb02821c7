"""Hidden characters made visible on the pages, as code hosts show bidi text.

A character a reader cannot see but a model reads (`agentdocs.core.hidden_characters`)
is shown where it is as a marked placeholder, ``⟨U+202E⟩`` in a
``<span class="hidden-char">`` titled with its name, and never as itself; a banner
above the text says how many there are (`banner`). Each function takes the raw text
(or HTML already sanitised) and escapes everything it does not mark, so the result
is safe to put in a page as it is.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from django.forms import Form
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from agentdocs.core.errors import AgentdocsError, HiddenCharacters
from agentdocs.core.hidden_characters import HiddenCharacter, count_hidden, find_hidden
from agentdocs.selectors import policy as policy_selectors

# How many a banner lists with their place (the editor's, whose textarea cannot mark them).
LISTED_IN_BANNER = 20

# A tag of sanitised HTML: nh3 writes every attribute value in double quotes, with a
# `"` inside it escaped, and leaves no comments.
_TAG = re.compile(r'<(?:[^>"]|"[^"]*")*>')


def placeholder_text(item: HiddenCharacter) -> str:
    return f"⟨U+{item.code_point:04X}⟩"


def placeholder(item: HiddenCharacter) -> str:
    """The marked placeholder, as HTML."""
    return (
        f'<span class="hidden-char" title="{escape(item.label)}">'
        f"{escape(placeholder_text(item))}</span>"
    )


def mark_text(text: str) -> SafeString:
    """``text`` escaped, each hidden character replaced by its marked placeholder."""
    return mark_safe(_marked(text, find_hidden(text)))  # every piece escaped in _marked


def _marked(text: str, found: Sequence[HiddenCharacter]) -> str:
    pieces: list[str] = []
    last = 0
    for item in found:
        pieces.append(escape(text[last : item.offset]))
        pieces.append(placeholder(item))
        last = item.offset + 1
    pieces.append(escape(text[last:]))
    return "".join(pieces)


def mark_segments(segments: Sequence[tuple[str, str | None]]) -> SafeString:
    """A line shown in pieces (a diff's changed and unchanged words): each piece's text
    escaped and wrapped in its tag (``del``, ``ins`` or None), with the hidden
    characters marked as the whole line reads, so a joiner inside an emoji or a
    Persian word split across pieces is still ordinary writing."""
    line = "".join(text for text, _ in segments)
    found = find_hidden(line)
    html: list[str] = []
    start = 0
    index = 0
    for text, tag in segments:
        end = start + len(text)
        mine: list[HiddenCharacter] = []
        while index < len(found) and found[index].offset < end:
            item = found[index]
            mine.append(
                HiddenCharacter(item.offset - start, item.line, item.column, item.code_point)
            )
            index += 1
        inner = _marked(text, mine)
        html.append(f"<{tag}>{inner}</{tag}>" if tag else inner)
        start = end
    return mark_safe("".join(html))  # every piece escaped in _marked


def mark_html(html: str) -> str:
    """Sanitised HTML with each hidden character of its text marked; one inside an
    attribute (a link's title) becomes the placeholder's text, which an attribute
    can hold."""
    found = find_hidden(html)
    if not found:
        return html
    tags = [(match.start(), match.end()) for match in _TAG.finditer(html)]
    starts = [start for start, _ in tags]
    pieces: list[str] = []
    last = 0
    for item in found:
        pieces.append(html[last : item.offset])
        at = bisect_right(starts, item.offset) - 1
        inside_tag = at >= 0 and tags[at][0] <= item.offset < tags[at][1]
        pieces.append(placeholder_text(item) if inside_tag else placeholder(item))
        last = item.offset + 1
    pieces.append(html[last:])
    return "".join(pieces)


@dataclass(frozen=True)
class Listed:
    """One hidden character as a banner lists it."""

    line: int
    column: int
    label: str  # U+202E RIGHT-TO-LEFT OVERRIDE
    placeholder: str  # ⟨U+202E⟩


@dataclass(frozen=True)
class Banner:
    """What a banner above a text says: how many hidden characters the texts hold, and
    the first of them with their place (for a text that cannot be marked)."""

    count: int
    listed: list[Listed]

    @property
    def more(self) -> int:
        return self.count - len(self.listed) if self.listed else 0


def banner(*texts: str, listed: bool = False) -> Banner | None:
    """The banner for ``texts`` (None when they hold no hidden character)."""
    if not listed:
        count = sum(count_hidden(text) for text in texts)
        return Banner(count, []) if count else None
    found = [item for text in texts for item in find_hidden(text)]
    shown = [
        Listed(item.line, item.column, item.label, placeholder_text(item))
        for item in found[:LISTED_IN_BANNER]
    ]
    return Banner(len(found), shown) if found else None


def offers_acknowledgement(*, tenant_id: int, form: Form, refusal: AgentdocsError | None) -> bool:
    """Whether a form page shows the "save anyway" choice for hidden characters: once
    a save was refused for them (and the tenant allows overrides), and while the user
    has it chosen."""
    if form["acknowledge_hidden"].value():
        return True
    return isinstance(refusal, HiddenCharacters) and policy_selectors.hidden_override_allowed(
        tenant_id=tenant_id
    )

"""Hidden characters shown visibly (`{% load hidden_characters %}`): see
`agentdocs.web.hidden_characters`."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from agentdocs.web import hidden_characters

register = template.Library()


@register.filter
def mark_hidden(value: object) -> SafeString:
    """The text escaped, each hidden character as a marked ⟨U+202E⟩ placeholder."""
    return hidden_characters.mark_text("" if value is None else str(value))


@register.filter
def diff_side(side: Any, tag: str) -> SafeString:
    """One side of a side-by-side diff row: its changed words wrapped in ``tag``
    (``del`` or ``ins``), hidden characters marked as the whole line reads."""
    return hidden_characters.mark_segments(
        [(segment.text, tag if segment.changed else None) for segment in side.segments]
    )


@register.inclusion_tag("agentdocs/partials/hidden_characters_banner.html")
def hidden_banner(*texts: str, what: str = "This text", listed: bool = False) -> dict:
    """A banner above ``texts`` saying how many hidden characters they hold (nothing
    when none); ``listed`` names the first of them by line and column, for a text
    shown where it cannot be marked (the editor's textarea)."""
    return {
        "banner": hidden_characters.banner(*(text or "" for text in texts), listed=listed),
        "what": what,
    }

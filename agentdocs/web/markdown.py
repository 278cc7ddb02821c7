"""Document Markdown as safe HTML for the pages.

Two independent guards: markdown-it runs with raw HTML disabled (a `<script>`
in a document comes out as text), and nh3 sanitises the result anyway, so a
future parser option or plugin cannot let an `onerror=` or a `javascript:`
link through.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

_parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"]
)

_ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "img", "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr",
    "ul",
}  # fmt: skip
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "code": {"class"},
    "th": {"style"},
    "td": {"style"},
}


def render_markdown(text: str) -> str:
    """Sanitised HTML for a document body; safe to mark safe in a template."""
    html = _parser.render(text)
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        filter_style_properties={"text-align"},
    )

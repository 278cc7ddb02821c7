"""Document Markdown as safe HTML for the pages.

Two independent guards: markdown-it runs with raw HTML disabled (a `<script>`
in a document comes out as text), and nh3 sanitises the result anyway, so a
future parser option or plugin cannot let an `onerror=` or a `javascript:`
link through.
"""

from __future__ import annotations

import hashlib

import nh3
from django.core.cache import cache
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


# Bump when the parser options or the sanitiser's rules change: cached HTML is keyed by it.
RENDERER_VERSION = 1
CACHE_SECONDS = 24 * 3600


def render_markdown(text: str, *, cached: bool = True) -> str:
    """Sanitised HTML for a document body; safe to mark safe in a template.

    Kept in the cache under the text's hash: a document is read far more often than
    it is written, and some Markdown (a long run of `[`, say) takes markdown-it
    seconds to parse, which a page view should pay once, not every time.
    """
    if not cached:  # a live preview's text is gone at the next keystroke
        return _render(text)
    key = cache_key(text)
    html = cache.get(key)
    if html is None:
        html = _render(text)
        cache.set(key, html, CACHE_SECONDS)
    return html


def cache_key(text: str) -> str:
    return f"markdown:v{RENDERER_VERSION}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


def _render(text: str) -> str:
    html = _parser.render(text)
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        filter_style_properties={"text-align"},
    )

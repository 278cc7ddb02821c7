"""Document Markdown as safe HTML for the pages.

Two independent guards: markdown-it runs with raw HTML disabled (a `<script>`
in a document comes out as text), and nh3 sanitises the result anyway, so a
future parser option or plugin cannot let an `onerror=` or a `javascript:`
link through. Characters a reader cannot see (bidi controls, zero-width and tag
characters) are marked visibly afterwards (`agentdocs.web.hidden_characters`).

Bounded in size and time, because markdown-it's inline rules cost far more on some
text than on prose: each `[` starts a search for the end of a link label, each
`*` or `_` a search for its closer, so 255 KiB of `![` took 8 s. Only the first
`MAX_MARKDOWN_BYTES` are read as Markdown (the rest is shown as plain text); a
paragraph, heading or table cell longer than `MAX_INLINE_CHARS` is shown without
inline formatting, which keeps the cost of any one of them small; and once
`RENDER_SECONDS` have passed, the remaining ones are too. Each case adds a note
saying what was shown plainly. Prose is far inside every bound.
"""

from __future__ import annotations

import hashlib
import time

import nh3
from django.core.cache import cache
from django.utils.html import escape
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from agentdocs.web.hidden_characters import mark_html

MAX_MARKDOWN_BYTES = 128 * 1024
MAX_INLINE_CHARS = 8 * 1024
RENDER_SECONDS = 0.5


def _bounded_inline(state: StateCore) -> None:
    """markdown-it's `inline` core rule, within `MAX_INLINE_CHARS` and the deadline."""
    deadline = state.env.get("deadline")
    for token in state.tokens:
        if token.type != "inline":
            continue
        if token.children is None:
            token.children = []
        too_long = len(token.content) > MAX_INLINE_CHARS
        out_of_time = deadline is not None and time.monotonic() > deadline
        if too_long or out_of_time:
            state.env["plain_blocks"] = state.env.get("plain_blocks", 0) + 1
            if out_of_time:
                state.env["out_of_time"] = True
            plain = Token("text", "", 0)
            plain.content = token.content
            token.children.append(plain)
            continue
        state.md.inline.parse(token.content, state.md, state.env, token.children)


_parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"]
)
_parser.core.ruler.at("inline", _bounded_inline)

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


# Bump when the parser options, the bounds or the sanitiser's rules change: cached HTML
# is keyed by it.
RENDERER_VERSION = 3
CACHE_SECONDS = 24 * 3600
# A live preview's text is usually gone at the next keystroke: kept only long enough
# that sending the same text again (a retry, a hostile loop) costs nothing.
PREVIEW_CACHE_SECONDS = 5 * 60
# A render that ran out of `RENDER_SECONDS` depends on how busy the machine was, not on
# the text alone: kept only this long, so a busy minute does not leave a page
# unformatted for a day, while a text that always runs out still costs a render a minute.
OUT_OF_TIME_CACHE_SECONDS = 60


def render_markdown(text: str, *, cached: bool = True, cache_seconds: int = CACHE_SECONDS) -> str:
    """Sanitised HTML for a document body; safe to mark safe in a template.

    Kept in the cache under the text's hash: a document is read far more often than
    it is written, and even bounded, some Markdown costs markdown-it up to about
    `RENDER_SECONDS`, which a page view should pay once, not every time.
    """
    if not cached:
        return render_markdown_timed(text)[0]
    key = cache_key(text)
    html = cache.get(key)
    if html is None:
        html, in_time = render_markdown_timed(text)
        cache.set(key, html, cache_seconds if in_time else OUT_OF_TIME_CACHE_SECONDS)
    return html


def render_markdown_timed(text: str) -> tuple[str, bool]:
    """`render_markdown`'s HTML, uncached, and whether it was formatted within
    `RENDER_SECONDS` (False: some paragraphs are plain because time ran out)."""
    env: dict = {"deadline": time.monotonic() + RENDER_SECONDS}
    return _render(text, env), not env.get("out_of_time")


def render_markdown_whole(text: str) -> str:
    """`render_markdown`'s HTML, uncached and without the deadline: for the bundled docs,
    the product's own files, which must be formatted whole however busy the machine (the
    deadline keeps a member's pathological text from holding a page; the size limits
    still apply)."""
    return _render(text, {})


def cache_key(text: str) -> str:
    return f"markdown:v{RENDERER_VERSION}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


def _split(text: str, max_bytes: int) -> tuple[str, str]:
    """The text's first ``max_bytes`` at most, ending at a line end, and the rest."""
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return text, ""
    head = encoded[:max_bytes].decode("utf-8", "ignore")
    line_end = head.rfind("\n")
    if line_end > 0:
        head = head[: line_end + 1]
    return head, text[len(head) :]


def _render(text: str, env: dict) -> str:
    markdown, rest = _split(text, MAX_MARKDOWN_BYTES)
    html = _parser.render(markdown, env)
    if env.get("plain_blocks"):
        html += (
            f"<p><em>{env['plain_blocks']} paragraph(s) shown above without formatting: "
            "too long to format, or the page ran out of time for it.</em></p>"
        )
    if rest:
        html += (
            f"<p><em>Only the first {MAX_MARKDOWN_BYTES // 1024} KiB are shown formatted; "
            "the rest follows as plain text.</em></p>"
            f"<pre>{escape(rest)}</pre>"
        )
    # Marked after sanitising: the placeholders are our markup, not the document's.
    return mark_html(
        nh3.clean(
            html,
            tags=_ALLOWED_TAGS,
            attributes=_ALLOWED_ATTRIBUTES,
            url_schemes={"http", "https", "mailto"},
            link_rel="noopener noreferrer nofollow",
            filter_style_properties={"text-align"},
        )
    )

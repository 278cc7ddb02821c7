"""The documentation of `docs/` as pages of the app, at `/docs/` and `/docs/<page>/`.

The same Markdown files MkDocs builds into the site (`mkdocs.yml` names them and their
order), rendered by the pages' own renderer (`agentdocs.web.markdown`: markdown-it
without raw HTML, then nh3), so a running app shows its documentation with no internet
and no second Markdown dialect. After sanitising, three rewrites make the HTML a site:
headings get the ids MkDocs gives them (so a link to `api.md#search` lands where it does
on the built site), links between pages become `/docs/<page>/` URLs, and pictures under
`docs/screenshots/` come from `/docs/screenshots/<name>`. Each rewrite only ever writes
ids and URLs made of the characters it allows, never text of the page.
"""

from __future__ import annotations

import html
import posixpath
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from django.conf import settings
from django.urls import reverse

from agentdocs.web.markdown import render_markdown_whole

# A page is a top-level docs/*.md file in kebab-case; a screenshot a PNG in
# docs/screenshots/. Nothing else under docs/ is served, whatever the URL says.
PAGE_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
SCREENSHOT_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\.png\Z")
SCREENSHOTS = "screenshots"
INDEX = "index"

_HEADING = re.compile(r"<h([1-6])>(.*?)</h\1>", re.S)
_TAG = re.compile(r"<[^>]*>")
_LINK = re.compile(r'(<(?:a|img)\s[^>]*?(?:href|src)=")([^"]*)(")')


@dataclass(frozen=True)
class NavEntry:
    """One line of the documentation's navigation: a page, or a section of pages."""

    title: str
    page: str | None = None  # the page's name (`api`), None for a section
    children: tuple[NavEntry, ...] = ()

    @property
    def url(self) -> str | None:
        return page_url(self.page) if self.page else None


@dataclass(frozen=True)
class DocsPage:
    name: str
    title: str
    html: str  # sanitised by agentdocs.web.markdown, then rewritten here


def docs_dir() -> Path:
    """The folder of the pages: mkdocs.yml's `docs_dir`, beside mkdocs.yml."""
    config_path = Path(settings.AGENTDOCS_DOCS_CONFIG)
    return config_path.parent / str(_config(config_path).get("docs_dir", "docs"))


def docs_nav() -> tuple[NavEntry, ...]:
    """mkdocs.yml's nav, with each page by its name."""
    return _nav(_config(Path(settings.AGENTDOCS_DOCS_CONFIG)).get("nav") or [])


def page_url(name: str) -> str:
    return reverse("docs") if name == INDEX else reverse("docs-page", kwargs={"page": name})


def docs_page(name: str) -> DocsPage | None:
    """The page `docs/<name>.md` as HTML, or None when there is no such page."""
    if not PAGE_NAME.match(name):
        return None
    path = docs_dir() / f"{name}.md"
    try:
        stat = path.stat()
    except OSError:
        return None
    return _rendered(str(path), stat.st_mtime_ns, name)


def screenshot_path(name: str) -> Path | None:
    """The file of `docs/screenshots/<name>`, or None when there is no such picture."""
    if not SCREENSHOT_NAME.match(name):
        return None
    path = docs_dir() / SCREENSHOTS / name
    return path if path.is_file() else None


def heading_slug(text: str) -> str:
    """The id MkDocs gives a heading (Python-Markdown's `toc` slugify): ASCII letters,
    digits, `_` and `-`, lower case, runs of spaces and hyphens as one hyphen."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    word_characters = re.sub(r"[^\w\s-]", "", ascii_text).strip().lower()
    return re.sub(r"[-\s]+", "-", word_characters)


def with_heading_ids(page_html: str) -> str:
    """Give every heading its MkDocs id; a repeated one gets `_1`, `_2`, ... as there."""
    used: set[str] = set()

    def add_id(match: re.Match[str]) -> str:
        level, inner = match.group(1), match.group(2)
        slug = _unique(heading_slug(html.unescape(_TAG.sub("", inner))), used)
        return f'<h{level} id="{slug}">{inner}</h{level}>'

    return _HEADING.sub(add_id, page_html)


def with_site_links(page_html: str, pages: set[str]) -> str:
    """Links to other pages (`api.md#search`) and pictures (`screenshots/x.png`) as the
    app's URLs. Links elsewhere (other sites, anchors on the page) are left as they are,
    as is a relative link to anything that is not a page or a picture."""

    def rewrite(match: re.Match[str]) -> str:
        url = _site_url(html.unescape(match.group(2)), pages)
        if url is None:
            return match.group(0)
        return f"{match.group(1)}{html.escape(url)}{match.group(3)}"

    return _LINK.sub(rewrite, page_html)


def _site_url(href: str, pages: set[str]) -> str | None:
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    target = posixpath.normpath(parts.path)
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    if target.endswith(".md") and target[:-3] in pages:
        return page_url(target[:-3]) + fragment
    folder, _, picture = target.rpartition("/")
    if folder == SCREENSHOTS and SCREENSHOT_NAME.match(picture):
        return reverse("docs-screenshot", kwargs={"name": picture})
    return None


def _unique(slug: str, used: set[str]) -> str:
    candidate = slug
    while candidate in used or not candidate:
        numbered = re.match(r"^(.*)_([0-9]+)$", candidate)
        if numbered:
            candidate = f"{numbered.group(1)}_{int(numbered.group(2)) + 1}"
        else:
            candidate = f"{candidate}_1"
    used.add(candidate)
    return candidate


def _page_names() -> set[str]:
    return {path.stem for path in docs_dir().glob("*.md") if PAGE_NAME.match(path.stem)}


def _title(name: str, page_html: str) -> str:
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", page_html, re.S)
    if heading:
        return html.unescape(_TAG.sub("", heading.group(1))).strip()
    return name.replace("-", " ").capitalize()


# Pages change only when the files do: keyed by the file's modification time, so an
# edited page is rendered again on its next view, even in a long-running worker. The
# docs are the product's own files: formatted whole, with no deadline, so a busy moment
# never serves a page with its links and tables left as plain text.
@lru_cache(maxsize=64)
def _rendered(path: str, mtime_ns: int, name: str) -> DocsPage:
    text = Path(path).read_text(encoding="utf-8")
    page_html = with_site_links(with_heading_ids(render_markdown_whole(text)), _page_names())
    return DocsPage(name=name, title=_title(name, page_html), html=page_html)


def _config(config_path: Path) -> dict[str, Any]:
    try:
        mtime_ns = config_path.stat().st_mtime_ns
    except OSError:
        return {}
    return _parsed_config(str(config_path), mtime_ns)


@lru_cache(maxsize=4)
def _parsed_config(path: str, mtime_ns: int) -> dict[str, Any]:
    loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def _nav(items: list[Any]) -> tuple[NavEntry, ...]:
    entries = []
    for item in items:
        if isinstance(item, str):
            entries.append(NavEntry(title=item.removesuffix(".md"), page=item.removesuffix(".md")))
            continue
        for title, value in item.items():
            if isinstance(value, list):
                entries.append(NavEntry(title=str(title), children=_nav(value)))
            elif isinstance(value, str) and value.endswith(".md"):
                entries.append(NavEntry(title=str(title), page=value.removesuffix(".md")))
    return tuple(entries)

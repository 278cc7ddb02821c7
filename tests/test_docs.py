"""The documentation keeps up with the code: the README's map names every package, the
architecture page every module, mkdocs.yml's nav every page, and the site builds with
every link and anchor checked."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import need_service

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agentdocs"
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def _walk_nav(items: list[Any]) -> Iterator[str]:
    for item in items:
        if isinstance(item, str):
            yield item
            continue
        for value in item.values():
            if isinstance(value, list):
                yield from _walk_nav(value)
            else:
                yield value


def nav_pages() -> list[str]:
    """The pages of mkdocs.yml's nav, in its order, as paths relative to docs/."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    return list(_walk_nav(config["nav"]))


def packages() -> list[str]:
    """Every package under agentdocs/, as `agentdocs/name/`."""
    return sorted(
        f"{init.parent.relative_to(ROOT).as_posix()}/"
        for init in PACKAGE.rglob("__init__.py")
        if init.parent != PACKAGE
    )


def modules() -> list[str]:
    """Every module under agentdocs/ but the packages' `__init__.py` and the migrations."""
    return sorted(
        path.relative_to(ROOT).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" and "migrations" not in path.parts
    )


def readme_map() -> str:
    """The code block under the README's "Where things live"."""
    section = README.read_text().split("## Where things live", 1)
    assert len(section) == 2, "README.md has no 'Where things live' section"
    block = re.search(r"^```\n(.*?)^```", section[1], re.M | re.S)
    assert block, "README.md's 'Where things live' has no map"
    return block.group(1)


def test_the_readme_map_names_every_package_under_agentdocs():
    the_map = readme_map()

    missing = [package for package in packages() if package not in the_map]

    assert not missing, f"README.md's 'Where things live' misses {missing}"


def test_the_readme_map_names_every_top_level_module():
    the_map = readme_map()
    top_level = [m for m in modules() if m.count("/") == 1]

    missing = [module for module in top_level if module not in the_map]

    assert top_level and not missing, f"README.md's 'Where things live' misses {missing}"


def test_the_architecture_page_names_every_package_and_module():
    page = (DOCS / "architecture.md").read_text()

    missing = [name for name in packages() + modules() if f"`{name}`" not in page]

    assert not missing, f"docs/architecture.md misses {missing} (one line each)"


def test_the_architecture_page_names_no_module_that_is_gone():
    page = (DOCS / "architecture.md").read_text()
    named = set(re.findall(r"`(agentdocs/[\w/]+\.py)`", page))

    gone = sorted(name for name in named if not (ROOT / name).is_file())

    assert named and not gone, f"docs/architecture.md names modules that do not exist: {gone}"


def test_the_readme_stays_a_door_of_at_most_200_lines():
    lines = README.read_text().splitlines()

    assert len(lines) <= 200, f"README.md has {len(lines)} lines; the reference goes in docs/"


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_exists():
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    nav = nav_pages()

    assert sorted(pages - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    assert sorted(set(nav) - pages) == [], "mkdocs.yml's nav names pages that do not exist"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_the_overviews_pages_table_links_every_page_of_the_nav():
    index = (DOCS / "index.md").read_text()
    table = index[index.index("## The pages") :]
    rows = [line for line in table.splitlines() if line.startswith("| [")]
    linked = {page for row in rows for page in re.findall(r"\]\(([\w-]+\.md)\)", row)}
    missing = [page for page in nav_pages() if page != "index.md" and page not in linked]
    assert not missing, f"docs/index.md's table of pages leaves out {missing}"


def test_every_screenshot_is_on_the_screenshots_page():
    page = (DOCS / "screenshots.md").read_text()
    shown = set(re.findall(r"\]\((screenshots/[^)]+\.png)\)", page))
    taken = {path.relative_to(DOCS).as_posix() for path in (DOCS / "screenshots").glob("*.png")}

    assert sorted(taken - shown) == [], "screenshots not shown on docs/screenshots.md"
    assert sorted(shown - taken) == [], "docs/screenshots.md shows pictures that do not exist"


def test_the_site_builds_strictly_with_every_link_and_anchor_checked(tmp_path):
    installed = all(importlib.util.find_spec(name) for name in ("mkdocs", "material"))
    need_service("mkdocs", installed, "install the dev extra (mkdocs, mkdocs-material)")

    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "index.html").is_file()
    assert (tmp_path / "api" / "index.html").is_file()


def markdown_anchors(text: str) -> set[str]:
    """The ids MkDocs gives the headings of a Markdown text (code blocks skipped)."""
    from agentdocs.web.docs import heading_slug

    anchors: set[str] = set()
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else re.match(r"#{1,6} (.+)$", line)
        if heading:
            words = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1)).replace("`", "")
            slug = heading_slug(words)
            anchors.add(slug if slug not in anchors else f"{slug}_1")
    return anchors


def test_every_link_of_the_readme_lands_on_a_file_and_an_anchor_it_has():
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text())
    broken = []
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path
        if not target.exists():
            broken.append((link, "no such file"))
        elif anchor and anchor not in markdown_anchors(target.read_text()):
            broken.append((link, "no such anchor"))

    assert links and broken == []

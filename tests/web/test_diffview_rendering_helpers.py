"""The plain helpers behind the pages: safe Markdown, side-by-side diffs, the one-screen measure."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from agentdocs.web.diffview import side_by_side
from agentdocs.web.guideline import ONE_SCREEN_BYTES, ONE_SCREEN_LINES, measure
from agentdocs.web.markdown import render_markdown


class _Elements(HTMLParser):
    """The elements and attributes a browser would build from some HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.elements.append((tag, {name: value or "" for name, value in attrs}))


def active_content(html: str) -> list[str]:
    parser = _Elements()
    parser.feed(html)
    found = []
    for tag, attrs in parser.elements:
        if tag in ("script", "iframe", "object", "embed", "style", "form", "input"):
            found.append(tag)
        for name, value in attrs.items():
            if name.startswith("on") or (name == "style" and "url(" in value):
                found.append(f"{tag}[{name}]")
            if name in ("href", "src") and not value.startswith(("http:", "https:", "mailto:")):
                found.append(f"{tag}[{name}={value}]")
    return found


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[x](javascript:alert(1))",
        "![x](javascript:alert(1))",
        '<a href="javascript:alert(1)">x</a>',
        "<iframe src=https://example.com></iframe>",
        '<div style="background:url(javascript:alert(1))">x</div>',
        "[x](JaVaScRiPt:alert(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
    ],
)
def test_markdown_never_emits_active_content(source):
    assert active_content(render_markdown(source)) == []


def test_markdown_keeps_what_documents_use():
    html = render_markdown(
        "# T\n\n- a\n- **b**\n\n`code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[l](https://x.org)"
    )
    assert "<h1>T</h1>" in html and "<strong>b</strong>" in html and "<code>code</code>" in html
    assert "<table>" in html
    assert 'href="https://x.org"' in html and 'rel="noopener noreferrer nofollow"' in html


def test_diff_pairs_changed_lines_and_marks_the_changed_words():
    diff = side_by_side("- Use tabs here.\n", "- Use spaces here.\n")
    (block,) = diff.blocks
    (row,) = block.rows
    assert row.kind == "change"
    assert [(s.text, s.changed) for s in row.old.segments] == [
        ("- Use ", False),
        ("tabs", True),
        (" here.", False),
    ]
    assert [s.text for s in row.new.segments if s.changed] == ["spaces"]


def test_diff_folds_long_unchanged_stretches_and_keeps_context():
    old = "".join(f"line {n}\n" for n in range(40))
    new = old.replace("line 20\n", "line twenty\n")
    diff = side_by_side(old, new)
    folded = [block for block in diff.blocks if block.folded]
    shown = [row for block in diff.blocks if not block.folded for row in block.rows]
    assert len(folded) == 2 and sum(len(b.rows) for b in folded) == 39 - 6
    assert [row.old.number for row in shown] == [18, 19, 20, 21, 22, 23, 24]
    assert diff.added == 1 and diff.removed == 1


def test_diff_of_pure_additions_and_removals_and_identical_texts():
    added = side_by_side("", "a\nb\n")
    assert [row.kind for block in added.blocks for row in block.rows] == ["added", "added"]
    removed = side_by_side("a\n", "")
    assert [row.kind for block in removed.blocks for row in block.rows] == ["removed"]
    assert side_by_side("same\n", "same\n").identical


def test_one_screen_measure():
    assert not measure("a\n" * ONE_SCREEN_LINES).over
    assert measure("a\n" * (ONE_SCREEN_LINES + 1)).over_lines
    assert measure("é" * (ONE_SCREEN_BYTES // 2 + 1)).over_bytes  # bytes, not characters

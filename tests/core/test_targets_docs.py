"""The Formats table of docs/export-and-sync.md is the registry's, so the page cannot
drift from what the export writes."""

from __future__ import annotations

from pathlib import Path

from agentdocs.core.targets import TARGETS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "export-and-sync.md"


def _limits(entry) -> str:
    where = {
        "main": "main file",
        "each": "each file",
        "path": "the files on the path, root first",
        "total": "in all",
    }
    said = [
        f"{limit.tool}: {limit.limit:,} {limit.unit} ({where[limit.applies_to]}, {limit.effect})"
        for limit in entry.limits
    ]
    return "; ".join(said) or "none documented"


def test_the_formats_table_lists_every_registered_format_as_the_registry_has_it():
    text = PAGE.read_text(encoding="utf-8")
    for entry in TARGETS:
        files = ", ".join(f"`{pattern}`" for pattern in entry.file_patterns())
        cells = [f"`{entry.format}`", entry.tool, files, entry.scoping.name, _limits(entry)]
        row = "| " + " | ".join(cells) + " |"
        assert row in text, row
    for entry in TARGETS:
        for limit in entry.limits:
            url = limit.source.split()[0]
            assert url.startswith("https://") and url in text, limit.source


def test_every_tool_a_format_serves_is_listed_with_its_id_and_documentation():
    text = PAGE.read_text(encoding="utf-8")
    for entry in TARGETS:
        assert entry.docs in text, entry.format
        for tool in entry.also_read_by:
            row = (
                f"| {tool.tool} | `{tool.tool_id}` | `{entry.format}` | <{tool.docs}> "
                f"| {tool.note} |"
            )
            assert row in text, row

"""Which document a tool would cut, counted as the tool counts (pure, no database)."""

from __future__ import annotations

from agentdocs.core.export import ExportFile
from agentdocs.core.targets import target
from agentdocs.core.tool_limits import FilePart, limit_warnings


def file(path: str, *sections: tuple[str, str]) -> ExportFile:
    content, parts = "", []
    for text, source in sections:
        content += text
        parts.append(FilePart(len(content), source))
    return ExportFile(path, content, tuple(parts))


def test_the_section_that_crosses_the_limit_is_named():
    agents = file("AGENTS.md", ("h" * 100, "header"), ("a" * 30000, "agent.md"),
                  ("b" * 5000, ".AGENTS/b.md"))  # fmt: skip
    [warning] = limit_warnings(target("agents-md"), [agents])
    assert (warning.path, warning.size, warning.cut_from) == ("AGENTS.md", 35100, ".AGENTS/b.md")
    assert warning.message == (
        "AGENTS.md holds 35,100 bytes; Codex reads 32,768: it would cut from .AGENTS/b.md"
    )


def test_bytes_count_each_byte_of_a_character():
    # 16,500 two-byte characters: 33,000 bytes.
    agents = file("AGENTS.md", ("é" * 16500, "agent.md"))
    assert [w.size for w in limit_warnings(target("agents-md"), [agents])] == [33000]
    assert limit_warnings(target("claude-md"), [file("CLAUDE.md", ("é" * 16500, "a"))]) == []


def test_a_total_limit_counts_the_files_one_after_the_other():
    files = [
        file(".windsurf/rules/agentdocs.md", ("x" * 7000, "agent.md")),
        file(".windsurf/rules/b.md", ("y" * 6000, ".AGENTS/b.md")),
    ]
    [total] = limit_warnings(target("windsurf"), files)
    assert (total.path, total.size, total.cut_from) == (".windsurf/rules/", 13000, ".AGENTS/b.md")

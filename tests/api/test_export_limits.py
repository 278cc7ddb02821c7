"""Limits told before they cut: each file over a size its tool applies is a warning in
the export's answer, naming the first document the tool would cut."""

from __future__ import annotations

import pytest

from tests.export_projects import BASE

pytestmark = pytest.mark.django_db

KIB = 1024


def lines(total: int, word: str = "rule") -> str:
    """About ``total`` characters of Markdown list lines."""
    line = f"- {word} " + "x" * 60 + "\n"
    return line * (total // len(line))


@pytest.fixture
def large(project, vance, make_document):
    make_document(vance, "agent.md", lines(40 * KIB, "note"))
    make_document(project, ".AGENTS/context.md", lines(30 * KIB, "context"))


def warnings_of(client, format: str) -> list[dict]:
    response = client.get(f"{BASE}/export/", {"format": format})
    assert response.status_code == 200, response.content
    data = response.json()
    sizes = {f["path"]: f["content"] for f in data["files"]}
    for warning in data["warnings"]:
        assert set(warning) == {
            "format", "tool", "path", "limit", "unit", "size", "cut_from", "folder", "cut_at",
            "message",
        }  # fmt: skip
        if warning["path"] in sizes:
            content = sizes[warning["path"]]
            measured = len(content.encode()) if warning["unit"] == "bytes" else len(content)
            assert warning["size"] == measured
        assert warning["size"] > warning["limit"]
    return data["warnings"]


def test_a_40_kib_agent_md_with_30_kib_of_context_is_told_for_each_tool(api, reader, large):
    client = api(reader)
    [codex] = warnings_of(client, "agents-md")
    assert codex["format"] == "agents-md" and codex["tool"] == "Codex"
    assert (codex["path"], codex["limit"], codex["unit"]) == ("AGENTS.md", 32768, "bytes")
    assert codex["size"] > 70 * KIB
    assert codex["cut_from"] == "agent.md"  # the notes cross 32 KiB

    [claude] = warnings_of(client, "claude-md")
    assert (claude["tool"], claude["path"], claude["limit"], claude["unit"]) == (
        "Claude Code", "CLAUDE.md", 40000, "characters"
    )  # fmt: skip

    copilot = warnings_of(client, "copilot")
    assert [(w["tool"], w["path"], w["limit"], w["unit"]) for w in copilot] == [
        ("Copilot code review", ".github/copilot-instructions.md", 4000, "characters")
    ]

    windsurf = warnings_of(client, "windsurf")
    assert [(w["path"], w["limit"], w["cut_from"]) for w in windsurf] == [
        (".windsurf/rules/agentdocs.md", 12000, "agent.md"),
        (".windsurf/rules/context.md", 12000, ".AGENTS/context.md"),
        (".windsurf/rules/", 12000, "agent.md"),  # all of Windsurf's rules together
    ]
    assert windsurf[2]["size"] == windsurf[0]["size"] + windsurf[1]["size"]

    # Devin Desktop limits each rule file as Windsurf did, its AGENTS.md included; that
    # AGENTS.md is Codex's, so it carries Codex's warning too.
    devin = warnings_of(client, "devin")
    assert sorted((w["tool"], w["path"], w["limit"], w["cut_from"]) for w in devin) == [
        ("Codex", "AGENTS.md", 32768, "agent.md"),
        ("Devin Desktop", "AGENTS.md", 12000, "agent.md"),
    ]

    assert warnings_of(client, "gemini-md") == []  # no limit documented
    everything = warnings_of(client, "all")
    assert {w["format"] for w in everything} == {
        "agents-md", "claude-md", "copilot", "windsurf", "antigravity", "devin"
    }  # fmt: skip


def test_the_document_that_crosses_the_limit_is_named(api, reader, project, vance, make_document):
    make_document(vance, "agent.md", "- be kind\n")
    make_document(project, ".AGENTS/a-small.md", lines(10 * KIB))
    make_document(project, ".AGENTS/b-large.md", lines(30 * KIB))
    make_document(project, ".AGENTS/c-after.md", lines(10 * KIB))
    [codex] = warnings_of(api(reader), "agents-md")
    assert codex["cut_from"] == ".AGENTS/b-large.md"


def test_bytes_and_characters_are_counted_as_each_tool_counts(
    api, reader, project, vance, make_document
):
    # 20,000 two-byte characters: 40,000 bytes, over Codex's 32 KiB; 20,000 characters,
    # under Claude Code's 40,000.
    make_document(vance, "agent.md", ("é" * 99 + "\n") * 200)
    client = api(reader)
    assert [w["tool"] for w in warnings_of(client, "agents-md")] == ["Codex"]
    assert warnings_of(client, "claude-md") == []


def test_files_within_every_limit_carry_no_warning(api, reader, project, vance, make_document):
    make_document(vance, "agent.md", "- be kind\n")
    assert warnings_of(api(reader), "all") == []

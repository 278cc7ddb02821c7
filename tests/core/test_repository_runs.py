"""The pure part of repository runs: load order, cuts, states and clean remotes."""

from __future__ import annotations

import pytest

from agentdocs.core import repository_runs
from agentdocs.core.errors import InvalidRemote
from agentdocs.core.targets import TOOLS_BY_SLUG


@pytest.mark.parametrize(
    ("url", "clean"),
    [
        ("https://user:pw@github.com/acme/web.git", "https://github.com/acme/web.git"),
        ("https://ghp_token@github.com/acme/web.git", "https://github.com/acme/web.git"),
        ("https://github.com/acme/web.git?access_token=x#f", "https://github.com/acme/web.git"),
        ("http://u:p@host:8080/r.git", "http://host:8080/r.git"),
        ("ssh://git@github.com/acme/web.git", "ssh://git@github.com/acme/web.git"),
        ("ssh://git:pw@github.com/acme/web.git", "ssh://github.com/acme/web.git"),
        ("git@github.com:acme/web.git", "git@github.com:acme/web.git"),
        ("/srv/git/web.git", "/srv/git/web.git"),
        ("", None),
        (None, None),
        # scp-like (issue 34): a user given with a password goes with it.
        ("bob:s3cr3tpass@github.com:org/repo.git", "github.com:org/repo.git"),
        ("bob:p@ss@github.com:org/repo.git", "github.com:org/repo.git"),
        ("bob:pa/ss@github.com:org/repo.git", "github.com:org/repo.git"),
        ("bob:pw@github.com/org/repo.git", "github.com/org/repo.git"),
        ("git@host:org/repo@v2.git", "git@host:org/repo@v2.git"),
        ("github.com:org/web.git", "github.com:org/web.git"),
        ("git@[::1]:org/web.git", "git@[::1]:org/web.git"),
        ("https://u:p@[::1]:8443/web.git", "https://[::1]:8443/web.git"),
        ("file:///srv/git/web.git", "file:///srv/git/web.git"),
        ("https://bücher.example/web.git", "https://bücher.example/web.git"),
    ],
)
def test_remotes_lose_their_credentials(url, clean):
    assert repository_runs.clean_remote(url) == clean


@pytest.mark.parametrize(
    "url",
    [
        "https://host:99999/x.git",
        "https://host:abc/x.git",
        "https://host:0/x.git",
        "https://[::1/x.git",
        "https://[zzz]/x.git",
        "https://exa mple.com/x.git",
        "https:///x.git",
        "git@[::1:org/x.git",
        "git@exa mple:org/x.git",
        "[::1:org/x.git",
    ],
)
def test_a_remote_that_cannot_be_read_is_invalid_remote_naming_the_field(url):
    with pytest.raises(InvalidRemote) as raised:
        repository_runs.clean_remote(url, field="repository_runs.remote")
    assert raised.value.field == "repository_runs.remote" and raised.value.code == "invalid_remote"


def test_load_order_is_the_main_file_then_the_rules_by_name():
    claude = TOOLS_BY_SLUG["claude-code"]
    paths = [".claude/rules/b.md", "CLAUDE.md", ".claude/rules/a.md", "AGENTS.md", "x.md"]
    assert claude.load_order(paths) == ["CLAUDE.md", ".claude/rules/a.md", ".claude/rules/b.md"]
    cursor = TOOLS_BY_SLUG["cursor"]
    paths = [".cursor/rules/zeta.mdc", ".cursor/rules/agentdocs.mdc", ".cursor/rules/a.md"]
    assert cursor.load_order(paths) == [".cursor/rules/agentdocs.mdc", ".cursor/rules/zeta.mdc"]


def test_a_tool_a_format_serves_loads_its_files_without_the_formats_tools_limits():
    amp, codex = TOOLS_BY_SLUG["amp"], TOOLS_BY_SLUG["codex"]
    paths = ["CLAUDE.md", "AGENTS.md", ".devin/rules/a.md"]
    assert amp.load_order(paths) == codex.load_order(paths) == ["AGENTS.md"]
    # Codex's 32 KiB are Codex's: Amp documents no limit.
    assert repository_runs.cut_points(amp, [("AGENTS.md", "x" * 40_000)]) == {"AGENTS.md": None}
    devin = TOOLS_BY_SLUG["devin"]
    assert devin.load_order([".devin/rules/b.md", "AGENTS.md", ".devin/rules/a.md"]) == [
        "AGENTS.md", ".devin/rules/a.md", ".devin/rules/b.md"
    ]  # fmt: skip
    assert repository_runs.cut_points(devin, [("AGENTS.md", "d" * 12_001)]) == {"AGENTS.md": 12000}


def test_cuts_follow_each_tools_documented_limits():
    codex = TOOLS_BY_SLUG["codex"]
    assert repository_runs.cut_points(codex, [("AGENTS.md", "x" * 40_000)]) == {"AGENTS.md": 32768}
    assert repository_runs.cut_points(codex, [("AGENTS.md", "x" * 100)]) == {"AGENTS.md": None}
    # Characters, given as a byte offset: each "é" is two bytes.
    copilot = TOOLS_BY_SLUG["copilot"]
    path = ".github/copilot-instructions.md"
    assert repository_runs.cut_points(copilot, [(path, "é" * 4001)]) == {path: 8000}
    # Windsurf: 12,000 characters per file and in total, counted in load order.
    windsurf = TOOLS_BY_SLUG["windsurf"]
    files = [(".windsurf/rules/a.md", "a" * 8000), (".windsurf/rules/b.md", "b" * 8000)]
    assert repository_runs.cut_points(windsurf, files) == {
        ".windsurf/rules/a.md": None,
        ".windsurf/rules/b.md": 4000,
    }
    # Claude Code only warns: nothing is cut.
    claude = TOOLS_BY_SLUG["claude-code"]
    assert repository_runs.cut_points(claude, [("CLAUDE.md", "c" * 50_000)]) == {"CLAUDE.md": None}


@pytest.mark.parametrize(
    ("local", "locked", "exported", "state"),
    [
        ("a", "a", "a", "in-sync"),
        ("a", None, "a", "in-sync"),
        ("a", "a", "b", "server-changed"),
        ("a", "a", None, "server-changed"),
        ("c", "a", "b", "edited-locally"),
        ("c", None, "b", "edited-locally"),
        ("c", None, None, "not-generated"),
    ],
)
def test_states(local, locked, exported, state):
    assert repository_runs.file_state(local=local, locked=locked, exported=exported) == state


def test_rule_globs_are_read_as_the_tool_reads_its_frontmatter():
    cursor = TOOLS_BY_SLUG["cursor"]
    text = "---\nglobs: src/**/*.ts\nalwaysApply: false\n---\nTyped.\n"
    assert repository_runs.rule_globs(cursor, ".cursor/rules/ts.mdc", text) == ["src/**/*.ts"]
    assert (
        repository_runs.rule_globs(cursor, ".cursor/rules/plain.mdc", "No frontmatter.\n") is None
    )

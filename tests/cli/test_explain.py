"""`agentdocs explain --tool TOOL PATH`, run as a subprocess against a live server: the
answer in words and as JSON, and the exit codes."""

from __future__ import annotations

import json

import pytest

from agentdocs.core.agent_files import render_scoped
from tests.cli.test_main import run_cli
from tests.conftest import api_token_key

EXPLAIN = ("explain", "--tenant", "acme", "--project", "web")


@pytest.fixture
def server(live_server, reader, project, make_document):
    make_document(project, "agent.md", "- be kind\n")
    make_document(
        project, ".AGENTS/api.md", render_scoped({"globs": ["src/api/**"]}, "Thin views.\n")
    )
    return {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(reader)}


def test_explain_prints_the_files_in_load_order(server, tmp_path):
    result = run_cli(*EXPLAIN, "--tool", "codex", "src/api/handlers.py", cwd=tmp_path, env=server)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[0] == "codex (agents-md) for src/api/handlers.py, working in src/api/:"
    assert lines[1].startswith("1. AGENTS.md  ")
    assert lines[2].startswith("2. src/api/AGENTS.md  ")
    assert lines[3] == "     .AGENTS/api.md: its glob src/api/** matches src/api/handlers.py"

    as_json = run_cli(
        *EXPLAIN, "--tool", "claude-md", "--json", "src/api/x.py", cwd=tmp_path, env=server
    )
    assert as_json.returncode == 0, as_json.stderr
    answer = json.loads(as_json.stdout)
    assert answer["tool"] == "claude-code"
    assert [f["path"] for f in answer["files"]] == ["CLAUDE.md", "src/api/CLAUDE.md"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--tool", "Cursor", "a.py"), "`tool` must be one of"),
        (("--tool", "codex", "/etc/passwd"), "`path`"),
        (("--tool", "codex", "src/../../x"), "`path`"),
    ],
)
def test_usage_errors_exit_2_before_asking(server, tmp_path, argv, said):
    result = run_cli(*EXPLAIN, *argv, cwd=tmp_path, env=server)
    assert result.returncode == 2
    assert said in result.stderr.decode()


def test_a_server_error_exits_2(server, tmp_path):
    result = run_cli(
        "explain", "--tenant", "acme", "--project", "nope", "--tool", "codex", "a.py",
        cwd=tmp_path, env=server,
    )  # fmt: skip
    assert result.returncode == 2


def test_strict_exits_1_when_a_limit_cuts(server, tmp_path, project, make_document):
    make_document(project, ".AGENTS/long.md", ("- rule " + "y" * 60 + "\n") * 600)
    loose = run_cli(*EXPLAIN, "--tool", "codex", "README.md", cwd=tmp_path, env=server)
    assert loose.returncode == 0
    assert "warning AGENTS.md holds" in loose.stdout.decode()
    strict = run_cli(*EXPLAIN, "--tool", "codex", "--strict", "README.md", cwd=tmp_path, env=server)
    assert strict.returncode == 1

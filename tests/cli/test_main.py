"""The `agentdocs` command-line client, run as a subprocess against a live server."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path

import pytest

from agentdocs.services import policy as policy_service
from tests.conftest import api_token_key

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60):
    """``python -m agentdocs.cli`` with a clean environment: no AGENTDOCS_* leaks in."""
    base = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    base["PYTHONPATH"] = str(REPO)
    base.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "-m", "agentdocs.cli", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        timeout=timeout,
    )


def test_the_console_script_is_declared():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["scripts"]["agentdocs"] == "agentdocs.cli:main"


def test_the_client_imports_no_django():
    code = (
        "import sys, agentdocs.cli; "
        "print([m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.stdout.strip() == "[]"


# agentdocs context


def test_context_prints_sources_to_stderr_and_the_context_to_stdout(tmp_path):
    folder = tmp_path / ".AGENTS"
    folder.mkdir()
    (folder / "glossary.md").write_text("Zentinel: a WAF tuner\n", encoding="utf-8")
    (folder / "overview.md").write_text("Größe\n", encoding="utf-8")
    (folder / "big.md").write_text("é" * 600, encoding="utf-8")  # 1200 bytes
    (folder / "zz.md").write_text("late", encoding="utf-8")
    result = run_cli("context", ".AGENTS", "--max-bytes", "600", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode("utf-8")
    assert out.startswith('<context path=".AGENTS/overview.md">\nGröße\n</context>')
    assert out.index("glossary.md") < out.index("big.md")
    overview_bytes = len("Größe\n".encode())
    glossary_bytes = len(b"Zentinel: a WAF tuner\n")
    head = 600 - overview_bytes - glossary_bytes
    head -= head % 2  # never half an é
    assert result.stderr.decode("utf-8").splitlines() == [
        f"# context .AGENTS/overview.md ({overview_bytes}B)",
        f"# context .AGENTS/glossary.md ({glossary_bytes}B)",
        f"# context .AGENTS/big.md ({head}B, truncated)",
        "# dropped .AGENTS/zz.md (4B)",
    ]
    assert f"[truncated: {1200 - head} more bytes]" in out


def test_context_on_a_missing_folder_is_empty_and_succeeds(tmp_path):
    result = run_cli("context", "nowhere", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_context_refuses_a_negative_budget(tmp_path):
    result = run_cli("context", ".AGENTS", "--max-bytes", "-1", cwd=tmp_path)
    assert result.returncode == 2


# agentdocs block, against a live server


@pytest.fixture
def server(live_server, tenant, project, vance, make_document, reader, admin):
    make_document(vance, "agent.md", "# House rules\n- be kind\n")
    make_document(project, ".AGENTS/overview.md", "What this is.\n")
    policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={},
        profiles={"cli": {"useClientAgentDoc": True}, "web": {}},
        user=admin,
    )
    token = api_token_key(reader)
    return {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": token}


def block_args(process: str, *extra: str) -> list[str]:
    return ["block", "--tenant", "acme", "--project", "web", "--process", process, *extra]


def test_block_uploads_the_first_agent_file_and_prints_the_block(server, tmp_path):
    (tmp_path / "CLAUDE.md").write_text("claude file", encoding="utf-8")
    (tmp_path / "AGENT.md").write_text("agent file: ünïcode", encoding="utf-8")
    process = f"cli-{uuid.uuid4()}"
    result = run_cli(
        *block_args(process, "--recipe", "coder", "--profile", "cli"), cwd=tmp_path, env=server
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode("utf-8")
    assert "## Agent Notes (from _vance: agent.md)\n\n# House rules" in out
    assert "## Agent Notes (from client: AGENT.md)\n\nagent file: ünïcode" in out
    assert "claude file" not in out
    house_rules, client, context = (
        len(b"# House rules\n- be kind\n"),
        len("agent file: ünïcode".encode()),
        len(b"What this is.\n"),
    )
    assert result.stderr.decode().splitlines() == [
        "# layer policy (0B, absent)",
        f"# layer agent.md ({house_rules}B, full)",
        f"# layer AGENT.md ({client}B, full)",
        f"# layer .AGENTS/ ({context}B, full)",
    ]

    again = run_cli(
        *block_args(process, "--recipe", "coder", "--profile", "cli"), cwd=tmp_path, env=server
    )
    assert "Agent notes unchanged from an earlier turn" in again.stdout.decode()
    assert "# layer agent.md (24B, unchanged)" in again.stderr.decode()

    reset = run_cli(
        *block_args(process, "--recipe", "coder", "--profile", "cli", "--reset"),
        cwd=tmp_path,
        env=server,
    )
    assert "# House rules" in reset.stdout.decode()


def test_the_installed_console_script_renders_a_block(server, tmp_path):
    script = Path(sys.executable).with_name("agentdocs")
    if not script.exists():
        pytest.skip(f"agentdocs is not installed next to {sys.executable} (pip install -e .)")
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    result = subprocess.run(
        [str(script), *block_args(f"p-{uuid.uuid4()}")],
        cwd=tmp_path,
        env={**env, **server},
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "## Agent Notes (from _vance: agent.md)" in result.stdout.decode()


def test_vancetope_md_comes_first_and_flags_override_the_search(server, tmp_path):
    (tmp_path / "VANCETOPE.md").write_text("vancetope", encoding="utf-8")
    (tmp_path / "AGENT.md").write_text("agent", encoding="utf-8")
    other = tmp_path / "elsewhere.md"
    other.write_text("explicit file", encoding="utf-8")
    profile = ("--recipe", "coder", "--profile", "cli")

    found = run_cli(*block_args(f"p-{uuid.uuid4()}", *profile), cwd=tmp_path, env=server)
    assert "(from client: VANCETOPE.md)\n\nvancetope" in found.stdout.decode()

    explicit = run_cli(
        *block_args(f"p-{uuid.uuid4()}", *profile, "--agent-file", str(other)),
        cwd=tmp_path,
        env=server,
    )
    assert "(from client: elsewhere.md)\n\nexplicit file" in explicit.stdout.decode()

    none = run_cli(
        *block_args(f"p-{uuid.uuid4()}", *profile, "--no-agent-file"), cwd=tmp_path, env=server
    )
    assert "from client" not in none.stdout.decode()
    assert "# layer client_notes (0B, absent)" in none.stderr.decode()


def test_without_opt_in_the_uploaded_file_is_ignored(server, tmp_path):
    (tmp_path / "CLAUDE.md").write_text("claude file", encoding="utf-8")
    result = run_cli(
        *block_args(f"p-{uuid.uuid4()}", "--recipe", "coder", "--profile", "web"),
        cwd=tmp_path,
        env=server,
    )
    assert result.returncode == 0
    assert "claude file" not in result.stdout.decode()
    assert "# layer CLAUDE.md (11B, ignored)" in result.stderr.decode()


def test_url_and_token_may_be_flags(server, tmp_path):
    env = {"AGENTDOCS_TENANT": "acme", "AGENTDOCS_PROJECT": "web"}
    result = run_cli(
        "block",
        "--url",
        server["AGENTDOCS_URL"],
        "--token",
        server["AGENTDOCS_TOKEN"],
        "--process",
        "flags",
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "# House rules" in result.stdout.decode()


def test_a_server_error_exits_non_zero_with_the_servers_message(server, tmp_path):
    result = run_cli(*block_args("p", "--recipe", "nope"), cwd=tmp_path, env=server)
    assert result.returncode == 1
    assert result.stdout == b""
    assert "No recipe 'nope' in this tenant. (not_found, field recipe; HTTP 404)" in (
        result.stderr.decode()
    )


def test_an_oversized_agent_file_is_refused_by_the_server(server, tmp_path):
    (tmp_path / "CLAUDE.md").write_text("x" * (256 * 1024 + 1), encoding="utf-8")
    result = run_cli(*block_args("p"), cwd=tmp_path, env=server)
    assert result.returncode == 1
    assert "field client_document.body; HTTP 400" in result.stderr.decode()


def test_a_bad_token_or_an_outsiders_project_fails(server, tmp_path, outsider, other_tenant):
    bad = run_cli(*block_args("p"), cwd=tmp_path, env={**server, "AGENTDOCS_TOKEN": "nope"})
    assert bad.returncode == 1 and "HTTP 401" in bad.stderr.decode()
    outsider_token = api_token_key(outsider)
    foreign = run_cli(
        *block_args("p"), cwd=tmp_path, env={**server, "AGENTDOCS_TOKEN": outsider_token}
    )
    assert foreign.returncode == 1 and "HTTP 404" in foreign.stderr.decode()


def test_missing_connection_settings_are_a_usage_error(tmp_path):
    result = run_cli(*block_args("p"), cwd=tmp_path)
    assert result.returncode == 2
    assert "--url, --token missing" in result.stderr.decode()


def test_an_unreachable_server_is_reported(tmp_path):
    env = {"AGENTDOCS_URL": "http://127.0.0.1:9", "AGENTDOCS_TOKEN": "t"}
    result = run_cli(*block_args("p"), cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert "cannot reach http://127.0.0.1:9/api/v1/" in result.stderr.decode()

"""`agentdocs hooks` and `agentdocs hook session-start`, run as subprocesses: the hook
settings files of every tool with a session hook, and the installed hook run the way the
tool runs it, against a live server."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentdocs.core import targets
from agentdocs.models import BindingRecord
from config.celery import app as celery_app
from tests.conftest import api_token_key

REPO = Path(__file__).resolve().parents[2]
HOOK_TOOLS = list(targets.SESSION_HOOKS)

EXISTING_CLAUDE_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "env": {"FOO": "1"},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
    },
}


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    base = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    base["PYTHONPATH"] = str(REPO)
    base.pop("DJANGO_SETTINGS_MODULE", None)
    return {**base, **(env or {})}


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentdocs.cli", *args],
        cwd=cwd,
        env=_environment(env),
        input=stdin,
        capture_output=True,
        timeout=60,
    )


def run_installed_hook(
    repo: Path, tool: str, stdin: bytes, env: dict[str, str]
) -> subprocess.CompletedProcess:
    """Run the command `hooks install` wrote into ``tool``'s file, as the tool would: in
    the repository, with the hook input on stdin."""
    hook = targets.SESSION_HOOKS[tool].session_hook
    assert hook is not None
    settings = json.loads((repo / hook.file).read_text())
    entries = settings["hooks"][hook.event]
    handlers = entries if hook.shape == "flat" else [h for e in entries for h in e["hooks"]]
    (command,) = [h["command"] for h in handlers if h["command"].startswith("agentdocs ")]
    argv = shlex.split(command)
    return run_cli(*argv[1:], cwd=repo, env=env, stdin=stdin)


@pytest.fixture
def repo(tmp_path):
    folder = tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "CLAUDE.md").write_text("# Rules\n", encoding="utf-8")
    return folder


# Installing, uninstalling, listing


def test_install_merges_into_existing_claude_settings_and_keeps_every_other_key(repo):
    settings_file = repo / ".claude" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps(EXISTING_CLAUDE_SETTINGS, indent=4), encoding="utf-8")

    result = run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)

    assert result.returncode == 0, result.stderr.decode()
    settings = json.loads(settings_file.read_text())
    assert settings["permissions"] == EXISTING_CLAUDE_SETTINGS["permissions"]
    assert settings["env"] == {"FOO": "1"}
    assert settings["hooks"]["PreToolUse"] == EXISTING_CLAUDE_SETTINGS["hooks"]["PreToolUse"]
    first, ours = settings["hooks"]["SessionStart"]
    assert first == EXISTING_CLAUDE_SETTINGS["hooks"]["SessionStart"][0]
    assert ours == {
        "hooks": [{"type": "command", "command": "agentdocs hook session-start --tool claude-code"}]
    }
    assert list(settings) == ["permissions", "env", "hooks"]


def test_installing_twice_changes_nothing(repo):
    assert run_cli("hooks", "install", "--tool", "claude-code", cwd=repo).returncode == 0
    settings_file = repo / ".claude" / "settings.json"
    before = settings_file.read_bytes()
    mtime = settings_file.stat().st_mtime_ns

    again = run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)

    assert again.returncode == 0
    assert b"already installed" in again.stdout
    assert settings_file.read_bytes() == before
    assert settings_file.stat().st_mtime_ns == mtime


def test_uninstall_restores_the_settings_as_they_were(repo):
    settings_file = repo / ".claude" / "settings.json"
    settings_file.parent.mkdir()
    original = json.dumps(EXISTING_CLAUDE_SETTINGS, indent=2) + "\n"
    settings_file.write_text(original, encoding="utf-8")
    run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)

    result = run_cli("hooks", "uninstall", "--tool", "claude-code", cwd=repo)

    assert result.returncode == 0, result.stderr.decode()
    assert settings_file.read_text() == original
    again = run_cli("hooks", "uninstall", "--tool", "claude-code", cwd=repo)
    assert again.returncode == 0 and b"not installed" in again.stdout
    assert settings_file.read_text() == original


@pytest.mark.parametrize("tool", HOOK_TOOLS)
def test_every_tool_with_a_session_hook_gets_its_own_file_and_loses_it_again(repo, tool):
    hook = targets.SESSION_HOOKS[tool].session_hook
    assert hook is not None

    result = run_cli("hooks", "install", "--tool", tool, cwd=repo)

    assert result.returncode == 0, result.stderr.decode()
    settings = json.loads((repo / hook.file).read_text())
    command = f"agentdocs hook session-start --tool {tool}"
    if hook.shape == "flat":
        assert settings == {"version": 1, "hooks": {hook.event: [{"command": command}]}}
    else:
        assert settings == {
            "hooks": {hook.event: [{"hooks": [{"type": "command", "command": command}]}]}
        }
    listing = run_cli("hooks", "list", cwd=repo).stdout.decode()
    row = next(line for line in listing.splitlines() if line.startswith(tool + " "))
    assert row.split()[-1] == "installed"

    assert run_cli("hooks", "uninstall", "--tool", tool, cwd=repo).returncode == 0
    assert not (repo / hook.file).exists()
    assert not (repo / hook.file).parent.exists()


def test_cursor_keeps_the_hooks_already_in_its_file(repo):
    hooks_file = repo / ".cursor" / "hooks.json"
    hooks_file.parent.mkdir()
    existing = {"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}}
    hooks_file.write_text(json.dumps(existing), encoding="utf-8")

    run_cli("hooks", "install", "--tool", "cursor", cwd=repo)
    installed = json.loads(hooks_file.read_text())
    run_cli("hooks", "uninstall", "--tool", "cursor", cwd=repo)

    assert installed["hooks"]["afterFileEdit"] == [{"command": "./format.sh"}]
    assert installed["hooks"]["sessionStart"] == [
        {"command": "agentdocs hook session-start --tool cursor"}
    ]
    assert json.loads(hooks_file.read_text()) == existing


@pytest.mark.parametrize(
    "content", [b'{"hooks": {', b"[1, 2]", b'{"hooks": []}', b"\xff\xfe not text"]
)
def test_a_file_the_tool_could_not_read_is_never_rewritten(repo, content):
    settings_file = repo / ".claude" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_bytes(content)

    result = run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)

    assert result.returncode == 2
    assert b"left as it is" in result.stderr
    assert settings_file.read_bytes() == content
    assert sorted(p.name for p in settings_file.parent.iterdir()) == ["settings.json"]


def test_a_tool_without_a_documented_session_hook_is_refused_with_the_ones_that_have_one(repo):
    result = run_cli("hooks", "install", "--tool", "windsurf", cwd=repo)

    assert result.returncode == 2
    message = result.stderr.decode()
    assert "no documented session hook" in message and "agentdocs run" in message
    assert all(tool in message for tool in HOOK_TOOLS)
    unknown = run_cli("hooks", "install", "--tool", "emacs", cwd=repo)
    assert unknown.returncode == 2 and b"not a tool agentdocs knows" in unknown.stderr
    assert sorted(p.name for p in repo.iterdir()) == [".git", "CLAUDE.md"]


def test_list_tells_installed_outdated_unreadable_and_absent_apart(repo):
    run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)
    gemini = repo / ".gemini" / "settings.json"
    gemini.parent.mkdir()
    older = {"type": "command", "command": "agentdocs hook session-start --tool gemini-cli --v0"}
    gemini.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [older]}]}}))
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "hooks.json").write_text("{")

    result = run_cli("hooks", "list", cwd=repo)

    assert result.returncode == 0
    states = {line.split()[0]: line.split()[-1] for line in result.stdout.decode().splitlines()}
    assert states == {
        "TOOL": "STATE",
        "claude-code": "installed",
        "gemini-cli": "outdated",
        "cursor": "unreadable",
        "codex": "-",
    }
    assert run_cli("hooks", "install", "--tool", "gemini-cli", cwd=repo).returncode == 0
    (group,) = json.loads(gemini.read_text())["hooks"]["SessionStart"]
    assert group["hooks"][0]["command"] == "agentdocs hook session-start --tool gemini-cli"


def test_a_folder_that_is_not_there_is_refused_and_not_created(tmp_path):
    missing = tmp_path / "nowhere"
    result = run_cli("hooks", "install", "--tool", "codex", "--dir", str(missing), cwd=tmp_path)
    assert result.returncode == 2 and b"is not a folder" in result.stderr
    assert not missing.exists()


def test_the_registry_format_names_the_same_hook(repo):
    result = run_cli("hooks", "install", "--tool", "claude-md", cwd=repo)

    assert result.returncode == 0, result.stderr.decode()
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == "agentdocs hook session-start --tool claude-code"


# The installed hook, run as the tool runs it


@pytest.fixture
def server(live_server, settings, tmp_path, project, writer, make_document):
    settings.MEDIA_ROOT = tmp_path / "media"
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    make_document(project, "CLAUDE.md", "# Rules\n")
    yield {
        "AGENTDOCS_URL": live_server.url,
        "AGENTDOCS_TOKEN": api_token_key(writer),
        "AGENTDOCS_TENANT": "acme",
        "AGENTDOCS_PROJECT": "web",
    }
    celery_app.conf.task_always_eager = eager


CLAUDE_INPUT = json.dumps(
    {
        "session_id": "claude-session-4f2a",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": ".",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
).encode()


def _one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0
    assert result.stdout == b""  # stdout is the agent's context: nothing of ours goes there
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_the_installed_hook_exits_0_with_one_line_when_the_bind_fails(server, repo):
    run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)
    # A token the server refuses makes the bind fail whatever `bind` supports.
    env = {**server, "AGENTDOCS_TOKEN": "not-a-token"}

    line = _one_line(run_installed_hook(repo, "claude-code", CLAUDE_INPUT, env))

    assert "claude-session-4f2a not bound:" in line
    assert not BindingRecord.objects.exists()


@pytest.mark.parametrize(
    "stdin", [b"", b"{not json", b"[]", b'{"session_id": 7}', b"\xff" * 10, b"x" * 2_000_000]
)
def test_bad_hook_input_still_exits_0_with_one_line(server, repo, stdin):
    run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)

    line = _one_line(run_installed_hook(repo, "claude-code", stdin, server))

    assert line.startswith("agentdocs: claude-md run claude-code-")
    assert line.endswith("(no session id in the hook's input: a new id was used)")


def test_the_hook_exits_0_with_one_line_when_the_server_is_down(repo):
    run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    env = {
        "AGENTDOCS_URL": f"http://127.0.0.1:{port}",
        "AGENTDOCS_TOKEN": "t",
        "AGENTDOCS_TENANT": "acme",
        "AGENTDOCS_PROJECT": "web",
    }

    line = _one_line(run_installed_hook(repo, "claude-code", CLAUDE_INPUT, env))

    assert "not bound:" in line


def test_an_unknown_tool_in_a_hand_edited_hook_still_exits_0(repo):
    line = _one_line(run_cli("hook", "session-start", "--tool", "emacs", cwd=repo))
    assert line.startswith("agentdocs: not bound:")


def test_the_hook_records_the_session_as_a_binding_record(server, repo):
    run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)

    line = _one_line(run_installed_hook(repo, "claude-code", CLAUDE_INPUT, server))

    record = BindingRecord.objects.get(process="claude-session-4f2a")
    assert f"bound as record {record.pk}" in line


def test_a_bind_that_hangs_is_stopped_at_the_cap(repo):
    # A server that accepts the connection and never answers.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        env = {
            "AGENTDOCS_URL": f"http://127.0.0.1:{silent.getsockname()[1]}",
            "AGENTDOCS_TOKEN": "t",
            "AGENTDOCS_TENANT": "acme",
            "AGENTDOCS_PROJECT": "web",
            "AGENTDOCS_BIND_TIMEOUT": "2",
        }
        run_cli("hooks", "install", "--tool", "claude-code", cwd=repo)
        started = time.monotonic()
        line = _one_line(run_installed_hook(repo, "claude-code", CLAUDE_INPUT, env))
        elapsed = time.monotonic() - started

    assert "took over 2 s and was stopped" in line
    assert elapsed < 30

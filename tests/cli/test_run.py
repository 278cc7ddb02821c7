"""`agentdocs run`: a bind that never stands in the way, then the command, whose exit code
is the run's."""

from __future__ import annotations

import socket
import sys

import pytest

from tests.cli.test_hooks import run_cli


@pytest.fixture
def down() -> dict[str, str]:
    """Connection settings for a server that is not there."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    return {
        "AGENTDOCS_URL": f"http://127.0.0.1:{port}",
        "AGENTDOCS_TOKEN": "t",
        "AGENTDOCS_TENANT": "acme",
        "AGENTDOCS_PROJECT": "web",
    }


@pytest.mark.parametrize("code", [0, 1, 3, 42])
def test_the_commands_exit_code_is_the_runs(tmp_path, down, code):
    result = run_cli(
        "run",
        "--tool",
        "agents-md",
        "--",
        sys.executable,
        "-c",
        f"raise SystemExit({code})",
        cwd=tmp_path,
        env=down,
    )
    assert result.returncode == code


def test_the_command_runs_when_the_server_is_down_with_one_line_about_the_bind(tmp_path, down):
    script = "import os, sys; print('agent ran', os.environ['AGENTDOCS_PROCESS'], sys.argv[1:])"
    result = run_cli(
        "run",
        "--tool",
        "codex",
        "--process",
        "run-7",
        "--",
        sys.executable,
        "-c",
        script,
        "--tool",
        "x",
        cwd=tmp_path,
        env=down,
    )

    assert result.returncode == 0
    assert result.stdout.decode() == "agent ran run-7 ['--tool', 'x']\n"
    (line,) = result.stderr.decode().splitlines()
    assert line.startswith("agentdocs: agents-md run run-7 not bound:")


def test_a_signal_that_ends_the_command_is_reported_as_a_shell_would(tmp_path, down):
    script = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    result = run_cli(
        "run", "--tool", "zed", "--", sys.executable, "-c", script, cwd=tmp_path, env=down
    )
    assert result.returncode == 128 + 15


def test_a_missing_command_is_127_after_the_bind(tmp_path, down):
    result = run_cli("run", "--tool", "zed", "--", "no-such-agent-xyz", cwd=tmp_path, env=down)
    assert result.returncode == 127
    assert b"no-such-agent-xyz: command not found" in result.stderr


@pytest.mark.parametrize("args", [["--tool", "zed"], ["--tool", "emacs", "--"]])
def test_usage_errors_exit_2_and_run_nothing(tmp_path, down, args):
    marker = tmp_path / "ran"
    command = (
        [] if args == ["--tool", "zed"] else [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    )
    result = run_cli("run", *args, *command, cwd=tmp_path, env=down)
    assert result.returncode == 2
    assert (b"no COMMAND to run" if not command else b"unknown tool 'emacs'") in result.stderr
    assert not marker.exists()


def test_a_tool_a_format_serves_runs_bound_to_that_format(tmp_path, down):
    """`--tool amp`: Amp reads AGENTS.md, so the run is bound as the `agents-md` format's."""
    script = "import os; print(os.environ['AGENTDOCS_PROCESS'])"
    result = run_cli(
        "run", "--tool", "amp", "--process", "run-8", "--", sys.executable, "-c", script,
        cwd=tmp_path, env=down,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == "run-8\n"
    (line,) = result.stderr.decode().splitlines()
    assert line.startswith("agentdocs: agents-md run run-8 not bound:")

"""Binding a run without ever holding up the agent: what hooks and `agentdocs run` share.

`bind_quietly` runs `agentdocs bind --repo DIR --tool TOOL --process ID` as a child
process, capped at `bind_timeout()` seconds, and sums up what happened in one line;
whatever happens (no server, a refusal, a crash, the cap) it returns that line and
never raises, so the caller goes on with the agent's session. The child is a process
of its own so the cap holds even when the network hangs, and its output (the record's
JSON) stays out of the agent's context.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BIND_TIMEOUT_ENV = "AGENTDOCS_BIND_TIMEOUT"
DEFAULT_BIND_TIMEOUT_SECONDS = 10.0
EXIT_PROBLEMS = 1


def bind_timeout() -> float:
    """The cap, from $AGENTDOCS_BIND_TIMEOUT; a value that is not a positive number of
    seconds falls back to the default (a hook has nowhere to report a bad setting)."""
    raw = os.environ.get(BIND_TIMEOUT_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_BIND_TIMEOUT_SECONDS
    return value if 0 < value <= 600 else DEFAULT_BIND_TIMEOUT_SECONDS


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def bind_quietly(*, repo: Path, tool: str, process: str) -> str:
    """Bind ``process`` for ``tool``'s files in ``repo``; one line saying how it went."""
    timeout = bind_timeout()
    argv = [sys.executable, "-m", "agentdocs.cli", "bind", "--repo", str(repo)]
    argv += ["--tool", tool, "--process", process]
    prefix = f"agentdocs: {tool} run {process}"
    try:
        result = subprocess.run(
            argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
        )
    except subprocess.TimeoutExpired:
        return f"{prefix} not bound: the bind took over {timeout:g} s and was stopped"
    except OSError as error:
        return f"{prefix} not bound: cannot start the bind: {error.strerror}"
    stderr = result.stderr.decode("utf-8", "replace")
    if result.returncode not in (0, EXIT_PROBLEMS):
        return f"{prefix} not bound: {_last_line(stderr)}"
    try:
        record = json.loads(result.stdout)
        record_id = record["id"]
    except (ValueError, KeyError, TypeError):
        return f"{prefix} not bound: {_last_line(stderr)}"
    if result.returncode == EXIT_PROBLEMS:
        return (
            f"{prefix} bound as record {record_id}, with problems: {_last_line(stderr)} "
            f"(agentdocs outdated {record_id})"
        )
    return f"{prefix} bound as record {record_id}"

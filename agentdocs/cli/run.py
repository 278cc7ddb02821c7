"""`agentdocs run`: bind a run, then run the agent, for tools without session hooks.

    agentdocs run --tool TOOL [--process ID] [--dir .] -- COMMAND [ARG ...]

Binds TOOL's files in DIR as the run ID (`agentdocs.cli.quiet_bind`: capped, and a
failed bind is one line on stderr, never a reason not to run), then runs COMMAND with
$AGENTDOCS_PROCESS set to the run's id and exits with COMMAND's exit code (128 + N
when a signal N ended it, as shells report it).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from agentdocs.cli.base import EXIT_USAGE, CommandError, command, write
from agentdocs.cli.quiet_bind import bind_quietly
from agentdocs.core import targets

EXIT_NOT_FOUND = 127  # what a shell answers for a command it cannot find
EXIT_NOT_EXECUTABLE = 126


def _wait_for_the_agent(signum: int, frame: object) -> None:
    """Ctrl-C is the agent's to handle; agentdocs waits for its exit code."""


def _configure_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tool",
        required=True,
        help="the tool whose files COMMAND reads: a registry format or a tool's id "
        "(`export/formats` lists each format's tool_id and also_read_by)",
    )
    parser.add_argument(
        "--process",
        default=os.environ.get("AGENTDOCS_PROCESS"),
        help="the run's id (default: $AGENTDOCS_PROCESS, else a new id)",
    )
    parser.add_argument("--dir", type=Path, default=Path("."), help="the repository (default: .)")
    parser.add_argument("agent", nargs=argparse.REMAINDER, metavar="-- COMMAND ...")


@command(
    "run", help="bind a run, then run COMMAND (for tools without hooks)", configure=_configure_run
)
def run_run(args: argparse.Namespace) -> int:
    agent = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    if not agent:
        raise CommandError(
            "no COMMAND to run: agentdocs run --tool TOOL -- COMMAND ...", exit_code=EXIT_USAGE
        )
    entry = targets.named(args.tool)
    if entry is None:
        raise CommandError(
            f"unknown tool {args.tool!r}; known: {', '.join(targets.FORMATS)}, and the tools' "
            f"ids {', '.join(t for t in targets.TOOLS_BY_SLUG if t not in targets.BY_FORMAT)}",
            exit_code=EXIT_USAGE,
        )
    process = args.process or f"run-{uuid.uuid4()}"
    write(sys.stderr, bind_quietly(repo=args.dir, tool=entry.format, process=process) + "\n")
    environment = {**os.environ, "AGENTDOCS_PROCESS": process}
    try:
        # Ctrl-C reaches the agent (the terminal signals the whole group) and we wait
        # for its exit code. A handler, not SIG_IGN: an ignored signal would stay
        # ignored in the agent, a handler is reset when it starts.
        previous = signal.signal(signal.SIGINT, _wait_for_the_agent)
        try:
            returncode = subprocess.call(agent, env=environment)
        finally:
            signal.signal(signal.SIGINT, previous)
    except FileNotFoundError:
        write(sys.stderr, f"agentdocs run: {agent[0]}: command not found\n")
        return EXIT_NOT_FOUND
    except PermissionError:
        write(sys.stderr, f"agentdocs run: {agent[0]}: permission denied\n")
        return EXIT_NOT_EXECUTABLE
    return 128 - returncode if returncode < 0 else returncode

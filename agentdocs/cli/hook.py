"""`agentdocs hook session-start|context`: what the hooks `agentdocs hooks install` adds run.

    agentdocs hook session-start --tool TOOL [--dir .]
    agentdocs hook context --tool TOOL [--dir .] [...]   (agentdocs.cli.hook_context)

`hook session-start` reads the session's id from the JSON the tool writes to its stdin,
binds the run (`agentdocs.cli.quiet_bind`) and always exits 0 with one line on stderr:
a hook must never keep an agent from starting, and stdout is the agent's context
(Claude Code) or must be JSON (Gemini CLI). `hook context` writes the Memory Block into
the session (`--deliver`).

A module of its own, apart from `agentdocs hooks`: it runs at every agent session's
start, so it imports the hooks' declarations (`agentdocs.core.session_hooks`) and not
the target registry the installer resolves names with.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

from agentdocs.cli import hook_context
from agentdocs.cli.base import EXIT_OK, CommandError, command, write
from agentdocs.core.session_hooks import SESSION_HOOKS, SessionHook

# The hook input is a small JSON object; more than this is not one.
MAX_HOOK_INPUT_BYTES = 1024 * 1024
STDIN_WAIT_SECONDS = 2.0
MAX_PROCESS_ID_LENGTH = 200


def _read_hook_input() -> bytes:
    """What the tool wrote to stdin, read for at most `STDIN_WAIT_SECONDS` (a terminal,
    or a pipe nobody closes, gives nothing rather than a wait)."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return b""
    chunks: list[bytes] = []

    def read() -> None:
        chunks.append(stream.buffer.read(MAX_HOOK_INPUT_BYTES + 1))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(STDIN_WAIT_SECONDS)
    return chunks[0] if chunks else b""


def session_id_from(raw: bytes, hook: SessionHook) -> str | None:
    """The session's id in the hook input, or None when there is none to use."""
    if not raw or len(raw) > MAX_HOOK_INPUT_BYTES:
        return None
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(payload, dict):
        return None
    for key in hook.session_keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip() and len(value) <= MAX_PROCESS_ID_LENGTH:
            return value.strip()
    return None


def _configure_hook(parser: argparse.ArgumentParser) -> None:
    events = parser.add_subparsers(dest="event", metavar="EVENT", required=True)
    start = events.add_parser(
        "session-start", help="bind the session that is starting (run by the tool's hook)"
    )
    start.add_argument("--tool", required=True, help=f"one of {', '.join(SESSION_HOOKS)}")
    start.add_argument("--dir", type=Path, default=Path("."), help="the repository (default: .)")
    context = events.add_parser(
        "context",
        help="write the Memory Block in the form the tool reads (run by `--deliver` hooks)",
    )
    hook_context.configure(context)


@command("hook", help="what an installed hook runs; always exits 0", configure=_configure_hook)
def run_hook(args: argparse.Namespace) -> int:
    if args.event == "context":
        return hook_context.run_context(args, _read_hook_input())
    try:
        line = _session_start(args)
    except CommandError as error:
        line = f"agentdocs: not bound: {error.message}"
    except Exception as error:  # whatever it is, the agent goes on
        line = f"agentdocs: not bound: {type(error).__name__}: {error}"
    write(sys.stderr, line + "\n")
    return EXIT_OK


def _session_start(args: argparse.Namespace) -> str:
    # Only session-start binds, through a child process that loads the target registry
    # anyway; `hook context` sits on every session's start and imports neither.
    from agentdocs.cli.hooks import hook_target, session_hook
    from agentdocs.cli.quiet_bind import bind_quietly

    entry = hook_target(args.tool)
    hook = session_hook(entry)
    session = session_id_from(_read_hook_input(), hook)
    process = session or hook_context.new_process_id(hook.tool)
    line = bind_quietly(repo=args.dir, tool=entry.format, process=process)
    if session is None:
        line += " (no session id in the hook's input: a new id was used)"
    return line

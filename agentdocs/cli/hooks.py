"""`agentdocs hooks install|uninstall|list`: agents' session hooks in a repository.

    agentdocs hooks install --tool TOOL [--dir .] [--deliver]
    agentdocs hooks uninstall --tool TOOL [--dir .]
    agentdocs hooks list [--dir .]

`hooks install` adds a session-start hook to the tool's hook settings in the repository
(`.claude/settings.json`, ...; the registry's `session_hook` says which file and how),
keeping every other key and hook; installing twice changes nothing, and a file that is
not a JSON object is left alone (exit 2). `uninstall` takes out exactly what `install`
added. The hook runs `agentdocs hook session-start` (`agentdocs.cli.hook`), which binds
the session; `--deliver` adds the hooks that run `agentdocs hook context`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from agentdocs.cli.base import EXIT_OK, EXIT_USAGE, CommandError, command, write
from agentdocs.core import targets
from agentdocs.core.hook_settings import (
    HookSettingsError,
    context_hook,
    hook_add,
    hook_command,
    hook_installed,
    hook_remove,
)
from agentdocs.core.session_hooks import SessionHook
from agentdocs.core.targets import Target


def hook_target(name: str) -> Target:
    """The registry's entry ``name`` names (its hook's tool, its format, or a tool it
    serves) when it has a session hook; else CommandError (exit 2) naming those that do."""
    entry = targets.named(name)
    if entry is None or entry.session_hook is None:
        known = ", ".join(targets.SESSION_HOOKS)
        what = "has no documented session hook" if entry else "is not a tool agentdocs knows"
        raise CommandError(
            f"{name!r} {what}; tools with session hooks: {known} "
            "(for the others, `agentdocs run --tool TOOL -- COMMAND`)",
            exit_code=EXIT_USAGE,
        )
    return entry


def session_hook(entry: Target) -> SessionHook:
    assert entry.session_hook is not None
    return entry.session_hook


def _read_settings(path: Path) -> dict[str, Any] | None:
    """The settings in ``path`` (None when there is no file); CommandError (exit 2) for
    a file that is not a JSON object, which is then never rewritten."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}", exit_code=EXIT_USAGE) from None
    try:
        settings = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise CommandError(
            f"{path} is not UTF-8 text; left as it is", exit_code=EXIT_USAGE
        ) from None
    except json.JSONDecodeError as error:
        raise CommandError(
            f"{path} is not valid JSON ({error.msg} at line {error.lineno}, column "
            f"{error.colno}); left as it is",
            exit_code=EXIT_USAGE,
        ) from None
    if not isinstance(settings, dict):
        raise CommandError(
            f"{path} holds a JSON {type(settings).__name__}, not an object; left as it is",
            exit_code=EXIT_USAGE,
        )
    return settings


def _write_settings(path: Path, settings: dict[str, Any]) -> None:
    """Write ``settings`` whole or not at all (a temporary file moved into place)."""
    text = json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
    temporary = path.with_name(f".{path.name}.agentdocs-{os.urandom(4).hex()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, "utf-8")
        temporary.replace(path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise CommandError(f"cannot write {path}: {error.strerror}") from None


def _remove_settings(path: Path) -> None:
    """Remove the file install created, and its folder when that is left empty."""
    try:
        path.unlink()
        if not any(path.parent.iterdir()):
            path.parent.rmdir()
    except OSError as error:
        raise CommandError(f"cannot remove {path}: {error.strerror}") from None


def _configure_hooks(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, help in (
        ("install", "add agentdocs' session-start hook to TOOL's hook settings"),
        ("uninstall", "take out what `hooks install` added"),
    ):
        sub = actions.add_parser(action, help=help, description=help)
        sub.add_argument("--tool", required=True, help=f"one of {', '.join(targets.SESSION_HOOKS)}")
        sub.add_argument("--dir", type=Path, default=Path("."), help="the repository (default: .)")
        sub.add_argument(
            "--deliver",
            action="store_true",
            help="the hooks that write the Memory Block into every session, at its start "
            "and wherever the tool rebuilds its context (`agentdocs hook context`; "
            f"{', '.join(targets.CONTEXT_HOOKS)}); uninstall takes out both kinds",
        )
    listing = actions.add_parser("list", help="show which tools' hooks are installed")
    listing.add_argument("--dir", type=Path, default=Path("."), help="the repository (default: .)")


def _context_target(name: str) -> Target:
    entry = hook_target(name)
    if session_hook(entry).context_events:
        return entry
    known = ", ".join(targets.CONTEXT_HOOKS)
    raise CommandError(
        f"{name!r} documents no hook that can add context at session start; tools that do: {known}",
        exit_code=EXIT_USAGE,
    )


def _change_context(args: argparse.Namespace, *, install: bool) -> int:
    """Install (or take out) the context hooks of ``--deliver``; an uninstall takes out
    the session-start hook as well."""
    entry = _context_target(args.tool) if install else hook_target(args.tool)
    hook = session_hook(entry)
    path = args.dir / hook.file
    settings = _read_settings(path)
    existed = settings is not None
    settings = settings if settings is not None else {}
    changed: list[str] = []
    try:
        for event in hook.context_events:
            one = context_hook(hook, event)
            done = (
                hook_add(settings, one, "context")
                if install
                else hook_remove(settings, one, "context")
            )
            if done:
                changed.append(event.event)
        if not install and hook_remove(settings, hook):
            changed.append(f"{hook.event} (session-start)")
    except HookSettingsError as error:
        raise CommandError(f"{path}: {error}; left as it is", exit_code=EXIT_USAGE) from None
    if not changed:
        state = "already installed" if install else "not installed"
        write(sys.stdout, f"{hook.tool}: {state} in {path}; nothing changed\n")
        return EXIT_OK
    if not install and not settings and existed:
        _remove_settings(path)
        write(sys.stdout, f"{hook.tool}: removed {path} (it held only agentdocs' hooks)\n")
        return EXIT_OK
    _write_settings(path, settings)
    if install:
        command = hook_command(hook, "context")
        lines = "".join(
            f"{hook.tool}: installed `{command}` as the {event} hook in {path}\n"
            for event in changed
        )
        if hook.note:
            lines += f"{hook.tool}: note: {hook.note}\n"
    else:
        lines = "".join(
            f"{hook.tool}: removed agentdocs' {event} hook from {path}\n" for event in changed
        )
    write(sys.stdout, lines)
    return EXIT_OK


def _change(args: argparse.Namespace, *, install: bool) -> int:
    if args.deliver or (not install and session_hook(hook_target(args.tool)).context_events):
        return _change_context(args, install=install)
    hook = session_hook(hook_target(args.tool))
    path = args.dir / hook.file
    settings = _read_settings(path)
    existed = settings is not None
    settings = settings if settings is not None else {}
    try:
        changed = hook_add(settings, hook) if install else hook_remove(settings, hook)
    except HookSettingsError as error:
        raise CommandError(f"{path}: {error}; left as it is", exit_code=EXIT_USAGE) from None
    if not changed:
        state = "already installed" if install else "not installed"
        write(sys.stdout, f"{hook.tool}: {state} in {path}; nothing changed\n")
        return EXIT_OK
    if not install and not settings and existed:
        # The file held nothing but our hook: install created it, so uninstall removes it.
        _remove_settings(path)
        write(sys.stdout, f"{hook.tool}: removed {path} (it held only agentdocs' hook)\n")
        return EXIT_OK
    _write_settings(path, settings)
    if install:
        lines = (
            f"{hook.tool}: installed `{hook_command(hook)}` as the {hook.event} hook in {path}\n"
        )
        if hook.note:
            lines += f"{hook.tool}: note: {hook.note}\n"
    else:
        lines = f"{hook.tool}: removed agentdocs' {hook.event} hook from {path}\n"
    write(sys.stdout, lines)
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    rows = [("TOOL", "FILE", "EVENT", "DELIVER", "STATE")]
    for name, entry in targets.SESSION_HOOKS.items():
        hook = session_hook(entry)
        path = args.dir / hook.file
        try:
            settings = _read_settings(path)
            installed = hook_installed(settings, hook) if settings is not None else []
            state = (
                "installed"
                if installed == [hook_command(hook)]
                else ("outdated" if installed else "-")
            )
            deliver = _deliver_state(settings, hook)
        except (CommandError, HookSettingsError):
            state = deliver = "unreadable"
        rows.append((name, hook.file, hook.event, deliver, state))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    write(
        sys.stdout,
        "".join(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"
            for row in rows
        ),
    )
    return EXIT_OK


def _deliver_state(settings: dict[str, Any] | None, hook: SessionHook) -> str:
    """The `--deliver` hooks' state: the events installed (`SessionStart+PreCompress`),
    `outdated`, `-` for none, `n/a` for a tool with no context hook."""
    if not hook.context_events:
        return "n/a"
    if settings is None:
        return "-"
    command = hook_command(hook, "context")
    found = [
        (event.event, hook_installed(settings, context_hook(hook, event), "context"))
        for event in hook.context_events
    ]
    if any(commands and commands != [command] for _event, commands in found):
        return "outdated"
    return "+".join(event for event, commands in found if commands) or "-"


@command(
    "hooks", help="install agents' session hooks that bind each run", configure=_configure_hooks
)
def run_hooks(args: argparse.Namespace) -> int:
    if not args.dir.is_dir():
        raise CommandError(f"{args.dir} is not a folder", exit_code=EXIT_USAGE)
    if args.action == "list":
        return _list(args)
    return _change(args, install=args.action == "install")

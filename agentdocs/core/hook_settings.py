"""Adding agentdocs' session hook to a tool's hook settings, and taking it out again.

A tool's hook settings are a JSON object a person may have written by hand, with other
keys and other hooks; these functions change only agentdocs' own handler (the one whose
command starts with `HOOK_COMMAND`) and keep everything else as it was, in its order.
`hook_add` then `hook_remove` gives back the same object: the containers ``hook_add``
created for its handler are removed with it when they are left empty.

Plain Python over parsed JSON; the CLI reads and writes the file.
"""

from __future__ import annotations

from typing import Any, Literal

from agentdocs.core.session_hooks import ContextEvent, SessionHook

# Every handler agentdocs installs runs one of these, and no other handler does:
# `session-start` binds the run, `context` delivers the Memory Block (`--deliver`).
HookKind = Literal["session-start", "context"]
HOOK_COMMAND = "agentdocs hook session-start"
CONTEXT_COMMAND = "agentdocs hook context"
CURSOR_HOOKS_VERSION = 1


class HookSettingsError(ValueError):
    """The settings have a shape the tool would not read either; nothing is changed."""


def _prefix(kind: HookKind) -> str:
    return CONTEXT_COMMAND if kind == "context" else HOOK_COMMAND


def hook_command(hook: SessionHook, kind: HookKind = "session-start") -> str:
    return f"{_prefix(kind)} --tool {hook.tool}"


def context_hook(hook: SessionHook, event: ContextEvent) -> SessionHook:
    """``hook`` as the context hook of ``event``: its event and matcher."""
    return hook.at(event.event, event.matcher)


def _is_ours(handler: object, kind: HookKind = "session-start") -> bool:
    if not isinstance(handler, dict):
        return False
    command = str(handler.get("command", ""))
    prefix = _prefix(kind)
    return command == prefix or command.startswith(prefix + " ")


def _events(settings: dict[str, Any], hook: SessionHook, *, create: bool) -> list[Any] | None:
    """The list of ``hook.event``'s entries (created when ``create``), or None."""
    hooks = settings.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = settings["hooks"] = {}
    if not isinstance(hooks, dict):
        raise HookSettingsError(f'"hooks" is a {type(hooks).__name__}, not an object')
    events = hooks.get(hook.event)
    if events is None:
        if not create:
            return None
        events = hooks[hook.event] = []
    if not isinstance(events, list):
        raise HookSettingsError(f'"hooks"."{hook.event}" is a {type(events).__name__}, not a list')
    return events


def _handler_lists(events: list[Any], hook: SessionHook) -> list[list[Any]]:
    """The lists that hold handlers: each group's ``hooks``, or the event's own list."""
    if hook.shape == "flat":
        return [events]
    return [
        group["hooks"]
        for group in events
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
    ]


def hook_installed(
    settings: dict[str, Any], hook: SessionHook, kind: HookKind = "session-start"
) -> list[str]:
    """The commands of agentdocs' handlers of ``kind`` for ``hook`` in ``settings``."""
    events = _events(settings, hook, create=False)
    if events is None:
        return []
    return [
        handler["command"]
        for handlers in _handler_lists(events, hook)
        for handler in handlers
        if _is_ours(handler, kind)
    ]


def hook_add(settings: dict[str, Any], hook: SessionHook, kind: HookKind = "session-start") -> bool:
    """Add agentdocs' handler for ``hook`` to ``settings`` (in place); False when it is
    there already, exactly, and nothing changed. A handler of ours with another command
    (an older install) is replaced where it stands."""
    command = hook_command(hook, kind)
    if hook_installed(settings, hook, kind) == [command]:
        return False
    if hook.shape == "flat" and "version" not in settings:
        settings["version"] = CURSOR_HOOKS_VERSION
    events = _events(settings, hook, create=True)
    assert events is not None
    handler: dict[str, Any] = {"command": command}
    if hook.shape == "groups":
        handler = {"type": "command", **handler}
    for handlers in _handler_lists(events, hook):
        for index, existing in enumerate(handlers):
            if _is_ours(existing, kind):
                handlers[index] = handler
                _remove_ours(events, hook, kind, keep=handler)
                return True
    if hook.shape == "flat":
        events.append(handler)
    else:
        group: dict[str, Any] = {} if hook.matcher is None else {"matcher": hook.matcher}
        events.append({**group, "hooks": [handler]})
    return True


def _remove_ours(
    events: list[Any], hook: SessionHook, kind: HookKind = "session-start", *, keep: object = None
) -> int:
    """Remove agentdocs' handlers but ``keep``, and each group they leave empty (install
    adds a group per handler); the number removed."""
    removed = 0
    emptied: list[int] = []
    for handlers in _handler_lists(events, hook):
        ours = [h for h in handlers if h is not keep and _is_ours(h, kind)]
        for handler in ours:
            handlers.remove(handler)
        removed += len(ours)
        if ours and not handlers:
            emptied.append(id(handlers))
    if hook.shape == "groups" and emptied:
        events[:] = [
            group
            for group in events
            if not (isinstance(group, dict) and id(group.get("hooks")) in emptied)
        ]
    return removed


def hook_remove(
    settings: dict[str, Any], hook: SessionHook, kind: HookKind = "session-start"
) -> bool:
    """Take agentdocs' handlers for ``hook`` out of ``settings`` (in place), and the
    containers left empty by it; False when there was none."""
    events = _events(settings, hook, create=False)
    if events is None or not _remove_ours(events, hook, kind):
        return False
    hooks = settings["hooks"]
    if not events:
        del hooks[hook.event]
    if not hooks:
        del settings["hooks"]
        if hook.shape == "flat" and settings == {"version": CURSOR_HOOKS_VERSION}:
            del settings["version"]
    return True

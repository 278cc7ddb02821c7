"""The agent tools' documented session hooks: which settings file and event each tool
runs a command from when a session starts (and, for `--deliver`, where it rebuilds its
context), and how it hands the session's id to that command.

One declaration per tool, each with the page of the tool's documentation it was taken
from. The target registry (`agentdocs.core.targets`) attaches each to its tool's entry
(`Target.session_hook`, and takes the entry's main file from it), the installer
(`agentdocs hooks`, `agentdocs.core.hook_settings`) writes them, and the hook itself
(`agentdocs hook context`) reads only this module: it sits on every agent session's
start, and the whole registry is not needed there.

Plain Python, no imports of the project: the CLI's hook imports it without the registry.
"""

from __future__ import annotations

from typing import Literal

# How a tool's hook file holds its handlers: `groups` (Claude Code, Gemini CLI, Codex):
# `{"hooks": {EVENT: [{"matcher": ..., "hooks": [{"type": "command", "command": ...}]}]}}`;
# `flat` (Cursor): `{"version": 1, "hooks": {EVENT: [{"command": ...}]}}`.
HookShape = Literal["groups", "flat"]


class ContextEvent:
    """A hook event at which a tool (re)builds its context, where `agentdocs hooks install
    --deliver` runs `agentdocs hook context`. ``matcher``: the group's matcher (None: every
    occurrence). ``adds_context``: whether the tool reads `additionalContext` from this
    event's output (else only an advisory `systemMessage`)."""

    __slots__ = ("adds_context", "event", "matcher")

    def __init__(self, event: str, matcher: str | None, adds_context: bool = True) -> None:
        self.event = event
        self.matcher = matcher
        self.adds_context = adds_context

    def __repr__(self) -> str:
        return f"ContextEvent({self.event!r}, {self.matcher!r}, {self.adds_context!r})"


class SessionHook:
    """A tool's documented hook that runs a command when an agent session starts.

    ``tool``: the name `agentdocs hooks --tool` takes. ``main``: the file the tool reads
    by itself at every session's start, its target's main file (`CLAUDE.md`: what
    `--deliver` does not send twice when a sync wrote it). ``file``: the repository's
    hook settings file, JSON. ``event``: the event's key in it. ``session_keys``: the
    keys of the JSON the tool writes to the hook's stdin that hold the session's id, the
    first present winning. ``matcher``: the matcher of the group agentdocs adds (None:
    the hook runs on every start, resume and clear). ``note``: what else the tool needs
    before it runs the hook. ``source``: where the tool documents all this.
    ``context_events``: the events `--deliver` installs the context hook on (empty: the
    tool documents no hook that adds context), and ``context_source`` where the tool
    documents their output.

    Plain classes, not dataclasses: `dataclasses` imports `inspect`, a tenth of
    `agentdocs hook context`'s imports (bench/README.md, `hook_context.py`).
    """

    __slots__ = (
        "context_events",
        "context_source",
        "event",
        "file",
        "main",
        "matcher",
        "note",
        "session_keys",
        "shape",
        "source",
        "tool",
    )

    def __init__(
        self,
        *,
        tool: str,
        main: str,
        file: str,
        event: str,
        shape: HookShape,
        session_keys: tuple[str, ...],
        source: str,
        matcher: str | None = None,
        note: str = "",
        context_events: tuple[ContextEvent, ...] = (),
        context_source: str = "",
    ) -> None:
        self.tool = tool
        self.main = main
        self.file = file
        self.event = event
        self.shape = shape
        self.session_keys = session_keys
        self.source = source
        self.matcher = matcher
        self.note = note
        self.context_events = context_events
        self.context_source = context_source

    def at(self, event: str, matcher: str | None) -> SessionHook:
        """The same hook at another ``event``, with its ``matcher``."""
        return SessionHook(
            tool=self.tool,
            main=self.main,
            file=self.file,
            event=event,
            shape=self.shape,
            session_keys=self.session_keys,
            source=self.source,
            matcher=matcher,
            note=self.note,
            context_events=self.context_events,
            context_source=self.context_source,
        )

    def __repr__(self) -> str:
        return f"SessionHook(tool={self.tool!r}, event={self.event!r}, file={self.file!r})"


CLAUDE_SESSION_START = SessionHook(
    tool="claude-code",
    main="CLAUDE.md",
    file=".claude/settings.json",
    event="SessionStart",
    shape="groups",
    session_keys=("session_id",),
    source="https://code.claude.com/docs/en/hooks#sessionstart "
    "(settings.json hooks; the input on stdin carries session_id)",
    context_events=(ContextEvent("SessionStart", "startup|resume|clear|compact"),),
    context_source="https://code.claude.com/docs/en/hooks#sessionstart (source: startup, "
    "resume, clear or compact; JSON hookSpecificOutput.additionalContext is added to the "
    "context)",
)
GEMINI_SESSION_START = SessionHook(
    tool="gemini-cli",
    main="GEMINI.md",
    file=".gemini/settings.json",
    event="SessionStart",
    shape="groups",
    session_keys=("session_id",),
    source="https://geminicli.com/docs/hooks/reference/ "
    "(settings.json hooks; SessionStart's input carries session_id)",
    context_events=(
        ContextEvent("SessionStart", None),
        ContextEvent("PreCompress", None, adds_context=False),
    ),
    context_source="https://geminicli.com/docs/hooks/reference/ (stdout must be JSON only; "
    "SessionStart's hookSpecificOutput.additionalContext is added to the context; "
    "PreCompress is advisory)",
)
CODEX_SESSION_START = SessionHook(
    tool="codex",
    main="AGENTS.md",
    file=".codex/hooks.json",
    event="SessionStart",
    shape="groups",
    session_keys=("session_id",),
    source="https://developers.openai.com/codex/hooks "
    "(<repo>/.codex/hooks.json; the input on stdin carries session_id)",
    note="Codex runs a project's hooks only once you trust them (untrusted, `codex exec` "
    "skips them silently); versions before hooks were on by default also need "
    "`[features] hooks = true` in config.toml (`codex_hooks` in older ones)",
    context_events=(ContextEvent("SessionStart", "startup|resume|clear|compact"),),
    context_source="https://developers.openai.com/codex/hooks (SessionStart's source: "
    "startup, resume, clear or compact; JSON hookSpecificOutput.additionalContext)",
)
CURSOR_SESSION_START = SessionHook(
    tool="cursor",
    main=".cursor/rules/agentdocs.mdc",
    file=".cursor/hooks.json",
    event="sessionStart",
    shape="flat",
    session_keys=("session_id", "conversation_id"),
    source="https://cursor.com/docs/agent/hooks "
    "(.cursor/hooks.json, version 1; sessionStart's input carries session_id)",
    note="Cursor runs it in versions whose hooks accept sessionStart "
    "(some versions' validator refused it as an unknown hook type)",
)

# In the registry's order (`targets.TARGETS`), which lists and help texts keep.
SESSION_HOOKS: dict[str, SessionHook] = {
    hook.tool: hook
    for hook in (
        CODEX_SESSION_START,
        CLAUDE_SESSION_START,
        GEMINI_SESSION_START,
        CURSOR_SESSION_START,
    )
}
# The tools whose hooks can add context at a session's start (`--deliver`).
CONTEXT_HOOKS: dict[str, SessionHook] = {
    tool: hook for tool, hook in SESSION_HOOKS.items() if hook.context_events
}

"""Live delivery: the Memory Block written to a tool's session hook, and read back by
that tool's own rules.

`agentdocs hook context` reads the hook's input (`hook_call`), decides what the event
asks for (`delivery_action`: the full block, stubs for what the session holds, or the
read state reset and the full block again), and writes the block in the one form the
tool reads from that hook (`hook_output`). `read_hook_output` is the other side: what
the tool would make of a hook's stdout, by its documented rules (docs/delivery.md),
used by the server to flag a delivery the tool could not use (`problems`), and by the
tests. Plain Python: the CLI imports it without Django.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from agentdocs.core.layer_headings import AGENT_NOTES_PREFIX, CONTEXT_HEADING, POLICY_HEADING
from agentdocs.core.session_hooks import CONTEXT_HOOKS

# The JSON every supported tool reads context from at session start.
FORMAT_ADDITIONAL_CONTEXT = "json/hookSpecificOutput.additionalContext"
# An advisory event (Gemini CLI's PreCompress): JSON whose `systemMessage` the person sees.
FORMAT_SYSTEM_MESSAGE = "json/systemMessage"
FORMATS = (FORMAT_ADDITIONAL_CONTEXT, FORMAT_SYSTEM_MESSAGE)

Action = Literal["full", "stubs", "reset", "reset-later"]
FULL: Action = "full"
STUBS: Action = "stubs"
RESET: Action = "reset"
# The event cannot add context (PreCompress): the read state is reset when the next
# context-adding event of the session comes.
RESET_LATER: Action = "reset-later"

MAX_SESSION_ID_LENGTH = 200
MAX_SOURCE_LENGTH = 40
MAX_EVENT_LENGTH = 60
# Claude Code is reported to replace hook output beyond this many characters with a
# preview and a file path (third-party reading of the binary; its docs state no limit):
# a warning, not a refusal.
CLAUDE_INLINE_CHARACTERS = 10_000

UNUSABLE_DELIVERY = "unusable_delivery"


class HookCall:
    """One run of a context hook, from the tool's input on stdin. (The classes here are
    plain, not dataclasses: `dataclasses` imports `inspect`, a tenth of `agentdocs hook
    context`'s imports; bench/README.md.)"""

    __slots__ = ("event", "session", "source", "tool")

    def __init__(self, *, tool: str, event: str, source: str, session: str | None) -> None:
        self.tool = tool
        self.event = event
        self.source = source
        self.session = session

    def __repr__(self) -> str:
        return (
            f"HookCall(tool={self.tool!r}, event={self.event!r}, source={self.source!r}, "
            f"session={self.session!r})"
        )


def _text(payload: dict[str, object], *keys: str, limit: int) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip() and len(value) <= limit:
            return value.strip()
    return None


def hook_call(tool: str, raw: bytes, *, default_event: str = "SessionStart") -> HookCall:
    """The hook input's session id, event and source; what is missing or unreadable is
    left to the defaults (a startup of an unnamed session)."""
    payload: object = None
    if raw:
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            payload = None
    if not isinstance(payload, dict):
        payload = {}
    event = _text(payload, "hook_event_name", limit=MAX_EVENT_LENGTH) or default_event
    # Claude Code and Codex name it `source`; Gemini CLI's PreCompress `trigger`.
    source = _text(payload, "source", "trigger", limit=MAX_SOURCE_LENGTH) or ""
    session = _text(payload, "session_id", limit=MAX_SESSION_ID_LENGTH)
    return HookCall(tool=tool, event=event, source=source, session=session)


def adds_context(tool: str, event: str) -> bool:
    hook = CONTEXT_HOOKS.get(tool)
    if hook is None:
        return False
    return any(e.event == event and e.adds_context for e in hook.context_events)


def delivery_action(call: HookCall) -> Action:
    """What the event asks for: a start sends the full block, a resume stubs for what
    the session already holds, a clear or a compaction forgets the read state and sends
    the full block again; an event that cannot add context resets it for the next."""
    if not adds_context(call.tool, call.event):
        return RESET_LATER
    if call.source == "resume":
        return STUBS
    if call.source in ("clear", "compact", "compress"):
        return RESET
    return FULL


def output_format(tool: str, event: str) -> str:
    return FORMAT_ADDITIONAL_CONTEXT if adds_context(tool, event) else FORMAT_SYSTEM_MESSAGE


def hook_output(*, tool: str, event: str, text: str) -> str:
    """Exactly what the hook writes to stdout: ``text`` in the form ``tool`` reads from
    ``event`` (one JSON object and a newline)."""
    if output_format(tool, event) == FORMAT_ADDITIONAL_CONTEXT:
        value: dict[str, object] = {
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        }
    else:
        value = {"systemMessage": text}
    return json.dumps(value, ensure_ascii=False) + "\n"


class HookReading:
    """What the tool makes of a hook's stdout: the context it adds (None: nothing), why
    the output is unusable (``problems``), and what may cut it (``warnings``)."""

    __slots__ = ("context", "problems", "warnings")

    def __init__(
        self,
        *,
        context: str | None,
        problems: list[str] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.context = context
        self.problems = problems or []
        self.warnings = warnings or []

    def __repr__(self) -> str:
        return (
            f"HookReading(context={self.context!r}, problems={self.problems!r}, "
            f"warnings={self.warnings!r})"
        )

    @property
    def usable(self) -> bool:
        return not self.problems


_TOOL_NAMES = {"claude-code": "Claude Code", "gemini-cli": "Gemini CLI", "codex": "Codex"}


def read_hook_output(*, tool: str, event: str, output: str) -> HookReading:
    """``output`` read as ``tool`` reads its ``event`` hook's stdout on exit 0.

    Claude Code parses stdout as JSON when it is a JSON object, else adds the plain text
    to the context; Gemini CLI parses stdout as JSON only (plain text is an error, and
    nothing is added); Codex validates SessionStart output as hook JSON and refuses any
    other. A delivery meant as JSON that the tool would not read as that JSON is
    unusable: the agent gets nothing, or the envelope and stray lines instead of rules.
    """
    name = _TOOL_NAMES.get(tool, tool)
    wanted = output_format(tool, event)
    stripped = output.strip()
    if not stripped:
        return HookReading(context=None)
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as error:
        detail = f"stdout is not JSON ({error.msg} at line {error.lineno}, column {error.colno})"
        if tool == "claude-code":
            return HookReading(
                context=output,
                problems=[
                    f"{detail}: {name} adds it to the context as plain text, so the agent "
                    "receives the JSON envelope and the lines around it, not the rules"
                ],
            )
        return HookReading(
            context=None,
            problems=[f"{detail}: {name} reads hook output as JSON only; nothing is added"],
        )
    if not isinstance(value, dict):
        return HookReading(
            context=None, problems=[f"stdout is a JSON {type(value).__name__}, not an object"]
        )
    if wanted == FORMAT_SYSTEM_MESSAGE:
        message = value.get("systemMessage")
        if message is not None and not isinstance(message, str):
            return HookReading(context=None, problems=["`systemMessage` is not a string"])
        return HookReading(context=None)
    specific = value.get("hookSpecificOutput")
    if specific is None:
        return HookReading(context=None, problems=["no `hookSpecificOutput`: nothing is added"])
    if not isinstance(specific, dict):
        return HookReading(context=None, problems=["`hookSpecificOutput` is not an object"])
    if specific.get("hookEventName") != event:
        return HookReading(
            context=None,
            problems=[
                f"`hookSpecificOutput.hookEventName` is {specific.get('hookEventName')!r}, "
                f"not {event!r}"
            ],
        )
    context = specific.get("additionalContext")
    if not isinstance(context, str):
        return HookReading(
            context=None, problems=["`hookSpecificOutput.additionalContext` is not a string"]
        )
    warnings = []
    if tool == "claude-code" and len(context) > CLAUDE_INLINE_CHARACTERS:
        warnings.append(
            f"the context is {len(context):,} characters; {name} is reported to show hook "
            f"output beyond {CLAUDE_INLINE_CHARACTERS:,} as a preview and a file path"
        )
    return HookReading(context=context, warnings=warnings)


class DeliveryReceived(TypedDict):
    """What the tool would have received, by its rules (`read_hook_output`)."""

    usable: bool
    context_sha256: str | None
    context_bytes: int | None
    warnings: NotRequired[list[str]]


class Delivery(TypedDict):
    """A binding record's `delivery`: the exact bytes a hook wrote to the tool's stdout,
    and what the tool made of them."""

    tool: str
    event: str
    source: str
    format: str
    bytes: int
    sha256: str
    output: str
    received: DeliveryReceived
    # How the block was had: `server`, `cache`, `refused` (its signature failed), or
    # `none` (no block: not configured, nothing cached, or an advisory event).
    block: NotRequired[str]
    # The files the tool loads natively that the block relies on (`--deliver`), by state.
    relies_on: NotRequired[list[dict[str, str]]]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def received_of(*, tool: str, event: str, output: str) -> tuple[DeliveryReceived, list[str]]:
    """The `received` part of a delivery, and its problems."""
    reading = read_hook_output(tool=tool, event=event, output=output)
    context = reading.context
    received: DeliveryReceived = {
        "usable": reading.usable,
        "context_sha256": sha256_text(context) if context is not None else None,
        "context_bytes": len(context.encode("utf-8")) if context is not None else None,
    }
    if reading.warnings:
        received["warnings"] = reading.warnings
    return received, reading.problems


# Relying on the files the tool loads itself (`relied_on`): a layer of the block whose
# exact text a synced file holds is not sent twice.

IN_SYNC = "in-sync"
EDITED = "edited-locally"
MISSING = "missing"

# A layer starts with its heading at the start of the block or after the blank line
# that joins two layers; documents cannot forge one (`agentdocs.core.block_structure`).
_LAYER_HEADING = re.compile(
    r"^(?:"
    + re.escape(POLICY_HEADING)
    + "|"
    + re.escape(AGENT_NOTES_PREFIX)
    + r"[^\n]*\)|"
    + re.escape(CONTEXT_HEADING)
    + r")$",
    re.MULTILINE,
)


def block_layers(text: str) -> list[str]:
    """The block's text as its layers' texts, in order ("\n\n".join(them) + "\n" is
    ``text``); the whole text as one piece when it does not read as layers."""
    starts = [
        match.start()
        for match in _LAYER_HEADING.finditer(text)
        if match.start() == 0 or text.startswith("\n\n", match.start() - 2)
    ]
    if not starts or starts[0] != 0 or not text.endswith("\n"):
        return [text]
    ends = [start - 2 for start in starts[1:]] + [len(text) - 1]
    return [text[start:end] for start, end in zip(starts, ends, strict=True)]


class Relied:
    """A block with the layers a file the tool loads holds left out (``text``), and what
    it relies on: each file with its state and the headings of the layers it holds."""

    __slots__ = ("files", "text")

    def __init__(self, *, text: str, files: list[dict[str, str]]) -> None:
        self.text = text
        self.files = files


_CONTEXT_SOURCE = re.compile(
    r'^<context path="([^"\n]*)">\n(.*?)\n</context>$', re.MULTILINE | re.DOTALL
)


def _unescape_attribute(value: str) -> str:
    return value.replace("&lt;", "<").replace("&quot;", '"').replace("&amp;", "&")


def _context_relied(
    layer: str,
    *,
    files: Mapping[str, tuple[str, str | None]],
    name: str,
    held: dict[str, list[str]],
) -> str:
    """The context layer with each source an in-sync file holds (under its `### path`
    heading, its text word for word, as the export writes it) replaced by a line."""

    def replace(match: re.Match[str]) -> str:
        path, content = _unescape_attribute(match.group(1)), match.group(2)
        for file, (state, text) in files.items():
            if (
                state == IN_SYNC
                and text is not None
                and content.strip()
                and f"\n### {path}" in text
                and content in text
            ):
                held[file].append(f"{CONTEXT_HEADING.removeprefix('## ')}: {path}")
                return (
                    f"{match.group(0).split(chr(10), 1)[0]}\nIn {file}, which {name} loads "
                    "itself; not repeated here.\n</context>"
                )
        return match.group(0)

    return _CONTEXT_SOURCE.sub(replace, layer)


def relied_on(*, tool: str, text: str, files: Mapping[str, tuple[str, str | None]]) -> Relied:
    """``text`` (a Memory Block) without the layers that a file ``tool`` loads natively
    already holds, word for word: each is replaced by its heading and a line naming the
    file (a source of the project context, likewise), and the block opens with a line
    naming the files it relies on, their state and what they hold.

    ``files``: path → (state against the lock file, the file's text when it is
    `in-sync`, else None). Only an in-sync file is relied on: a file edited since the
    sync, or missing, is named with its state, and every layer is sent.
    """
    name = _TOOL_NAMES.get(tool, tool)
    held: dict[str, list[str]] = {path: [] for path in files}
    layers = block_layers(text)
    kept = []
    for layer in layers:
        heading = layer.split("\n", 1)[0]
        if heading == CONTEXT_HEADING:
            layer = _context_relied(layer, files=files, name=name, held=held)
        holder = next(
            (
                path
                for path, (state, content) in files.items()
                if state == IN_SYNC and content is not None and len(layers) > 1 and layer in content
            ),
            None,
        )
        if holder is None:
            kept.append(layer)
            continue
        held[holder].append(heading.removeprefix("## "))
        kept.append(
            f"{heading}\n\nIn {holder}, which {name} loads itself (as the last agentdocs "
            "sync wrote it); not repeated here."
        )
    if not files:
        return Relied(text=text, files=[])
    relied = []
    described = []
    for path, (state, _content) in files.items():
        entry = {"path": path, "state": state}
        if held[path]:
            entry["layers"] = "; ".join(held[path])
        relied.append(entry)
        described.append(
            f"{path} ({state}{': holds ' + '; '.join(held[path]) if held[path] else ''})"
        )
    opening = (
        f"<!-- agentdocs: this block relies on the files {name} loads itself: "
        f"{', '.join(described)} -->"
    )
    body = "\n\n".join(kept) + "\n" if len(layers) > 1 else text
    return Relied(text=f"{opening}\n{body}", files=relied)


def delivery_reconstruct(delivery: Mapping[str, Any]) -> dict[str, Any]:
    """What the tool received: the exact output the hook wrote, verified against its
    recorded sha256 and size, and the context the tool made of it by its own rules."""
    output = str(delivery["output"])
    data = output.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    reading = read_hook_output(tool=delivery["tool"], event=delivery["event"], output=output)
    return {
        "tool": delivery["tool"],
        "event": delivery["event"],
        "source": delivery["source"],
        "format": delivery["format"],
        "output": output,
        "sha256": digest,
        "verified": digest == delivery["sha256"] and len(data) == delivery["bytes"],
        "context": reading.context,
        "usable": reading.usable,
        "problems": reading.problems,
    }

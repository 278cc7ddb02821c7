"""The runs timeline: which version and sha256 of each bound source a project's runs
saw, as segments of consecutive runs ("runs 1–40 saw version 3, 41 on version 4").

Built from binding records (`agentdocs.core.bindings`): every source a record names
is one row of the timeline. A source is named by its kind and key:

- ``manifest``: the manifest (the project's `context.json`, or an inline one);
- ``name:<provider name>``: a context entry of the manifest;
- ``local:<path>``: a local entry of the manifest;
- ``agent:<project>/<path>``: a candidate agent document of the bound Memory Block
  (``agent:bundled/<path>`` for a default shipped with the application);
- ``client:<name>``: the client's document of the bound Memory Block;
- ``context-document:<path>``: an `.AGENTS/` document of the bound Memory Block;
- ``memory-block``: the bound Memory Block's text itself;
- ``repository:<path>``: a file a repository run's tool loaded (`agentdocs bind
  --repo`), by its sha256 (no version: it is the repository's file, not a document).

A segment is a stretch of consecutive runs (in time order) that saw the same version
and sha256 of a source, read by the same label (`label`: the label whose version the
run saw, null for latest; issue 29); a run that did not bind the source ends the stretch. An
unresolved source has version and sha256 None.

A session's timeline (`session_timelines`) reads the same runs another way: the live
deliveries of one agent session (`agentdocs hook context`), its start, resumes and
compactions in time order, with what each sent the agent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from agentdocs.core import hook_delivery

MANIFEST = "manifest"
MEMORY_BLOCK = "memory-block"


@dataclass(frozen=True)
class Run:
    """One binding record, as the timeline reads it."""

    id: int
    created_at: str  # ISO 8601
    problem_count: int
    record: Mapping[str, Any]  # a `BindingRecordData`, as stored


@dataclass(frozen=True)
class Seen:
    """What one run saw of one source."""

    version: int | None
    sha256: str | None
    # The label the run read the source by (its version under it), or None: latest, or
    # a render read by no label.
    label: str | None = None


class Segment(TypedDict):
    """Consecutive runs that saw the same version and sha256 of one source.

    ``first_run``/``last_run`` are binding record ids; ``first_index``/``last_index``
    the runs' places (from 1) in the window read; ``problem_runs`` how many of the
    runs had problems.
    """

    source: str
    version: int | None
    sha256: str | None
    label: str | None
    first_run: int
    last_run: int
    runs: int
    problem_runs: int
    first_index: int
    last_index: int
    first_at: str
    last_at: str


def _document_version(entry: Mapping[str, Any]) -> int | None:
    document = entry.get("document")
    if isinstance(document, Mapping):
        version = document.get("version")
        return version if isinstance(version, int) else None
    return None


def run_sources(record: Mapping[str, Any]) -> Iterator[tuple[str, Seen]]:
    """Every source one record names, with the version and sha256 it bound."""
    manifest = record.get("manifest")
    if isinstance(manifest, Mapping):
        yield MANIFEST, Seen(_document_version(manifest), manifest.get("sha256"))
    for entry in record.get("context") or []:
        yield f"name:{entry['name']}", Seen(_document_version(entry), entry.get("sha256"))
    for entry in record.get("local") or []:
        yield f"local:{entry['path']}", Seen(_document_version(entry), entry.get("sha256"))
    repository = record.get("repository")
    if isinstance(repository, Mapping):
        for file in repository.get("files") or []:
            yield f"repository:{file['path']}", Seen(None, file.get("sha256"))
    block = record.get("memory_block")
    if not isinstance(block, Mapping):
        return
    for candidate in block.get("agent_candidates") or []:
        owner = candidate.get("project") or "bundled"
        yield (
            f"agent:{owner}/{candidate['path']}",
            Seen(candidate.get("version"), candidate.get("sha256"), candidate.get("label")),
        )
    client = block.get("client_document")
    if isinstance(client, Mapping):
        yield f"client:{client['name']}", Seen(None, client.get("sha256"))
    for document in block.get("context_documents") or []:
        yield (
            f"context-document:{document['path']}",
            Seen(document.get("version"), document.get("sha256"), document.get("label")),
        )
    yield MEMORY_BLOCK, Seen(None, block.get("sha256"), block.get("label"))


@dataclass
class _Open:
    seen: Seen
    first: Run
    first_index: int
    last: Run
    last_index: int
    runs: int = 1
    problem_runs: int = 0


def _closed(source: str, stretch: _Open) -> Segment:
    return {
        "source": source,
        "version": stretch.seen.version,
        "sha256": stretch.seen.sha256,
        "label": stretch.seen.label,
        "first_run": stretch.first.id,
        "last_run": stretch.last.id,
        "runs": stretch.runs,
        "problem_runs": stretch.problem_runs,
        "first_index": stretch.first_index,
        "last_index": stretch.last_index,
        "first_at": stretch.first.created_at,
        "last_at": stretch.last.created_at,
    }


def timeline_segments(runs: Sequence[Run]) -> list[Segment]:
    """The segments of ``runs`` (oldest first), ordered by source, then time."""
    open_stretches: dict[str, _Open] = {}
    segments: dict[str, list[Segment]] = {}
    for index, run in enumerate(runs, start=1):
        seen_now = dict(run_sources(run.record))
        # A source this run did not bind ends its stretch.
        for source in [s for s in open_stretches if s not in seen_now]:
            segments.setdefault(source, []).append(_closed(source, open_stretches.pop(source)))
        for source, seen in seen_now.items():
            stretch = open_stretches.get(source)
            if stretch is not None and stretch.seen == seen:
                stretch.last, stretch.last_index = run, index
                stretch.runs += 1
            else:
                if stretch is not None:
                    segments.setdefault(source, []).append(_closed(source, stretch))
                stretch = open_stretches[source] = _Open(
                    seen=seen, first=run, first_index=index, last=run, last_index=index
                )
            if run.problem_count > 0:
                stretch.problem_runs += 1
    for source, stretch in open_stretches.items():
        segments.setdefault(source, []).append(_closed(source, stretch))
    return [segment for source in sorted(segments) for segment in segments[source]]


# A session's timeline: the live deliveries of one agent session (`agentdocs hook
# context`, a binding record with a `delivery` each, its process the session's id), in
# time order: its start, its resumes, its compactions.

_WHAT = {
    "startup": "start",
    "resume": "resume",
    "clear": "clear",
    "compact": "compaction",
}
_SENT = {
    hook_delivery.FULL: "the full block",
    hook_delivery.STUBS: "stubs for what the session holds",
    hook_delivery.RESET: "the full block again (read state reset)",
    hook_delivery.RESET_LATER: "a notice; the next start resets the read state",
}
_BLOCK = {
    "server": "from the server",
    "cache": "from the cache",
    "refused": "refused: its signature failed",
    "none": "no block",
}


class SessionDelivery(TypedDict):
    """One delivery of a session, as the timeline reads it."""

    record: int
    at: str
    tool: str
    event: str
    source: str
    what: str  # start, resume, clear, compaction
    sent: str  # what the agent was sent, in words
    block: str  # how the block was had, in words
    usable: bool
    problems: int
    bytes: int | None


class Session(TypedDict):
    """One agent session's deliveries, oldest first."""

    session: str
    tool: str
    deliveries: list[SessionDelivery]
    compactions: int
    resumes: int
    unusable: int
    first_at: str
    last_at: str


def _what(event: str, source: str) -> str:
    if event == "PreCompress":
        return "compaction"
    return _WHAT.get(source, source or event)


def _sent(action: hook_delivery.Action, block: str) -> str:
    if action == hook_delivery.RESET_LATER or block in ("server", "cache"):
        return _SENT[action]
    return "one line saying why no rules were injected"


def session_timelines(runs: Sequence[Run]) -> list[Session]:
    """The sessions whose deliveries are among ``runs`` (oldest first), each with its
    deliveries in time order; the sessions newest last delivery first.

    What each delivery sent follows `hook_delivery.delivery_action`, with its one rule
    that needs the session's history: after an event that could not add context (Gemini
    CLI's PreCompress) the session's next start resets the read state."""
    sessions: dict[str, Session] = {}
    reset_pending: set[str] = set()
    for run in runs:
        delivery = run.record.get("delivery")
        process = run.record.get("process")
        if not isinstance(delivery, Mapping) or not isinstance(process, str):
            continue
        tool, event = str(delivery.get("tool", "")), str(delivery.get("event", ""))
        source = str(delivery.get("source") or "")
        call = hook_delivery.HookCall(tool=tool, event=event, source=source, session=process)
        action = hook_delivery.delivery_action(call)
        if action == hook_delivery.RESET_LATER:
            reset_pending.add(process)
        elif process in reset_pending:
            reset_pending.discard(process)
            action = hook_delivery.RESET
        received = delivery.get("received")
        usable = not isinstance(received, Mapping) or received.get("usable") is not False
        size = delivery.get("bytes")
        block = str(delivery.get("block") or "")
        entry: SessionDelivery = {
            "record": run.id,
            "at": run.created_at,
            "tool": tool,
            "event": event,
            "source": source,
            "what": _what(event, source),
            "sent": _sent(action, block),
            "block": _BLOCK.get(block, block or "unknown"),
            "usable": usable,
            "problems": run.problem_count,
            "bytes": size if isinstance(size, int) else None,
        }
        session = sessions.get(process)
        if session is None:
            session = sessions[process] = {
                "session": process,
                "tool": tool,
                "deliveries": [],
                "compactions": 0,
                "resumes": 0,
                "unusable": 0,
                "first_at": run.created_at,
                "last_at": run.created_at,
            }
        session["deliveries"].append(entry)
        session["last_at"] = run.created_at
        session["compactions"] += entry["what"] == "compaction"
        session["resumes"] += entry["what"] == "resume"
        session["unusable"] += not usable
    return sorted(sessions.values(), key=lambda s: s["last_at"], reverse=True)

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
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

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

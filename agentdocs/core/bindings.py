"""The binding record (schema ``context-binding/v1``) as plain data.

A record answers, after a run: what the project selected (the manifest), which
exact material was supplied (each source's custody, version, sha256 and bytes,
and the memory block's text hash), and what happened where sources disagreed
(every declared exception's outcome). The services gather the facts; the
functions here only assemble, serialise and compare them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from agentdocs.core.classification import REFUSED, classify_exception
from agentdocs.core.manifest import Manifest

SCHEMA = "context-binding/v1"
CUSTODY_AGENTDOCS = "agentdocs"
CUSTODY_UNVERSIONED = "unversioned"

UNRESOLVED_NAME = "unresolved_name"
MISSING_LOCAL_DOCUMENT = "missing_local_document"
UNKNOWN_STANDING = "unknown_standing"
REFUSED_EXCEPTION = "refused_exception"


@dataclass(frozen=True)
class BoundDocument:
    """One document version as it was read: enough to restore its exact text."""

    document_id: int
    project: str
    path: str
    version: int
    history_id: int
    sha256: str
    bytes: int

    def as_source(self) -> dict[str, Any]:
        return {
            "custody": CUSTODY_AGENTDOCS,
            "document": {
                "id": self.document_id,
                "project": self.project,
                "path": self.path,
                "version": self.version,
                "history_id": self.history_id,
            },
            "sha256": self.sha256,
            "bytes": self.bytes,
        }


def unversioned_source(text: str) -> dict[str, Any]:
    """A client-supplied text: identifiable by its hash, but not restorable."""
    data = text.encode("utf-8")
    return {
        "custody": CUSTODY_UNVERSIONED,
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no insignificant white space, UTF-8: the same record, the same bytes."""
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_record(
    *,
    header: Mapping[str, Any],
    manifest: Manifest,
    manifest_source: Mapping[str, Any],
    names: Mapping[str, BoundDocument | str],
    local: Mapping[str, BoundDocument | str],
    memory_block: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble a record.

    ``names`` and ``local`` map every selected name and path to the document it
    bound, or to a sentence saying why it could not be resolved.
    """
    problems: list[dict[str, Any]] = []
    context = []
    for entry in manifest.context:
        resolution = names[entry.name]
        context.append(
            {"name": entry.name, "standing": entry.standing, **_source_or_unresolved(resolution)}
        )
        if isinstance(resolution, str):
            problems.append({"kind": UNRESOLVED_NAME, "name": entry.name, "detail": resolution})
        if not entry.has_known_standing:
            problems.append(
                {
                    "kind": UNKNOWN_STANDING,
                    "name": entry.name,
                    "detail": f"The standing {entry.standing!r} is not one of rule, default, "
                    "knowledge, option.",
                }
            )
    local_sources = []
    for path in manifest.local:
        resolution = local[path]
        local_sources.append({"path": path, **_source_or_unresolved(resolution)})
        if isinstance(resolution, str):
            problems.append({"kind": MISSING_LOCAL_DOCUMENT, "path": path, "detail": resolution})
    exceptions = []
    for declared in manifest.exceptions:
        classification = classify_exception(declared, manifest)
        exceptions.append(
            {
                "target": declared.target,
                "effect": declared.effect,
                "reason": declared.reason,
                "standing": manifest.standing_of(declared.name),
                "outcome": classification.outcome,
                "why": classification.why,
            }
        )
        if classification.outcome == REFUSED:
            problems.append(
                {"kind": REFUSED_EXCEPTION, "target": declared.target, "detail": classification.why}
            )
    return {
        **header,
        "schema": SCHEMA,
        "manifest": dict(manifest_source),
        "context": context,
        "local": local_sources,
        "exceptions": exceptions,
        "memory_block": dict(memory_block) if memory_block is not None else None,
        "problems": problems,
        "problem_count": len(problems),
    }


def _source_or_unresolved(resolution: BoundDocument | str) -> dict[str, Any]:
    if isinstance(resolution, BoundDocument):
        return {"resolved": True, **resolution.as_source()}
    return {"resolved": False, "custody": None, "sha256": None, "bytes": None}


@dataclass(frozen=True)
class SourceRef:
    """One bound source of a record: ``kind`` is context, local or layer."""

    kind: str
    key: str
    entry: Mapping[str, Any]

    @property
    def label(self) -> dict[str, str]:
        return {"kind": self.kind, ("path" if self.kind == "local" else "name"): self.key}


def record_sources(record: Mapping[str, Any]) -> Iterator[SourceRef]:
    for entry in record.get("context", []):
        yield SourceRef("context", entry["name"], entry)
    for entry in record.get("local", []):
        yield SourceRef("local", entry["path"], entry)


def _version_view(entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    document = entry.get("document") or {}
    return {
        "custody": entry.get("custody"),
        "standing": entry.get("standing"),
        "project": document.get("project"),
        "path": document.get("path"),
        "version": document.get("version"),
        "sha256": entry.get("sha256"),
        "bytes": entry.get("bytes"),
    }


def compare_records(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """What differs between two records: sources added, removed or changed, exception
    outcomes, and the memory block's hash."""
    sources_a = {(s.kind, s.key): s for s in record_sources(a)}
    sources_b = {(s.kind, s.key): s for s in record_sources(b)}
    sources = []
    for key in [*sources_a, *(k for k in sources_b if k not in sources_a)]:
        left, right = sources_a.get(key), sources_b.get(key)
        view_a = _version_view(left.entry if left else None)
        view_b = _version_view(right.entry if right else None)
        if view_a == view_b:
            continue
        status = "added" if left is None else "removed" if right is None else "changed"
        label = (left or right).label
        sources.append({**label, "status": status, "a": view_a, "b": view_b})
    outcomes_a = {e["target"]: e for e in a.get("exceptions", [])}
    outcomes_b = {e["target"]: e for e in b.get("exceptions", [])}
    exceptions = []
    for target in [*outcomes_a, *(t for t in outcomes_b if t not in outcomes_a)]:
        left, right = outcomes_a.get(target), outcomes_b.get(target)
        pair_a = _exception_view(left)
        pair_b = _exception_view(right)
        if pair_a != pair_b:
            exceptions.append({"target": target, "a": pair_a, "b": pair_b})
    block_a = (a.get("memory_block") or {}).get("sha256")
    block_b = (b.get("memory_block") or {}).get("sha256")
    return {
        "sources": sources,
        "exceptions": exceptions,
        "memory_block": {"a": block_a, "b": block_b, "same": block_a == block_b},
        "identical": not sources and not exceptions and block_a == block_b,
    }


def _exception_view(entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    return {"effect": entry["effect"], "standing": entry["standing"], "outcome": entry["outcome"]}


CURRENT = "current"
CHANGED = "changed"
DELETED = "deleted"
MISSING = "missing"  # unresolved when bound, and still
OUTDATED_STATUSES = (CURRENT, CHANGED, DELETED, MISSING)
STALE = frozenset({CHANGED, DELETED})  # what a run bound is no longer what it would get


@dataclass(frozen=True)
class CurrentDocument:
    """What a bound source resolves to now; ``None`` in its place means it is gone."""

    document_id: int
    project: str
    path: str
    version: int
    sha256: str
    is_deleted: bool

    def as_view(self) -> dict[str, Any]:
        """The ``current`` side of an outdated row."""
        return {
            "project": self.project,
            "path": self.path,
            "version": self.version,
            "sha256": self.sha256,
        }


def outdated_entry(
    source: SourceRef, now: CurrentDocument | None, *, gone_reason: str = ""
) -> dict[str, Any]:
    """One row of the outdated table: bound against current, as `npm outdated` shows.

    ``current`` means the same text (same sha256), even if a later version wrote
    it again; ``changed`` a different text, or a name that now resolves to
    another document; ``deleted`` a document deleted since, or a name the
    provider map no longer resolves. A source that was unresolved when bound (a
    problem of the record) is ``missing`` while it still is, and ``changed`` once
    it resolves: a run bound now would get it.
    """
    bound = source.entry
    if bound.get("custody") is None:
        return _unresolved_entry(source, now)
    document = bound["document"]
    row: dict[str, Any] = {
        **source.label,
        "bound": {
            "project": document["project"],
            "path": document["path"],
            "version": document["version"],
            "sha256": bound["sha256"],
        },
    }
    if now is None or now.is_deleted:
        row["current"] = None
        row["status"] = DELETED
        row["detail"] = gone_reason or "The document was deleted."
        return row
    row["current"] = now.as_view()
    if now.document_id != document["id"]:
        row["status"] = CHANGED
        row["detail"] = f"The name now resolves to {now.project}/{now.path}."
    elif now.sha256 != bound["sha256"]:
        row["status"] = CHANGED
        row["detail"] = f"Changed from version {document['version']} to {now.version}."
    else:
        row["status"] = CURRENT
        row["detail"] = ""
    return row


def _unresolved_entry(source: SourceRef, now: CurrentDocument | None) -> dict[str, Any]:
    row: dict[str, Any] = {**source.label, "bound": None}
    if now is None or now.is_deleted:
        return {**row, "current": None, "status": MISSING, "detail": "Unresolved when bound."}
    return {
        **row,
        "current": now.as_view(),
        "status": CHANGED,
        "detail": f"Unresolved when bound; now {now.project}/{now.path} version {now.version}.",
    }

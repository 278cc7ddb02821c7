"""The binding record (schema ``context-binding/v1``) as plain data.

A record answers, after a run: what the project selected (the manifest), which
exact material was supplied (each source's custody, version, sha256 and bytes,
and the memory block's text hash), and what happened where sources disagreed
(every declared exception's outcome). The services gather the facts; the
functions here only assemble, serialise and compare them.

The stored JSON is declared below as TypedDicts (`BindingRecordData` and its
parts): it is built here and in `agentdocs.services.bindings`, stored in a JSON
column, archived, and read back by the reconstruction and the outdated check.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from agentdocs.core.classification import REFUSED, classify_exception
from agentdocs.core.hook_delivery import Delivery
from agentdocs.core.manifest import Manifest
from agentdocs.core.memory_block import LayerAccount
from agentdocs.core.policy import SettingAccount
from agentdocs.core.recipes import RenderOptionsDict
from agentdocs.core.skill_index import SkillAccount

SCHEMA = "context-binding/v1"
CUSTODY_AGENTDOCS: Literal["agentdocs"] = "agentdocs"
CUSTODY_UNVERSIONED: Literal["unversioned"] = "unversioned"

UNRESOLVED_NAME = "unresolved_name"
MISSING_LOCAL_DOCUMENT = "missing_local_document"
UNKNOWN_STANDING = "unknown_standing"
REFUSED_EXCEPTION = "refused_exception"


class DocumentRef(TypedDict):
    """The exact document version a source was read from; ``history_id`` restores it."""

    id: int
    project: str
    path: str
    version: int
    history_id: int


class SkillRef(TypedDict):
    """The exact skill version a `skill/<name>` entry bound: its files are in the
    record's `skills` (restorable from the skill's history)."""

    id: int
    project: str
    name: str
    version: int


class AgentdocsSource(TypedDict):
    """A source kept in agentdocs: restorable from its history row."""

    custody: Literal["agentdocs"]
    document: DocumentRef
    sha256: str
    bytes: int


class UnversionedSource(TypedDict):
    """A client-supplied text: identifiable by its hash, not restorable."""

    custody: Literal["unversioned"]
    sha256: str
    bytes: int


class BoundSource(TypedDict):
    """What a selected name or local path bound to; ``custody`` None when unresolved."""

    resolved: bool
    custody: str | None
    document: NotRequired[DocumentRef]
    skill: NotRequired[SkillRef]
    sha256: str | None
    bytes: int | None


class ContextSourceEntry(BoundSource):
    name: str
    standing: str


class LocalSourceEntry(BoundSource):
    path: str


class ManifestSource(TypedDict):
    """Where the manifest came from: the project's ``context.json`` or ``inline``."""

    source: str
    custody: str
    document: NotRequired[DocumentRef]
    sha256: str
    bytes: int


class ExceptionOutcome(TypedDict):
    target: str
    effect: str
    reason: str
    standing: str | None
    outcome: str
    why: str


class Problem(TypedDict):
    """One problem of a record; it names the entry by ``name``, ``path`` or ``target``."""

    kind: str
    detail: str
    name: NotRequired[str]
    path: NotRequired[str]
    target: NotRequired[str]


class BoundInputDocument(TypedDict):
    id: int
    history_id: int


class BoundInput(TypedDict):
    """One document a bound memory block was rendered from.

    ``custody`` is ``agentdocs`` (restorable through ``document``), ``bundled``
    (a default shipped with the application, ``version`` None) or None (it did
    not match a history row when bound).
    """

    project: str | None
    path: str
    version: int | None
    sha256: str
    bytes: int
    custody: str | None
    document: BoundInputDocument | None
    # In a block read by a label only: the label this version was read under, or null
    # when the document had none and its latest version was used.
    label: NotRequired[str | None]


class BoundAgentCandidate(BoundInput):
    level: str


class BoundClientDocument(TypedDict):
    """The client's uploaded document: by hash only; ``in_text`` if the block included it."""

    name: str
    custody: Literal["unversioned"]
    sha256: str
    bytes: int
    in_text: bool


class BoundInstructions(TypedDict):
    """The MCP session instructions made of the bound block
    (`agentdocs.core.mcp_instructions`): their budget, their first line's form (absent:
    1, records bound before it was kept), and the hash of their text."""

    budget_bytes: int
    sha256: str
    bytes: int
    form: NotRequired[int]


class BoundIndexedSkill(SkillAccount):
    """A skill the block's skills index listed, with the description it showed."""

    description: str


class BoundMemoryBlock(TypedDict):
    """The memory block a run received and everything needed to render it again."""

    recipe: str | None
    profile: str | None
    sha256: str
    bytes: int
    options: RenderOptionsDict
    layers: list[LayerAccount]
    settings: list[SettingAccount]
    agent_candidates: list[BoundAgentCandidate]
    client_document: BoundClientDocument | None
    context_documents: list[BoundInput]
    # The render's `paths` (scoped `.AGENTS/` documents follow them); absent when none.
    paths: NotRequired[list[str]]
    # The rules that kept documents from forging the block's structure
    # (`agentdocs.core.block_structure.STRUCTURE_VERSION`); absent in a record bound
    # before them, which is rendered again without them.
    structure: NotRequired[int]
    # The start of an MCP session: the instructions it gave, made of this block.
    instructions: NotRequired[BoundInstructions]
    # The label the documents were read by (the request's, else the recipe's
    # `params.label`); absent when none was.
    label: NotRequired[str]
    # The skills the index listed (`agentdocs.core.skill_index`), each with the
    # description it showed; absent when the recipe offered none.
    skills: NotRequired[list[BoundIndexedSkill]]


ServedFrom = Literal["server", "cache"]
SERVED_FROM: tuple[ServedFrom, ...] = ("server", "cache")


class RecordHeader(TypedDict):
    tenant: str
    project: str
    process: str
    created_at: str  # ISO 8601
    created_by: str


class BoundSkillFile(TypedDict):
    path: str
    sha256: str


class BoundSkill(TypedDict):
    """A skill a process read (`read_skill`, the Skills extension's `skills/get`): the
    exact version of its whole bundle, kept by agentdocs (its history), so that
    `reconstruct` restores each file and checks it against its sha256."""

    custody: Literal["agentdocs"]
    skill_id: int
    project: str
    name: str
    version: int
    # The label the process read by (its client's), or None for the current version.
    label: str | None
    sha256: str
    files: list[BoundSkillFile]


class BindingRecordData(RecordHeader):
    """A stored binding record, schema ``context-binding/v1``."""

    schema: str
    manifest: ManifestSource
    context: list[ContextSourceEntry]
    local: list[LocalSourceEntry]
    exceptions: list[ExceptionOutcome]
    memory_block: BoundMemoryBlock | None
    problems: list[Problem]
    problem_count: int
    # Only in a record of a run that said how it was served (`agentdocs.client`): "server",
    # or "cache" when the server could not be reached and the client served the block it
    # kept; then ``served_sha256`` is the sha256 of the text it served.
    served_from: NotRequired[ServedFrom]
    served_sha256: NotRequired[str]
    # Only in a record of a live delivery (`agentdocs hook context`): the exact bytes the
    # hook wrote to the tool, and what the tool made of them.
    delivery: NotRequired[Delivery]
    # Only in a record of a skill read (`agentdocs.services.skill_reads`): each skill the
    # process read, by version, with each file's sha256.
    skills: NotRequired[list[BoundSkill]]


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

    def as_source(self) -> AgentdocsSource:
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


@dataclass(frozen=True)
class BoundSkillVersion:
    """A skill version a manifest's `skill/<name>` entry resolved to: its bundle's
    digest and size, and the entry the record's `skills` keeps with each file."""

    skill: SkillRef
    sha256: str
    bytes: int
    bound: BoundSkill

    def as_source(self) -> BoundSource:
        return {
            "resolved": True,
            "custody": CUSTODY_AGENTDOCS,
            "skill": self.skill,
            "sha256": self.sha256,
            "bytes": self.bytes,
        }


def source_document(entry: Mapping[str, object]) -> dict[str, Any] | None:
    """The document a bound source names (`document`), or for a skill its stand-in
    (path `skills/<name>`), so that outdated rows and comparisons show either."""
    document = entry.get("document")
    if isinstance(document, dict):
        return document
    skill = entry.get("skill")
    if isinstance(skill, dict):
        return {
            "id": skill["id"],
            "project": skill["project"],
            "path": f"skills/{skill['name']}",
            "version": skill["version"],
        }
    return None


def unversioned_source(text: str) -> UnversionedSource:
    """A client-supplied text: identifiable by its hash, but not restorable."""
    data = text.encode("utf-8")
    return {
        "custody": CUSTODY_UNVERSIONED,
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }


def canonical_json(value: object) -> bytes:
    """Sorted keys, no insignificant white space, UTF-8: the same record, the same bytes."""
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stored_json_bytes(value: object) -> int:
    """How many bytes a JSON column is sent for ``value``: Django's JSONField writes
    `json.dumps` with its defaults (ASCII escapes, spaced separators), which is never
    smaller than the canonical form, so this is what a size cap on the row compares."""
    return len(json.dumps(value).encode("ascii"))


def build_record(
    *,
    header: RecordHeader,
    manifest: Manifest,
    manifest_source: ManifestSource,
    names: Mapping[str, BoundDocument | BoundSkillVersion | str],
    local: Mapping[str, BoundDocument | str],
    memory_block: BoundMemoryBlock | None = None,
) -> BindingRecordData:
    """Assemble a record.

    ``names`` and ``local`` map every selected name and path to the document it
    bound, or to a sentence saying why it could not be resolved.
    """
    problems: list[Problem] = []
    context: list[ContextSourceEntry] = []
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
    local_sources: list[LocalSourceEntry] = []
    for path in manifest.local:
        resolution = local[path]
        local_sources.append({"path": path, **_source_or_unresolved(resolution)})
        if isinstance(resolution, str):
            problems.append({"kind": MISSING_LOCAL_DOCUMENT, "path": path, "detail": resolution})
    exceptions: list[ExceptionOutcome] = []
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
    record: BindingRecordData = {
        "tenant": header["tenant"],
        "project": header["project"],
        "process": header["process"],
        "created_at": header["created_at"],
        "created_by": header["created_by"],
        "schema": SCHEMA,
        "manifest": manifest_source.copy(),
        "context": context,
        "local": local_sources,
        "exceptions": exceptions,
        "memory_block": memory_block.copy() if memory_block is not None else None,
        "problems": problems,
        "problem_count": len(problems),
    }
    return record


def _source_or_unresolved(resolution: BoundDocument | BoundSkillVersion | str) -> BoundSource:
    if isinstance(resolution, BoundSkillVersion):
        return resolution.as_source()
    if isinstance(resolution, BoundDocument):
        source = resolution.as_source()
        return {
            "resolved": True,
            "custody": source["custody"],
            "document": source["document"],
            "sha256": source["sha256"],
            "bytes": source["bytes"],
        }
    return {"resolved": False, "custody": None, "sha256": None, "bytes": None}


class SourceLabel(TypedDict):
    """Which source a row is about: ``name`` for a context entry, ``path`` for a local one."""

    kind: str
    name: NotRequired[str]
    path: NotRequired[str]


@dataclass(frozen=True)
class SourceRef:
    """One bound source of a record: ``kind`` is context, local or layer."""

    kind: str
    key: str
    entry: BoundSource
    standing: str | None = None  # a context entry's; a local path has none

    @property
    def label(self) -> SourceLabel:
        if self.kind == "local":
            return {"kind": self.kind, "path": self.key}
        return {"kind": self.kind, "name": self.key}


def record_sources(record: BindingRecordData) -> Iterator[SourceRef]:
    for context_entry in record.get("context", []):
        yield SourceRef(
            "context", context_entry["name"], context_entry, standing=context_entry["standing"]
        )
    for local_entry in record.get("local", []):
        yield SourceRef("local", local_entry["path"], local_entry)


class VersionView(TypedDict):
    """One side of a changed source in a comparison."""

    custody: str | None
    standing: str | None
    project: str | None
    path: str | None
    version: int | None
    sha256: str | None
    bytes: int | None


class SourceChange(SourceLabel):
    status: str  # added, removed, changed, or unchanged (same text, another version)
    a: VersionView | None
    b: VersionView | None


class ExceptionView(TypedDict):
    effect: str
    standing: str | None
    outcome: str


class ExceptionChange(TypedDict):
    target: str
    a: ExceptionView | None
    b: ExceptionView | None


class MemoryBlockChange(TypedDict):
    a: str | None
    b: str | None
    same: bool


class RecordComparison(TypedDict):
    """What differs between two records (`compare_records`)."""

    sources: list[SourceChange]
    exceptions: list[ExceptionChange]
    memory_block: MemoryBlockChange
    identical: bool


def _version_view(source: SourceRef | None) -> VersionView | None:
    if source is None:
        return None
    entry = source.entry
    document = source_document(entry)
    return {
        "custody": entry.get("custody"),
        "standing": source.standing,
        "project": document["project"] if document else None,
        "path": document["path"] if document else None,
        "version": document["version"] if document else None,
        "sha256": entry.get("sha256"),
        "bytes": entry.get("bytes"),
    }


def compare_records(a: BindingRecordData, b: BindingRecordData) -> RecordComparison:
    """What differs between two records: sources added, removed or changed, exception
    outcomes, and the memory block's hash."""
    sources_a = {(s.kind, s.key): s for s in record_sources(a)}
    sources_b = {(s.kind, s.key): s for s in record_sources(b)}
    sources: list[SourceChange] = []
    for key in [*sources_a, *(k for k in sources_b if k not in sources_a)]:
        left, right = sources_a.get(key), sources_b.get(key)
        view_a = _version_view(left)
        view_b = _version_view(right)
        present = left if left is not None else right
        if view_a == view_b or present is None:
            continue
        status = "added" if left is None else "removed" if right is None else "changed"
        if status == "changed" and _same_text(view_a, view_b):
            status = "unchanged"  # a later version wrote the same text again
        sources.append({**present.label, "status": status, "a": view_a, "b": view_b})
    outcomes_a = {e["target"]: e for e in a.get("exceptions", [])}
    outcomes_b = {e["target"]: e for e in b.get("exceptions", [])}
    exceptions: list[ExceptionChange] = []
    for target in [*outcomes_a, *(t for t in outcomes_b if t not in outcomes_a)]:
        pair_a = _exception_view(outcomes_a.get(target))
        pair_b = _exception_view(outcomes_b.get(target))
        if pair_a != pair_b:
            exceptions.append({"target": target, "a": pair_a, "b": pair_b})
    block_a = _memory_block_sha256(a)
    block_b = _memory_block_sha256(b)
    return {
        "sources": sources,
        "exceptions": exceptions,
        "memory_block": {"a": block_a, "b": block_b, "same": block_a == block_b},
        "identical": not sources and not exceptions and block_a == block_b,
    }


def _same_text(a: VersionView | None, b: VersionView | None) -> bool:
    """The same document with the same sha256, whatever its version number."""
    if a is None or b is None or a["sha256"] is None:
        return False
    return (a["project"], a["path"], a["sha256"]) == (b["project"], b["path"], b["sha256"])


def _memory_block_sha256(record: BindingRecordData) -> str | None:
    block = record.get("memory_block")
    return block.get("sha256") if block else None


def _exception_view(entry: ExceptionOutcome | None) -> ExceptionView | None:
    if entry is None:
        return None
    return {"effect": entry["effect"], "standing": entry["standing"], "outcome": entry["outcome"]}


CURRENT = "current"
CHANGED = "changed"
DELETED = "deleted"
MISSING = "missing"  # unresolved when bound, and still
OUTDATED_STATUSES = (CURRENT, CHANGED, DELETED, MISSING)
STALE = frozenset({CHANGED, DELETED})  # what a run bound is no longer what it would get


class OutdatedSide(TypedDict):
    """The bound or the current version of a source in an outdated row."""

    project: str
    path: str
    version: int
    sha256: str


class OutdatedRow(SourceLabel):
    """One row of the outdated table; ``status`` is one of `OUTDATED_STATUSES`."""

    bound: OutdatedSide | None
    current: OutdatedSide | None
    status: str
    detail: str


@dataclass(frozen=True)
class CurrentDocument:
    """What a bound source resolves to now; ``None`` in its place means it is gone."""

    document_id: int
    project: str
    path: str
    version: int
    sha256: str
    is_deleted: bool

    def as_view(self) -> OutdatedSide:
        """The ``current`` side of an outdated row."""
        return {
            "project": self.project,
            "path": self.path,
            "version": self.version,
            "sha256": self.sha256,
        }


def outdated_entry(
    source: SourceRef, now: CurrentDocument | None, *, gone_reason: str = ""
) -> OutdatedRow:
    """One row of the outdated table: bound against current, as `npm outdated` shows.

    ``current`` means the same text (same sha256), even if a later version wrote
    it again; ``changed`` a different text, or a name that now resolves to
    another document; ``deleted`` a document deleted since, or a name the
    provider map no longer resolves. A source that was unresolved when bound (a
    problem of the record) is ``missing`` while it still is, and ``changed`` once
    it resolves: a run bound now would get it.
    """
    bound = source.entry
    document = source_document(bound)
    sha256 = bound.get("sha256")
    if bound.get("custody") is None or document is None or sha256 is None:
        return _unresolved_entry(source, now)
    label = source.label
    bound_view: OutdatedSide = {
        "project": document["project"],
        "path": document["path"],
        "version": document["version"],
        "sha256": sha256,
    }
    if now is None or now.is_deleted:
        return {
            **label,
            "bound": bound_view,
            "current": None,
            "status": DELETED,
            "detail": gone_reason or "The document was deleted.",
        }
    if now.document_id != document["id"]:
        status = CHANGED
        detail = f"The name now resolves to {now.project}/{now.path}."
    elif now.sha256 != sha256:
        status = CHANGED
        detail = f"Changed from version {document['version']} to {now.version}."
    else:
        status = CURRENT
        detail = ""
    return {
        **label,
        "bound": bound_view,
        "current": now.as_view(),
        "status": status,
        "detail": detail,
    }


def _unresolved_entry(source: SourceRef, now: CurrentDocument | None) -> OutdatedRow:
    label = source.label
    if now is None or now.is_deleted:
        return {
            **label,
            "bound": None,
            "current": None,
            "status": MISSING,
            "detail": "Unresolved when bound.",
        }
    return {
        **label,
        "bound": None,
        "current": now.as_view(),
        "status": CHANGED,
        "detail": f"Unresolved when bound; now {now.project}/{now.path} version {now.version}.",
    }

"""Reads of binding records, and of the document versions a binding resolves to."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KT, KeyTransform
from django.db.models.functions import JSONObject
from django.utils import timezone

from agentdocs.core.bindings import (
    BoundDocument,
    BoundSkill,
    CurrentDocument,
    OutdatedRow,
    RecordComparison,
    SourceLabel,
    compare_records,
    outdated_entry,
    record_sources,
    sha256_hex,
)
from agentdocs.core.errors import NotFound
from agentdocs.core.manifest import skill_entry_name
from agentdocs.core.repository_runs import compare_repository_files
from agentdocs.core.skill_reads import restore_skill
from agentdocs.core.skills import bundle_sha256
from agentdocs.core.timeline import Run
from agentdocs.models import BindingRecord, Document, Project, ProviderMapping, Tenant
from agentdocs.selectors import skills as skill_selectors


def binding_record_list(
    *,
    project: Project,
    process: str | None = None,
    problems: bool | None = None,
    session: str | None = None,
) -> QuerySet[BindingRecord]:
    """A project's binding records, newest first, without their record JSON (but a live
    delivery's summary, `delivery_summary`); ``session``: that agent session's
    deliveries, oldest first, its timeline."""
    records = (
        BindingRecord.objects.filter(project=project)
        .select_related("created_by")
        .defer("record")
        .annotate(delivery_summary=DELIVERY_SUMMARY)
        .order_by("-created_at", "-id")
    )
    if session is not None:
        records = records.filter(process=session, record__has_key="delivery").order_by(
            "created_at", "id"
        )
    if process is not None:
        records = records.filter(process=process)
    if problems is True:
        records = records.filter(problem_count__gt=0)
    elif problems is False:
        records = records.filter(problem_count=0)
    return records


# The list's summary of a delivery, read in the database from the record's JSON.
DELIVERY_SUMMARY = JSONObject(
    tool=KT("record__delivery__tool"),
    event=KT("record__delivery__event"),
    source=KT("record__delivery__source"),
    block=KT("record__delivery__block"),
    usable=KeyTransform("usable", KeyTransform("received", KeyTransform("delivery", "record"))),
)


def binding_record_get(*, project: Project, record_id: int) -> BindingRecord:
    record = (
        BindingRecord.objects.select_related("created_by")
        .filter(project=project, pk=record_id)
        .first()
    )
    if record is None:
        raise NotFound(f"This project has no binding record {record_id}.", field="record")
    return record


def unarchived_record_ids(*, older_than: timedelta | None = None, limit: int = 1000) -> list[int]:
    """Records still not archived some time after they were made and after archival
    was last enqueued for them, oldest first."""
    if older_than is None:
        older_than = timedelta(seconds=settings.AGENTDOCS_ARCHIVE_SWEEP_AFTER_SECONDS)
    cutoff = timezone.now() - older_than
    return list(
        BindingRecord.objects.filter(archived_at__isnull=True, created_at__lte=cutoff)
        .filter(Q(archive_enqueued_at__isnull=True) | Q(archive_enqueued_at__lte=cutoff))
        .order_by("created_at", "id")
        .values_list("id", flat=True)[:limit]
    )


def bound_documents(lookups: Iterable[tuple[int, str]]) -> dict[tuple[int, str], BoundDocument]:
    """The live documents at the (project id, path) pairs, with the history row of
    their current version, in one query."""
    lookups = set(lookups)
    if not lookups:
        return {}
    history = Document.history.model.objects.filter(
        id=OuterRef("pk"), version=OuterRef("version")
    ).order_by("-history_id")
    rows = (
        Document.objects.filter(
            project_id__in={project_id for project_id, _ in lookups},
            path__in={path for _, path in lookups},
            is_deleted=False,
        )
        .annotate(history_id=Subquery(history.values("history_id")[:1]))
        .values(
            "id", "project_id", "project__slug", "path", "version", "sha256", "size", "history_id"
        )
    )
    found = {}
    for row in rows:
        key = (row["project_id"], row["path"])
        if key in lookups:
            found[key] = BoundDocument(
                document_id=row["id"],
                project=row["project__slug"],
                path=row["path"],
                version=row["version"],
                history_id=row["history_id"],
                sha256=row["sha256"],
                bytes=row["size"],
            )
    return found


def current_documents(
    lookups: Iterable[tuple[int, str]],
) -> dict[tuple[int, str], CurrentDocument]:
    """The documents at the (project id, path) pairs as they are now, deleted or not,
    in one query."""
    lookups = set(lookups)
    if not lookups:
        return {}
    rows = Document.objects.filter(
        project_id__in={project_id for project_id, _ in lookups},
        path__in={path for _, path in lookups},
    ).values("id", "project_id", "project__slug", "path", "version", "sha256", "is_deleted")
    return {
        (row["project_id"], row["path"]): CurrentDocument(
            document_id=row["id"],
            project=row["project__slug"],
            path=row["path"],
            version=row["version"],
            sha256=row["sha256"],
            is_deleted=row["is_deleted"],
        )
        for row in rows
        if (row["project_id"], row["path"]) in lookups
    }


def history_rows(
    *, tenant: Tenant, wanted: Iterable[tuple[str | None, str, int | None]]
) -> dict[tuple[str | None, str, int | None], dict[str, Any]]:
    """The newest history row of each (project slug, path, version) in the tenant.

    History rows never change, so a write after the render cannot move what
    these point at. One query, a superset narrowed here.
    """
    wanted = set(wanted)
    if not wanted:
        return {}
    rows = (
        Document.history.model.objects.filter(
            project__tenant_id=tenant.pk,
            project__slug__in={slug for slug, _, _ in wanted},
            path__in={path for _, path, _ in wanted},
            version__in={version for _, _, version in wanted},
        )
        .order_by("history_id")
        .values("history_id", "id", "project__slug", "path", "version", "sha256")
    )
    found = {}
    for row in rows:
        key = (row["project__slug"], row["path"], row["version"])
        if key in wanted:
            found[key] = row  # ordered by history_id: the newest wins
    return found


# The runs timeline (issue 15): a bounded window of records, read in one query.
TIMELINE_DEFAULT_RUNS = 1_000
TIMELINE_MAX_RUNS = 10_000


@dataclass(frozen=True)
class TimelineWindow:
    """The runs of a timeline, oldest first: the newest ``limit`` records made in
    [since, until); ``truncated`` when older ones in that span were left out."""

    runs: list[Run]
    limit: int
    truncated: bool


def binding_timeline_window(
    *,
    project: Project,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = TIMELINE_DEFAULT_RUNS,
) -> TimelineWindow:
    records = BindingRecord.objects.filter(project=project)
    if since is not None:
        records = records.filter(created_at__gte=since)
    if until is not None:
        records = records.filter(created_at__lt=until)
    rows = list(
        records.order_by("-created_at", "-id").values_list(
            "id", "created_at", "problem_count", "record"
        )[: limit + 1]
    )
    runs = [
        Run(id=pk, created_at=created_at.isoformat(), problem_count=problems, record=record)
        for pk, created_at, problems, record in reversed(rows[:limit])
    ]
    return TimelineWindow(runs=runs, limit=limit, truncated=len(rows) > limit)


# A session's deliveries read at most; a session that delivered more shows its newest.
SESSION_MAX_DELIVERIES = 500


def binding_session_runs(
    *, project: Project, session: str, limit: int = SESSION_MAX_DELIVERIES
) -> TimelineWindow:
    """One agent session's deliveries (records of its process with a `delivery`), oldest
    first: the newest ``limit``; ``truncated`` when older ones were left out."""
    rows = list(
        BindingRecord.objects.filter(project=project, process=session, record__has_key="delivery")
        .order_by("-created_at", "-id")
        .values_list("id", "created_at", "problem_count", "record")[: limit + 1]
    )
    runs = [
        Run(id=pk, created_at=created_at.isoformat(), problem_count=problems, record=record)
        for pk, created_at, problems, record in reversed(rows[:limit])
    ]
    return TimelineWindow(runs=runs, limit=limit, truncated=len(rows) > limit)


def binding_outdated(*, record: BindingRecord) -> list[OutdatedRow]:
    """Per bound source, its bound version and sha256 against what it resolves to now.

    A name is resolved again through the current provider map, as a new binding
    would; a local path is looked up in the project again. Constant queries.
    """
    # Sources kept in agentdocs, and those that were unresolved (custody None): a
    # client's unversioned document or a bundled default has no version here.
    sources = [
        s for s in record_sources(record.record) if s.entry.get("custody") in ("agentdocs", None)
    ]
    names = [s.key for s in sources if s.kind == "context"]
    mappings = {
        m["name"]: m
        for m in ProviderMapping.objects.filter(tenant_id=record.tenant_id, name__in=names).values(
            "name", "project_id", "path"
        )
    }
    lookups: dict[tuple[str, str], tuple[int, str]] = {}
    for source in sources:
        if source.kind == "context":
            mapping = mappings.get(source.key)
            if mapping is not None:
                lookups[(source.kind, source.key)] = (mapping["project_id"], mapping["path"])
        else:
            lookups[(source.kind, source.key)] = (record.project_id, source.key)
    current = current_documents(lookups.values())
    # A `skill/<name>` the provider map does not hold: the skill the project offers now.
    wanted = {
        name: wanted_name
        for name in names
        if name not in mappings and (wanted_name := skill_entry_name(name)) is not None
    }
    offered = (
        skill_selectors.skills_offered_by_name(project=record.project, names=wanted.values())
        if wanted
        else {}
    )
    skills_now = {
        name: CurrentDocument(
            document_id=skill.pk,
            project=skill.project.slug,
            path=f"skills/{skill.name}",
            version=skill.version,
            sha256=skill.sha256,
            is_deleted=False,
        )
        for name, skill_name in wanted.items()
        if (skill := offered.get(skill_name)) is not None
    }
    rows = []
    for source in sources:
        if source.kind == "context" and source.key in wanted:
            gone = "The project no longer offers this skill."
            rows.append(outdated_entry(source, skills_now.get(source.key), gone_reason=gone))
            continue
        where = lookups.get((source.kind, source.key))
        gone = "The provider map no longer has this name." if where is None else ""
        now = current.get(where) if where is not None else None
        rows.append(outdated_entry(source, now, gone_reason=gone))
    return rows


def binding_reconstruct_sources(*, record: BindingRecord) -> list[dict[str, Any]]:
    """The exact text of every bound source at its bound version, from history.

    Each text is hashed again and compared with the recorded sha256; a source
    that cannot be restored says why, and no text is guessed for it.
    """
    sources = list(record_sources(record.record))
    history_ids = [
        s.entry["document"]["history_id"]
        for s in sources
        if s.entry.get("custody") == "agentdocs" and "document" in s.entry
    ]
    skills = [s.entry["skill"] for s in sources if "skill" in s.entry]
    bundles = skill_selectors.skill_bundles(
        versions=[(skill["id"], skill["version"]) for skill in skills]
    )
    rows = {
        row["history_id"]: row
        for row in Document.history.model.objects.filter(history_id__in=history_ids).values(
            "history_id", "id", "version", "body"
        )
    }
    return [
        _restore_skill(source.label, source.entry, bundles)
        if "skill" in source.entry
        else _restore(source.label, source.entry, rows)
        for source in sources
    ]


def _restore_skill(
    label: SourceLabel,
    entry: Mapping[str, Any],
    bundles: Mapping[tuple[int, int], dict[str, str]],
) -> dict[str, Any]:
    """A `skill/<name>` entry: its bundle at the bound version, checked against the
    recorded digest; its files themselves are restored under the record's `skills`."""
    skill = entry["skill"]
    files = bundles.get((skill["id"], skill["version"]))
    verified = files is not None and bundle_sha256(files) == entry["sha256"]
    return {
        **label,
        "custody": entry.get("custody"),
        "sha256": entry["sha256"],
        "version": skill["version"],
        "restored": verified,
        "verified": verified,
        "body": None,
        "detail": f"The skill {skill['name']!r}: its files are restored under `skills`."
        if verified
        else "The skill's bound version is no longer in its history, or differs from it.",
    }


def _restore(
    label: SourceLabel, entry: Mapping[str, Any], rows: Mapping[int, Mapping[str, Any]]
) -> dict[str, Any]:
    result: dict[str, Any] = {**label, "custody": entry.get("custody"), "sha256": entry["sha256"]}
    if entry.get("custody") != "agentdocs":
        why = (
            "It was not resolved when the record was made."
            if not entry.get("resolved", True)
            else "It was supplied by the client and is kept by hash only."
        )
        return {**result, "restored": False, "verified": False, "body": None, "detail": why}
    document = entry["document"]
    row = rows.get(document["history_id"])
    result["version"] = document["version"]
    if row is None or row["id"] != document["id"] or row["version"] != document["version"]:
        return {
            **result,
            "restored": False,
            "verified": False,
            "body": None,
            "detail": "The history row of the bound version is no longer there.",
        }
    body = row["body"]
    if sha256_hex(body.encode("utf-8")) != entry["sha256"]:
        return {
            **result,
            "restored": False,
            "verified": False,
            "body": None,
            "detail": "The stored text of the bound version does not match the recorded sha256.",
        }
    return {**result, "restored": True, "verified": True, "body": body, "detail": ""}


def binding_compare(*, a: BindingRecord, b: BindingRecord) -> RecordComparison:
    comparison = compare_records(a.record, b.record)
    files = compare_repository_files(a.record.get("repository"), b.record.get("repository"))
    if a.record.get("repository") is None and b.record.get("repository") is None:
        return comparison
    return {**comparison, "repository": files, "identical": comparison["identical"] and not files}  # type: ignore[typeddict-unknown-key]


def binding_skills_reconstruct(skills: list[BoundSkill]) -> list[dict[str, Any]]:
    """Each skill a process read, its files restored from the skill's history at the
    bound version (one query whatever the number of skills) and each checked against
    its recorded sha256."""
    kept = skill_selectors.skill_bundles(
        versions=[(skill["skill_id"], skill["version"]) for skill in skills]
    )
    return [
        restore_skill(skill, kept.get((skill["skill_id"], skill["version"]))) for skill in skills
    ]

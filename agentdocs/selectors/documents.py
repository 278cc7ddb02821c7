"""Reads of documents and their history."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet

from agentdocs.core.errors import NotFound
from agentdocs.core.paths import validate_path
from agentdocs.models import RESERVED_PROJECT, ChangeType, Document, Project, Tenant


def document_get(*, project: Project, path: str, include_deleted: bool = False) -> Document:
    """The document at ``path`` in the project; NotFound when there is none, or when it
    is deleted unless ``include_deleted``."""
    validate_path(path)
    document = (
        Document.objects.select_related("updated_by", "lock_holder")
        .filter(project=project, path=path)
        .first()
    )
    if document is None or (document.is_deleted and not include_deleted):
        raise NotFound(f"No document at {path!r} in this project.", field="path")
    return document


def document_version(*, document: Document, version: int):  # -> HistoricalDocument
    """The history row of one version of a document."""
    record = (
        document.history.filter(version=version)
        .select_related("history_user")
        .order_by("-history_id")
        .first()
    )
    if record is None:
        raise NotFound(
            f"Version {version} does not exist; the document is at version {document.version}.",
            field="version",
        )
    return record


def document_versions(*, document: Document, versions: Collection[int]) -> dict[int, Any]:
    """The history rows of some versions of a document, by version, in one query (the
    newest row of each: a version's row is written once, but restores may repeat one);
    a version the history does not hold is missing from the answer."""
    rows = (
        document.history.filter(version__in=list(versions))
        .select_related("history_user")
        .order_by("history_id")
    )
    return {row.version: row for row in rows}


def document_list(*, project: Project, prefix: str = "") -> QuerySet[Document]:
    documents = (
        Document.objects.filter(project=project, is_deleted=False)
        .select_related("updated_by")
        .defer("body")
        .order_by("path")
    )
    if prefix:
        documents = documents.filter(path__startswith=prefix)
    return documents


def deleted_document_list(*, project: Project) -> QuerySet[Document]:
    """Deleted documents, kept with their history so they can be restored."""
    return (
        Document.objects.filter(project=project, is_deleted=True)
        .select_related("updated_by")
        .defer("body")
        .order_by("path")
    )


def tenant_wide_document(*, tenant: Tenant, path: str) -> Document | None:
    """The live document at ``path`` in the tenant's `_vance` project, without its body."""
    return (
        Document.objects.filter(
            project__tenant=tenant, project__slug=RESERVED_PROJECT, path=path, is_deleted=False
        )
        .select_related("updated_by")
        .defer("body")
        .first()
    )


def cascade_documents(*, project: Project, path: str) -> list[Document]:
    """The live documents at ``path`` in the project and in its tenant's `_vance` project,
    the project's first: the two database levels of the cascade, in one query."""
    documents = (
        Document.objects.filter(
            project__tenant_id=project.tenant_id,
            project__slug__in={project.slug, RESERVED_PROJECT},
            path=path,
            is_deleted=False,
        )
        .select_related("project", "updated_by")
        .order_by("project__slug")
    )
    return sorted(documents, key=lambda document: document.project_id != project.pk)


def agent_document_paths(*, tenant: Tenant, limit: int = 200) -> list[str]:
    """The Markdown documents of a tenant's projects that a recipe could name as its
    agent document (context documents left out), for the recipe form's picker."""
    return list(
        Document.objects.filter(project__tenant=tenant, is_deleted=False, path__endswith=".md")
        .exclude(path__startswith=".AGENTS/")
        .order_by("path")
        .values_list("path", flat=True)
        .distinct()[:limit]
    )


def document_versions_with_text(
    *, document: Document, sha256s: set[str], before_version: int
) -> list[tuple[int, str]]:
    """(version, sha256) of the versions before ``before_version`` whose text has one of
    ``sha256s``, newest first; deletions left out."""
    return list(
        document.history.filter(sha256__in=sha256s, version__lt=before_version)
        .exclude(change_type=ChangeType.DELETED)
        .order_by("-version")
        .values_list("version", "sha256")
    )


def document_history(*, document: Document) -> QuerySet:
    """Every version of a document, newest first, without the bodies."""
    return (
        document.history.select_related("history_user")
        .defer("body")
        .order_by("-version", "-history_id")
    )


@dataclass(frozen=True)
class IntroductionScan:
    """What one bounded `?q=` search of a history found.

    ``records``: the versions that introduced the phrase among those scanned, newest
    first, without their bodies. ``scanned``: how many versions' bodies were read.
    ``complete``: no older version is left. Otherwise ``resume_before`` is the oldest
    version scanned: the next search passes it as ``before`` to go on from there.
    """

    records: list[Any]  # HistoricalDocument rows
    scanned: int
    complete: bool
    newest_scanned: int | None
    oldest_scanned: int | None

    @property
    def resume_before(self) -> int | None:
        return None if self.complete else self.oldest_scanned


def document_history_introducing(
    *, document: Document, phrase: str, before: int | None = None, limit: int | None = None
) -> IntroductionScan:
    """The versions that introduced ``phrase``: those whose body holds it (a
    case-insensitive substring) while the version before did not (version 1 when it
    held it from the start). A phrase removed and written again has one introduction
    each time.

    Only the newest ``limit`` versions older than ``before`` (default: all versions,
    `AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT` of them at most) are searched, and each body
    is read once: reading every body of a long history of long versions costs seconds.
    Two queries (whether each scanned row holds the phrase, then the introducing rows),
    whatever the length of the history.
    """
    limit = settings.AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT if limit is None else limit
    versions = document.history.all()
    if before is not None:
        versions = versions.filter(version__lt=before)
    # One row more than the limit: the version before the oldest scanned one, to know
    # whether that one introduced the phrase or only kept it. The rows are chosen in a
    # subquery, so the database reads the bodies of those rows only (with the LIMIT
    # in the same query as the match, PostgreSQL matches every row before sorting).
    newest = versions.order_by("-version", "-history_id").values("history_id")[: limit + 1]
    window = list(
        document.history.filter(history_id__in=newest)
        .annotate(holds=ExpressionWrapper(Q(body__icontains=phrase), output_field=BooleanField()))
        .order_by("-version", "-history_id")
        .values_list("history_id", "version", "holds")
    )
    scanned, complete = window[:limit], len(window) <= limit
    held_by_version: dict[int, bool] = {}
    for _, version, holds in window:
        held_by_version[version] = held_by_version.get(version, False) or bool(holds)
    introducing = [
        pk for pk, version, holds in scanned if holds and not held_by_version.get(version - 1)
    ]
    records = list(
        document.history.filter(history_id__in=introducing)
        .select_related("history_user")
        .defer("body")
        .order_by("-version", "-history_id")
    )
    return IntroductionScan(
        records=records,
        scanned=len(scanned),
        complete=complete,
        newest_scanned=scanned[0][1] if scanned else None,
        oldest_scanned=scanned[-1][1] if scanned else None,
    )


@dataclass(frozen=True)
class MergedOnto:
    """The version a stale write was merged onto, as the writer is told of it."""

    version: int
    author: str  # their username, or "someone" once the user is gone
    saved_at: datetime
    reason: str


def merged_onto(row: Any) -> MergedOnto:
    """The version a history row holds, as a merge with it is told (a stale write's
    answer, and the merge page's)."""
    user = row.history_user
    return MergedOnto(
        version=row.version,
        author=user.get_username() if user is not None else "someone",
        saved_at=row.history_date,
        reason=row.history_change_reason or "",
    )

"""Archiving binding records: canonical JSON through Django's storage API.

Archiving is idempotent. The archive path is fixed by the record
(`tenant/project/date/id.json`) and its content by the record's canonical JSON,
so running it twice, or after a worker died halfway through a write, ends with
one complete archive and the record's archive fields set once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from agentdocs.core.bindings import BindingRecordData, canonical_json, sha256_hex
from agentdocs.core.numbers import MAX_ID
from agentdocs.models import BindingRecord
from agentdocs.selectors import bindings as binding_selectors
from agentdocs.sql import archive as archive_sql

logger = logging.getLogger(__name__)

ARCHIVE_TASK = "agentdocs.tasks.archive_binding_record"
ARCHIVE_BATCH_TASK = "agentdocs.tasks.archive_binding_records"
ARCHIVE_PENDING_TASK = "agentdocs.tasks.archive_pending_binding_records"
ARCHIVE_PENDING_KEY = "archive-pending:v1:{queue}"
ARCHIVE_PENDING_TTL_SECONDS = 30


def archive_document(record: BindingRecord) -> dict[str, Any]:
    """What is archived: the record with its id, as the API shows it."""
    return {"id": record.pk, **record.record}


def archive_bytes(record: BindingRecord) -> bytes:
    return canonical_json(archive_document(record))


def archive_bytes_bound(record: BindingRecordData) -> int:
    """The size of the archive a record not yet stored will get, at most: its
    canonical JSON with the largest id it could be given. Binding checks it against
    `AGENTDOCS_BINDING_MAX_ARCHIVE_BYTES` on the request, not later in the worker."""
    return len(canonical_json({"id": MAX_ID, **record}))


def archive_path(record: BindingRecord) -> str:
    return _path(record.tenant.slug, record.project.slug, record.created_at, record.pk)


def _path(tenant: str, project: str, created_at: datetime, record_id: int) -> str:
    return f"{tenant}/{project}/{created_at.astimezone(UTC):%Y-%m-%d}/{record_id}.json"


def _stored_sha256(path: str) -> str | None:
    if not default_storage.exists(path):
        return None
    with default_storage.open(path, "rb") as stored:
        return sha256_hex(stored.read())


def _write_archive(path: str, content: bytes, expected: str) -> None:
    """Leave exactly ``content`` at ``path``, whatever an earlier attempt left there.

    The common case is one save: the storage creates the file under its own name (the
    filesystem with `O_EXCL`) and writes ``content``, so there is nothing to check. When
    the name is taken, an earlier attempt left a file there, whole or cut short by a
    worker killed mid-write: it is kept when it holds ``content``, else replaced."""
    saved_as = default_storage.save(path, ContentFile(content))
    if saved_as == path:
        return
    default_storage.delete(saved_as)
    if _stored_sha256(path) == expected:
        return
    default_storage.delete(path)
    saved_as = default_storage.save(path, ContentFile(content))
    if saved_as != path:
        # Yet another attempt wrote the same path in between: keep one copy, and check it.
        default_storage.delete(saved_as)
        if _stored_sha256(path) != expected:
            raise OSError(f"The archive at {path} does not hold the record's canonical JSON.")


def binding_record_archive(*, record_id: int) -> bool:
    """Archive one record. Returns True when this call set the archive fields."""
    if not BindingRecord.objects.filter(pk=record_id).exists():
        logger.warning("Binding record %s does not exist; nothing to archive.", record_id)
        return False
    return binding_records_archive(record_ids=[record_id]) == 1


def binding_records_archive(*, record_ids: Sequence[int]) -> int:
    """Archive the records of ``record_ids`` still unarchived, as one batch. Returns how
    many this call set the archive fields of."""
    _, updated = _archive_batch(_unarchived().filter(pk__in=list(record_ids)))
    return updated


# What a claim reads of each record: its archive's path and content, nothing else.
CLAIMED = ("id", "created_at", "record", "tenant__slug", "project__slug")
Claimed = tuple[int, datetime, dict[str, Any], str, str]


def _unarchived() -> QuerySet[BindingRecord]:
    """Unarchived records, oldest first, claimed with `FOR UPDATE SKIP LOCKED` on
    PostgreSQL: workers running batches at once take disjoint records, and a worker
    that dies mid-batch releases its claim with its connection."""
    return (
        BindingRecord.objects.filter(archived_at__isnull=True)
        .select_for_update(skip_locked=True, of=("self",))
        .order_by("created_at", "id")
    )


def _archive_batch(claimed: QuerySet[BindingRecord]) -> tuple[int, int]:
    """Archive the ``claimed`` records in one transaction: how many were claimed, and how
    many this call set the archive fields of.

    The claim reads only what the files need (`CLAIMED`, as tuples: no model instances);
    each file is written as a single record's archival would (a file left by an earlier
    attempt is kept when it holds the record's canonical JSON, else replaced); the
    batch's archive fields are then set in one conditional UPDATE. A record whose file
    cannot be written is left unarchived for the retry and the sweep, after the others
    are set, and the first such error is raised."""
    failed: Exception | None = None
    with transaction.atomic():
        rows: list[Claimed] = list(claimed.values_list(*CLAIMED))
        archived: list[tuple[int, str, str]] = []
        for record_id, created_at, record, tenant, project in rows:
            content = canonical_json({"id": record_id, **record})
            digest = sha256_hex(content)
            path = _path(tenant, project, created_at, record_id)
            try:
                _write_archive(path, content, digest)
            except Exception as error:  # an object store raises its own error classes
                logger.warning("Could not archive binding record %s: %s", record_id, error)
                failed = failed or error
                continue
            archived.append((record_id, path, digest))
        updated = _archive_fields_set(archived, archived_at=timezone.now())
    if failed is not None:
        raise failed
    return len(rows), updated


ARCHIVE_FIELDS = ["archive_path", "archive_sha256", "archived_at"]


def _archive_fields_set(rows: list[tuple[int, str, str]], *, archived_at: datetime) -> int:
    """Set the archive fields of each (id, path, sha256) of ``rows`` where the record is
    still unarchived, in one statement: by hand on PostgreSQL (`agentdocs.sql.archive`;
    `bulk_update`'s CASE per row and field took longer to compile than the batch's files
    took to write), with the ORM elsewhere."""
    if not rows:
        return 0
    if connection.vendor == "postgresql":
        return archive_sql.archive_fields_set(rows, archived_at=archived_at)
    records = [
        BindingRecord(pk=pk, archive_path=path, archive_sha256=digest, archived_at=archived_at)
        for pk, path, digest in rows
    ]
    return BindingRecord.objects.filter(archived_at__isnull=True).bulk_update(
        records, ARCHIVE_FIELDS
    )


@dataclass(frozen=True)
class Drained:
    archived: int  # records whose archive fields this drain set
    follow: int  # how many drains should follow it: none once its batch was not full


def archive_pending(
    *, queue: str | None = None, batch_size: int | None = None, handed_on: bool = False
) -> Drained:
    """One drain (`ARCHIVE_PENDING_TASK`) on ``queue``: archive the oldest unarchived
    records, one batch of at most ``batch_size`` (`AGENTDOCS_ARCHIVE_BATCH_SIZE`), and
    say how many drains should follow.

    While batches come full, each drain hands on to one next. The first drain of a
    backlog (not ``handed_on``) that finds its batch full hands on to
    `AGENTDOCS_ARCHIVE_DRAINS` instead, so that many run at once on as many worker
    processes, taking disjoint batches (`FOR UPDATE SKIP LOCKED`); each line of drains
    ends at its first batch that is not full. A trickle of binds costs one drain each.

    The task enqueues the next drains only after a batch went through: with the storage
    down, each drain fails and is retried with its backoff instead of handing on."""
    batch_size = batch_size or settings.AGENTDOCS_ARCHIVE_BATCH_SIZE
    # Forgotten before the claim: a record committed after it enqueues a drain of its own.
    cache.delete(_pending_key(queue))
    claimed, updated = _archive_batch(_unarchived()[:batch_size])
    if claimed < batch_size:
        return Drained(archived=updated, follow=0)
    return Drained(archived=updated, follow=1 if handed_on else settings.AGENTDOCS_ARCHIVE_DRAINS)


def binding_record_archive_enqueue(*, record_id: int) -> None:
    """Have one newly committed record archived.

    Without a broker (tasks in-process) the record is archived at once, alone. With
    one, the record is left to a batch: a drain task (`ARCHIVE_PENDING_TASK`) is
    enqueued unless one is already waiting, which then archives every unarchived
    record in batches. A drain forgets that it was waiting before it claims its
    first batch, so a record committed after that claim enqueues another one; a
    lost drain is replaced once `ARCHIVE_PENDING_TTL_SECONDS` have passed, and the
    sweep finds whatever is left.

    The tasks are named, not imported: tasks are an interface over this service, as
    views are, so `agentdocs.tasks` imports this module and never the other way round.
    """
    if current_app.conf.task_always_eager:
        _send_task(ARCHIVE_BATCH_TASK, [record_id])
        return
    if cache.add(_pending_key(None), True, ARCHIVE_PENDING_TTL_SECONDS):
        _send_task(ARCHIVE_PENDING_TASK)


def _pending_key(queue: str | None) -> str:
    # Per queue (by default the app's, where a drain is sent): workers on another queue
    # (another deployment sharing the cache, a test's own) drain their own.
    return ARCHIVE_PENDING_KEY.format(queue=queue or current_app.conf.task_default_queue)


def _send_task(name: str, *args: Any) -> None:
    app = current_app
    if not app.conf.task_always_eager:
        app.send_task(name, args=args)
        return
    # With no broker (the embedded default) tasks run in-process, which `send_task`
    # never does: run the registered task instead, first letting Celery find the task
    # modules, as a worker does at start, when this process has not imported them.
    if name not in app.tasks:
        app.autodiscover_tasks(force=True)
    app.tasks[name].delay(*args)


def archive_sweep(*, older_than: timedelta | None = None, limit: int = 1000) -> list[int]:
    """Enqueue archival again for records a worker never finished. Returns their ids.

    A record is enqueued again only once the delay has passed since its last
    enqueue too, so a backlog longer than the delay is not flooded with duplicates
    (which would be harmless, archival being idempotent, but would grow the queue).
    """
    record_ids = binding_selectors.unarchived_record_ids(older_than=older_than, limit=limit)
    BindingRecord.objects.filter(pk__in=record_ids).update(archive_enqueued_at=timezone.now())
    size = settings.AGENTDOCS_ARCHIVE_BATCH_SIZE
    for start in range(0, len(record_ids), size):
        batch = record_ids[start : start + size]
        try:
            _send_task(ARCHIVE_BATCH_TASK, batch)
        except Exception:  # the broker, or in-process the archival itself: go on with the rest
            logger.exception(
                "Could not archive binding records %s to %s; the sweep tries again after "
                "its delay.",
                batch[0],
                batch[-1],
            )
    return record_ids

"""Archiving binding records: canonical JSON through Django's storage API.

Archiving is idempotent. The archive path is fixed by the record
(`tenant/project/date/id.json`) and its content by the record's canonical JSON,
so running it twice, or after a worker died halfway through a write, ends with
one complete archive and the record's archive fields set once.
"""

from __future__ import annotations

import logging
from datetime import UTC, timedelta
from typing import Any

from celery import current_app
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from agentdocs.core.bindings import BindingRecordData, canonical_json, sha256_hex
from agentdocs.core.numbers import MAX_ID
from agentdocs.models import BindingRecord
from agentdocs.selectors import bindings as binding_selectors

logger = logging.getLogger(__name__)

ARCHIVE_TASK = "agentdocs.tasks.archive_binding_record"


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
    created = record.created_at.astimezone(UTC)
    return f"{record.tenant.slug}/{record.project.slug}/{created:%Y-%m-%d}/{record.pk}.json"


def _stored_sha256(path: str) -> str | None:
    if not default_storage.exists(path):
        return None
    with default_storage.open(path, "rb") as stored:
        return sha256_hex(stored.read())


def _write_archive(path: str, content: bytes, expected: str) -> None:
    """Leave exactly ``content`` at ``path``, whatever an earlier attempt left there."""
    stored = _stored_sha256(path)
    if stored == expected:
        return
    if stored is not None:
        # A worker killed mid-write leaves a partial file; it is ours to replace.
        default_storage.delete(path)
    saved_as = default_storage.save(path, ContentFile(content))
    if saved_as != path:
        # Another attempt wrote the same path in between: keep one copy, and check it.
        default_storage.delete(saved_as)
    if _stored_sha256(path) != expected:
        raise OSError(f"The archive at {path} does not hold the record's canonical JSON.")


def binding_record_archive(*, record_id: int) -> bool:
    """Archive one record. Returns True when this call set the archive fields."""
    record = BindingRecord.objects.select_related("tenant", "project").filter(pk=record_id).first()
    if record is None:
        logger.warning("Binding record %s does not exist; nothing to archive.", record_id)
        return False
    if record.archived_at is not None:
        return False
    content = archive_bytes(record)
    expected = sha256_hex(content)
    path = archive_path(record)
    _write_archive(path, content, expected)
    updated = BindingRecord.objects.filter(pk=record.pk, archived_at__isnull=True).update(
        archive_path=path, archive_sha256=expected, archived_at=timezone.now()
    )
    return updated == 1


def binding_record_archive_enqueue(*, record_id: int) -> None:
    """Hand one record to the archival task (`agentdocs.tasks.archive_binding_record`).

    The task is named, not imported: tasks are an interface over this service, as
    views are, so `agentdocs.tasks` imports this module and never the other way round.
    """
    _send_task(ARCHIVE_TASK, record_id)


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
    for record_id in record_ids:
        try:
            binding_record_archive_enqueue(record_id=record_id)
        except Exception:  # the broker, or in-process the archival itself: go on with the rest
            logger.exception(
                "Could not archive binding record %s; the sweep tries again after its delay.",
                record_id,
            )
    return record_ids

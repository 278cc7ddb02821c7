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

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db.models import Q
from django.utils import timezone

from agentdocs.core.bindings import canonical_json, sha256_hex
from agentdocs.models import BindingRecord

logger = logging.getLogger(__name__)


def archive_document(record: BindingRecord) -> dict[str, Any]:
    """What is archived: the record with its id, as the API shows it."""
    return {"id": record.pk, **record.record}


def archive_bytes(record: BindingRecord) -> bytes:
    return canonical_json(archive_document(record))


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


def archive_sweep(*, older_than: timedelta | None = None, limit: int = 1000) -> list[int]:
    """Enqueue archival again for records a worker never finished. Returns their ids.

    A record is enqueued again only once the delay has passed since its last
    enqueue too, so a backlog longer than the delay is not flooded with duplicates
    (which would be harmless, archival being idempotent, but would grow the queue).
    """
    from agentdocs import tasks

    record_ids = unarchived_record_ids(older_than=older_than, limit=limit)
    BindingRecord.objects.filter(pk__in=record_ids).update(archive_enqueued_at=timezone.now())
    for record_id in record_ids:
        try:
            tasks.archive_binding_record.delay(record_id)
        except Exception:  # the broker, or in-process the archival itself: go on with the rest
            logger.exception(
                "Could not archive binding record %s; the sweep tries again after its delay.",
                record_id,
            )
    return record_ids

"""Exports of a tenant's history chain written by a task to a JSON Lines file, so that no
request holds a worker for the length of a long chain (`POST .../audit/export`).

The task (`agentdocs.tasks.export_audit_chain`) writes the lines of
`audit_chain.audit_chain_lines` to a temporary file, telling its progress on the run as
it goes, then saves the file in the media storage under `audit-exports/` with its size
and sha256. The file is served by `GET .../audit/exports/{id}/download` until the run
is older than `AGENTDOCS_AUDIT_EXPORT_KEEP_DAYS`; starting a new export deletes the
tenant's expired runs and their files.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from datetime import datetime
from typing import Any

from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from agentdocs.models.audit import AuditChainHead, AuditExportRun, AuditVerificationState
from agentdocs.models.tenancy import Tenant
from agentdocs.selectors.audit import audit_export_kept_for
from agentdocs.services.audit_chain import LOST_AFTER, audit_chain_lines, enqueue_audit_task

logger = logging.getLogger(__name__)

EXPORT_TASK = "agentdocs.tasks.export_audit_chain"
FOLDER = "audit-exports"
# Lines written between two progress updates on the run.
PROGRESS_EVERY = 5000
_UNFINISHED = (AuditVerificationState.QUEUED, AuditVerificationState.RUNNING)


def _delete_expired(tenant: Tenant, now: datetime) -> None:
    expired = AuditExportRun.objects.filter(
        tenant=tenant, created_at__lt=now - audit_export_kept_for()
    )
    for name in expired.exclude(file="").values_list("file", flat=True):
        try:
            default_storage.delete(name)
        except OSError:  # already gone, or the storage refused: the row goes anyway
            logger.warning("Could not delete the expired audit export %s.", name)
    expired.delete()


def audit_export_start(*, tenant: Tenant, user: Any) -> AuditExportRun:
    """An export of the tenant's chain on its way: the one already queued or running
    (so repeated requests write the chain once), or a new one handed to the task once
    committed. With no broker the task runs in-process, so the run returned is done."""
    now = timezone.now()
    with transaction.atomic():
        _delete_expired(tenant, now)
        running = (
            AuditExportRun.objects.filter(
                tenant=tenant, state__in=_UNFINISHED, updated_at__gte=now - LOST_AFTER
            )
            .order_by("-created_at")
            .first()
        )
        if running is not None:
            return running
        head = AuditChainHead.objects.filter(tenant=tenant).values_list("seq", flat=True).first()
        run = AuditExportRun.objects.create(tenant=tenant, requested_by=user, total=head or 0)
        transaction.on_commit(lambda: enqueue_audit_task(EXPORT_TASK, AuditExportRun, run.pk))
    run.refresh_from_db()
    return run


def audit_export_run(*, run_id: int) -> AuditExportRun | None:
    """Write the chain for one export, telling its progress on the run as it goes, and
    keep the file's name, size, sha256 and head there; a run already finished is left
    as it is."""
    run = AuditExportRun.objects.select_related("tenant").filter(pk=run_id).first()
    if run is None or run.state not in _UNFINISHED:
        return run
    runs = AuditExportRun.objects.filter(pk=run_id)
    started = timezone.now()
    runs.update(state=AuditVerificationState.RUNNING, started_at=started, updated_at=started)
    try:
        finished = _write(run, runs)
    except Exception as error:
        runs.update(
            state=AuditVerificationState.FAILED,
            error=f"{type(error).__name__}: {error}"[:500],
            finished_at=timezone.now(),
        )
        raise
    runs.update(state=AuditVerificationState.DONE, updated_at=timezone.now(), **finished)
    run.refresh_from_db()
    return run


def _write(run: AuditExportRun, runs: Any) -> dict[str, Any]:
    digest = hashlib.sha256()
    size = written = 0
    last = ""
    with tempfile.TemporaryFile() as spool:
        for line in audit_chain_lines(tenant=run.tenant):
            data = line.encode()
            spool.write(data)
            digest.update(data)
            size += len(data)
            written += 1
            last = line
            if written % PROGRESS_EVERY == 0:
                runs.update(written=written, updated_at=timezone.now())
        spool.seek(0)
        name = default_storage.save(f"{FOLDER}/{run.tenant_id}/{run.pk}.jsonl", File(spool))
    head = json.loads(last)["head"]
    return {
        # The head's line is not a row of the chain.
        "written": written - 1,
        "file": name,
        "bytes": size,
        "sha256": digest.hexdigest(),
        "head_seq": head["seq"],
        "head_sha256": head["chain_sha256"],
        "finished_at": timezone.now(),
    }

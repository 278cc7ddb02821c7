"""Celery tasks: another interface, like the views. Each takes ids, loads rows
through a service, and keeps retries and failure handling here."""

from __future__ import annotations

import logging

from celery import Task, shared_task

from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.services import archival, audit_chain, audit_export, render_costs
from agentdocs.services import deliveries as delivery_service

logger = logging.getLogger(__name__)


@shared_task(
    acks_late=True,
    # Any error: a storage backend other than the filesystem (an object store) raises
    # its client library's own. Archival is idempotent, so a retry is always safe.
    autoretry_for=(Exception,),
    retry_backoff=2,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=8,
)
def archive_binding_record(record_id: int) -> bool:
    """Archive one binding record; safe to run any number of times.

    Late acknowledgement: a worker that dies mid-task leaves the message to be
    delivered again, and the sweep re-enqueues whatever is still unarchived.
    """
    return archival.binding_record_archive(record_id=record_id)


# Any error: a storage backend other than the filesystem (an object store) raises its
# client library's own. Archival is idempotent, so a retry is always safe.
ARCHIVE_RETRIES = {
    "acks_late": True,
    "autoretry_for": (Exception,),
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 8,
}


@shared_task(**ARCHIVE_RETRIES)
def archive_binding_records(record_ids: list[int]) -> int:
    """Archive a batch of binding records (those still unarchived), as the sweep hands
    them out; safe to run any number of times. Returns how many it archived."""
    return archival.binding_records_archive(record_ids=record_ids)


@shared_task(bind=True, **ARCHIVE_RETRIES)
def archive_pending_binding_records(self: Task, handed_on: bool = False) -> int:
    """Archive the oldest unarchived binding records, one batch, and enqueue the drains
    that follow it on this queue while a backlog remains (`archival.archive_pending`:
    the first drain of a backlog starts several, each handing on to one). Returns how
    many it archived."""
    queue = (self.request.delivery_info or {}).get("routing_key")
    drained = archival.archive_pending(queue=queue, handed_on=handed_on)
    for _ in range(drained.follow):
        try:
            self.apply_async(kwargs={"handed_on": True}, queue=queue)
        except Exception:  # the broker: the next bind or the sweep takes the rest
            logger.exception("Could not enqueue the next archival drain.")
            break
    return drained.archived


@shared_task(acks_late=True)
def sweep_unarchived_binding_records() -> int:
    """Re-enqueue records not archived some minutes after they were made."""
    record_ids = archival.archive_sweep()
    if record_ids:
        logger.info("Re-enqueued %d unarchived binding records.", len(record_ids))
    return len(record_ids)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def deliver_webhook(self: Task, delivery_id: int) -> bool:
    """Make a webhook delivery's next attempt, if it is open and due; safe to run any
    number of times (the delivery's row lock and state decide).

    Its retries are not Celery's: each is a logged attempt whose time is stored with the
    delivery. This task enqueues the next one, on the queue this one came from, once the
    attempt is committed; the sweep enqueues what no task is on its way for (a worker
    killed mid-delivery, a retry hours off).
    """
    retry_in = delivery_service.delivery_attempt(delivery_id=delivery_id)
    if retry_in is None:
        return False
    queue = (self.request.delivery_info or {}).get("routing_key")
    try:
        self.apply_async(args=(delivery_id,), countdown=retry_in, queue=queue)
    except Exception:  # the broker: the sweep enqueues it once due
        logger.exception("Could not enqueue the retry of webhook delivery %s.", delivery_id)
    return True


@shared_task(acks_late=True)
def sweep_webhook_deliveries() -> int:
    """Enqueue the webhook deliveries that are due and that no task is on its way for."""
    delivery_ids = delivery_service.delivery_sweep()
    if delivery_ids:
        logger.info("Enqueued %d webhook deliveries.", len(delivery_ids))
    return len(delivery_ids)


@shared_task(acks_late=True)
def verify_audit_chains() -> int:
    """Walk every tenant's history chain (daily); each broken one emits
    `audit.chain_broken`. Returns how many are broken."""
    broken = 0
    for tenant_id in tenancy_selectors.tenant_ids():
        try:
            report = audit_chain.audit_chain_check(tenant_id=tenant_id)
        except Exception:  # one tenant's failure must not hide the others' findings
            logger.exception("Could not verify the history chain of tenant %s.", tenant_id)
            continue
        if not report["ok"]:
            broken += 1
            logger.warning("The history chain of tenant %s is broken.", tenant_id)
    return broken


@shared_task(acks_late=True)
def verify_audit_chain(verification_id: int) -> bool | None:
    """Walk one tenant's history chain for a verification asked for through the API
    (`POST .../audit/verify`); its progress and report are kept on the verification.
    Returns whether the chain verifies (None: no such verification)."""
    verification = audit_chain.audit_verification_run(verification_id=verification_id)
    if verification is None or verification.report is None:
        return None
    return bool(verification.report["ok"])


@shared_task(acks_late=True)
def export_audit_chain(run_id: int) -> int | None:
    """Write one tenant's history chain to a JSON Lines file for an export asked for
    through the API (`POST .../audit/export`); its progress, file, size and sha256 are
    kept on the run. Returns the rows written (None: no such export)."""
    run = audit_export.audit_export_run(run_id=run_id)
    return None if run is None else run.written


@shared_task(acks_late=True)
def fold_render_turns() -> int:
    """Write the render counters of the last days into the database (every few
    minutes), so the costs over days outlive the cache's copy."""
    return render_costs.render_turns_fold()

"""Webhook deliveries: every committed event matching a webhook becomes a delivery, sent
by a Celery task, signed per Standard Webhooks, retried on a schedule of about a day,
and logged attempt by attempt (the request itself is `webhook_sender`'s).

No request waits on a receiver. With a broker, a delivery is enqueued once committed
and a worker sends it; without one (tasks run in-process), it waits in the outbox (the
open `Delivery` rows with no task on their way, `enqueued_for` null) for the sweeper
(`manage.py webhook_sweep --every 10`, or Celery beat), which sends it.

Delivery is at least once and idempotent by event id: one `Delivery` per webhook
and event (the event id is the `webhook-id` header on every attempt), and an
attempt runs only while its row is locked and the delivery still open, so a task
that runs twice, or after the delivery succeeded, sends nothing. A worker killed
mid-delivery rolls back its transaction; the sweep enqueues the delivery again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from standardwebhooks import Webhook as Signer

from agentdocs.core import webhooks as core
from agentdocs.models import Delivery, DeliveryAttempt, DeliveryState, Event, Webhook
from agentdocs.models.events import new_event_id
from agentdocs.models.webhooks import OPEN_STATES
from agentdocs.services import webhook_sender
from agentdocs.services import webhooks as webhook_service

DELIVER_TASK = "agentdocs.tasks.deliver_webhook"

logger = logging.getLogger(__name__)


# Retries further off than this are left to the sweep rather than held by a worker:
# Redis hands an unacknowledged message to another worker after an hour.
MAX_COUNTDOWN_SECONDS = 50 * 60


# A task may run this much before its delivery's retry is due (clocks, brokers).
EARLY_SLACK = timedelta(milliseconds=500)


def _subscribed(webhook: Webhook, event: Event, project_slug: str | None) -> bool:
    if event.type not in webhook.events:
        return False
    if webhook.projects is None:
        return True
    return project_slug is not None and project_slug in webhook.projects


def event_payload(event: Event, *, data: dict[str, Any]) -> core.WebhookPayload:
    return core.payload(
        event_id=event.id,
        type=event.type,
        created_at=event.created_at,
        tenant=event.tenant.slug,
        project=event.project.slug if event.project is not None else None,
        data=data,
    )


def deliveries_create(*, event: Event, data: dict[str, Any]) -> list[int]:
    """A delivery of ``event`` to each active webhook of its tenant that subscribes to it,
    handed over once committed (`_hand_over`); ``data`` is the payload's `data`, the
    event's with its links (`agentdocs.links.event_data`: the face that knows the URL
    conf builds them). Returns their ids; an event already delivered to a webhook (the
    signal sent twice) makes no second delivery there. The same few queries whatever the
    number of webhooks."""
    webhooks = [
        webhook
        for webhook in Webhook.objects.filter(tenant_id=event.tenant_id, active=True)
        if _subscribed(webhook, event, event.project.slug if event.project else None)
    ]
    if not webhooks:
        return []
    now = timezone.now()
    payload = dict(event_payload(event, data=data))
    retries = len(settings.AGENTDOCS_WEBHOOK_RETRY_SCHEDULE)
    with transaction.atomic():
        already = set(
            Delivery.objects.filter(event_id=event.id, webhook__in=webhooks).values_list(
                "webhook_id", flat=True
            )
        )
        # A concurrent second signal for the event fails on the unique constraint and
        # rolls back: the first made the same deliveries.
        made = Delivery.objects.bulk_create(
            Delivery(
                webhook=webhook,
                event_id=event.id,
                event_type=event.type,
                payload=payload,
                retries_left=retries,
                next_retry_at=now,
                enqueued_for=_enqueued_for(now),
                created_at=now,
            )
            for webhook in webhooks
            if webhook.pk not in already
        )
        ids = [delivery.pk for delivery in made]
        for delivery_id in ids:
            _hand_over(delivery_id)
    return ids


def event_committed_receiver(
    sender: Any, event: Event, data: Callable[[Event], dict[str, Any]], **kwargs: Any
) -> None:
    """The change is committed already: a failure here is logged, never raised.
    ``data`` makes the payload's `data` of the event (`agentdocs.links.event_data`)."""
    try:
        deliveries_create(event=event, data=data(event))
    except Exception:
        logger.exception("Could not create the webhook deliveries of event %s.", event.pk)


def webhook_test(*, webhook: Webhook, user: User) -> Delivery:
    """Queue a `ping` to the webhook, whatever it subscribes to: one attempt, no retries,
    sent by a worker or the sweeper as any delivery is; its log shows how it went."""
    if not webhook.active:
        raise webhook_service.WebhookDisabled(
            "The webhook is turned off; turn it on (`active: true`) to send it anything."
        )
    now = timezone.now()
    event_id = new_event_id()
    payload = core.payload(
        event_id=event_id,
        type=core.PING,
        created_at=now,
        tenant=webhook.tenant.slug,
        project=None,
        data={
            "webhook": webhook.pk,
            "url": webhook.url,
            "sent_by": user.get_username(),
            "message": "A test delivery from agentdocs.",
        },
    )
    with transaction.atomic():
        delivery = Delivery.objects.create(
            webhook=webhook,
            event_id=event_id,
            event_type=core.PING,
            payload=dict(payload),
            retries_left=0,
            manual=True,
            next_retry_at=now,
            enqueued_for=_enqueued_for(now),
            created_at=now,
        )
        _hand_over(delivery.pk)
    return delivery


def delivery_redeliver(*, delivery: Delivery, user: User) -> Delivery:
    """Queue the delivery again now, with the same event id and payload. A closed one
    gets one more attempt and no retries; an open one's next retry is brought forward."""
    if not delivery.webhook.active:
        raise webhook_service.WebhookDisabled(
            "The webhook is turned off; turn it on (`active: true`) to redeliver to it."
        )
    now = timezone.now()
    with transaction.atomic():
        locked = Delivery.objects.select_for_update().get(pk=delivery.pk)
        if locked.state not in OPEN_STATES:
            locked.state = DeliveryState.PENDING
            locked.retries_left = 0
            locked.manual = True
        locked.next_retry_at = now
        locked.enqueued_for = _enqueued_for(now)
        locked.save(
            update_fields=["state", "retries_left", "manual", "next_retry_at", "enqueued_for"]
        )
        logger.info(
            "%s redelivers %s of webhook %s.",
            user.get_username(),
            locked.event_id,
            locked.webhook_id,
        )
        _hand_over(locked.pk)
    return locked


def _has_broker() -> bool:
    """Tasks go to a broker's workers; without one they would run in the caller."""
    return not current_app.conf.task_always_eager


def _enqueued_for(now: datetime) -> datetime | None:
    """When a new or brought-forward delivery's task is enqueued: now with a broker;
    never without one, so the sweeper takes it from the outbox at its next sweep."""
    return now if _has_broker() else None


def _hand_over(delivery_id: int) -> None:
    """Give a delivery due now to whoever sends it, never to the request that made it
    (a slow receiver would hold the writer): with a broker a worker, once committed;
    without one it stays in the outbox for the sweeper."""
    if _has_broker():
        _enqueue_on_commit(delivery_id, 0)


def _enqueue_on_commit(delivery_id: int, countdown: float) -> None:
    # Robust: the change that made the delivery is committed; a broker that is down
    # must not turn it into an error. The sweep sends what was not enqueued.
    transaction.on_commit(lambda: _enqueue(delivery_id, countdown), robust=True)


def _enqueue(delivery_id: int, countdown: float) -> None:
    """Hand a delivery to the task (`agentdocs.tasks.deliver_webhook`), named rather than
    imported: tasks are an interface over this module, which never imports them. Without
    a broker the task runs here: only the sweep calls this then, in the sweeper."""
    app = current_app
    if not app.conf.task_always_eager:
        app.send_task(DELIVER_TASK, args=(delivery_id,), countdown=countdown or None)
        return
    if countdown > 0:
        return  # nothing in-process waits for a retry: the sweep sends it once due
    if DELIVER_TASK not in app.tasks:
        app.autodiscover_tasks(force=True)
    app.tasks[DELIVER_TASK].delay(delivery_id)


def _signed_request(delivery: Delivery, webhook: Webhook) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False)
    sent_at = datetime.now(tz=UTC)
    signature = Signer(webhook.secret).sign(msg_id=delivery.event_id, timestamp=sent_at, data=body)
    headers = {
        "webhook-id": delivery.event_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": signature,
    }
    return body.encode(), headers


def _record_failure(webhook: Webhook, delivery: Delivery, now: datetime, gave_up: bool) -> None:
    failing_since = webhook.failing_since or now
    if webhook.failing_since is None:
        Webhook.objects.filter(pk=webhook.pk, failing_since__isnull=True).update(failing_since=now)
    limit = timedelta(seconds=settings.AGENTDOCS_WEBHOOK_DISABLE_AFTER_SECONDS)
    if now - failing_since >= limit:
        webhook_service.webhook_disable(
            webhook=webhook,
            reason=f"Every delivery has failed since {failing_since:%Y-%m-%d %H:%M} UTC "
            f"(last error: {delivery.error}).",
            now=now,
        )
    elif gave_up:
        webhook_service.webhook_disable(
            webhook=webhook,
            reason=f"The last retry of {delivery.event_type} {delivery.event_id} failed "
            f"({delivery.error}).",
            now=now,
        )


def delivery_attempt(*, delivery_id: int) -> float | None:
    """Make the delivery's next attempt if it is open and due. Returns the seconds after
    which the caller (the task) is to enqueue the next attempt, or None: delivered,
    failed for good, not due, or a retry left to the sweep (too far off to hold, or no
    broker to hold it).

    The row stays locked while the request is out, so a second task for the same
    delivery (a duplicate message, the sweep) skips it instead of sending twice.
    """
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("webhook")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None or delivery.state not in OPEN_STATES:
            return None
        now = timezone.now()
        if delivery.next_retry_at is not None and delivery.next_retry_at > now + EARLY_SLACK:
            return None
        webhook = delivery.webhook
        if not webhook.active:
            delivery.state = DeliveryState.FAILED
            delivery.next_retry_at = delivery.enqueued_for = None
            delivery.error = "Not sent: the webhook is turned off."
            delivery.save(update_fields=["state", "next_retry_at", "enqueued_for", "error"])
            return None
        body, headers = _signed_request(delivery, webhook)
        result = webhook_sender.send(
            url=webhook.url,
            body=body,
            headers=headers,
            timeout=settings.AGENTDOCS_WEBHOOK_TIMEOUT_SECONDS,
            body_cap=settings.AGENTDOCS_WEBHOOK_RESPONSE_BODY_BYTES,
            allow_private=webhook_service.allow_private_addresses(),
        )
        now = timezone.now()
        delivery.attempts += 1
        DeliveryAttempt.objects.create(
            delivery=delivery,
            number=delivery.attempts,
            status_code=result.status_code,
            duration_ms=result.duration_ms,
            succeeded=result.succeeded,
            error=result.error,
            response_body=result.response_body,
            at=now,
        )
        delivery.status_code = result.status_code
        delivery.duration_ms = result.duration_ms
        delivery.error = result.error
        delivery.last_attempt_at = now
        delay = None
        if result.succeeded:
            delivery.state = DeliveryState.SUCCEEDED
            delivery.next_retry_at = delivery.enqueued_for = None
            if webhook.failing_since is not None:
                Webhook.objects.filter(pk=webhook.pk).update(failing_since=None)
        else:
            delay = core.retry_delay(
                settings.AGENTDOCS_WEBHOOK_RETRY_SCHEDULE, delivery.retries_left
            )
            if delay is None:
                delivery.state = DeliveryState.FAILED
                delivery.next_retry_at = delivery.enqueued_for = None
            else:
                delivery.state = DeliveryState.RETRYING
                delivery.retries_left -= 1
                delivery.next_retry_at = now + timedelta(seconds=delay)
                enqueued = _has_broker() and delay <= MAX_COUNTDOWN_SECONDS
                delivery.enqueued_for = delivery.next_retry_at if enqueued else None
            _record_failure(webhook, delivery, now, gave_up=delay is None and not delivery.manual)
            if not webhook.active:  # turned off by this failure: nothing more is sent
                delay = None
                delivery.state = DeliveryState.FAILED
                delivery.next_retry_at = delivery.enqueued_for = None
        delivery.save()
    return delay if delivery.enqueued_for is not None else None


def delivery_sweep(*, older_than: timedelta | None = None, limit: int = 1000) -> list[int]:
    """Enqueue every open delivery that is due and has no task on its way: new or
    brought forward without a broker (the outbox), its retry was too far off to enqueue,
    the task was lost with a killed worker, or the broker was down. Returns their ids.
    Without a broker the sweep sends them itself, once its claim is committed. A
    delivery with a task enqueued less than ``older_than`` ago, or that another worker
    is sending (its row locked), is left alone: nothing is sent twice."""
    if older_than is None:
        older_than = timedelta(seconds=settings.AGENTDOCS_WEBHOOK_SWEEP_AFTER_SECONDS)
    now = timezone.now()
    with transaction.atomic():
        ids = list(
            Delivery.objects.select_for_update(skip_locked=True)
            .filter(state__in=OPEN_STATES, next_retry_at__lte=now)
            .filter(Q(enqueued_for__isnull=True) | Q(enqueued_for__lte=now - older_than))
            .order_by("next_retry_at", "pk")
            .values_list("pk", flat=True)[:limit]
        )
        Delivery.objects.filter(pk__in=ids).update(enqueued_for=now)
        for delivery_id in ids:
            _enqueue_on_commit(delivery_id, 0)
    return ids

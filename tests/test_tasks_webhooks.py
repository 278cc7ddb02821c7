"""Webhook delivery by a real Celery worker process on this machine's Redis and
PostgreSQL (the worker of tests/test_tasks.py), to a real HTTP receiver in this
process: retries with a backoff shortened for the test, and no event lost when the
worker is killed in the middle of a delivery."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from standardwebhooks import Webhook as Verifier

from agentdocs.models import Delivery, DeliveryAttempt
from agentdocs.services import deliveries as delivery_service
from agentdocs.services import events as event_service
from agentdocs.services import webhooks as webhook_service
from tests import test_tasks

pytestmark = [pytest.mark.celery_worker, pytest.mark.redis, pytest.mark.postgres]

worker_setup = test_tasks.worker_setup
TIMEOUT = test_tasks.WORKER_START_TIMEOUT + 60


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch, settings) -> None:
    """Retries 0.2 s apart, in the worker (which reads the environment) and here."""
    monkeypatch.setenv("AGENTDOCS_WEBHOOK_RETRY_SCHEDULE", "0.2,0.2,0.2")
    monkeypatch.setenv("AGENTDOCS_WEBHOOK_ALLOW_PRIVATE", "1")
    settings.AGENTDOCS_WEBHOOK_RETRY_SCHEDULE = (0.2, 0.2, 0.2)


def _emit(tenant, project, admin):
    # The transactional database commits for real, so on_commit enqueues to Redis.
    return event_service.emit(
        type="document.updated",
        tenant=tenant,
        project=project,
        actor=admin,
        target="agent.md",
        data={"path": "agent.md"},
    )


def _wait_until(condition: Callable[[], bool], worker: test_tasks.Worker, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"Timed out waiting for {what}. Worker log:\n{worker.log_text()}")


def _closed(delivery_filter) -> Callable[[], bool]:
    def check() -> bool:
        delivery = Delivery.objects.filter(**delivery_filter).first()
        return delivery is not None and delivery.state in ("succeeded", "failed")

    return check


def test_a_receiver_failing_twice_gets_one_delivery_after_three_logged_attempts(
    worker_setup, admin, tenant, project, webhook_receiver
):
    webhook_receiver.answer((500, "down"), (502, "still down"))
    new = webhook_service.webhook_create(
        tenant=tenant,
        url=webhook_receiver.url,
        events=["document.updated"],
        projects=None,
        user=admin,
    )
    worker = worker_setup()
    event = _emit(tenant, project, admin)
    _wait_until(_closed({"webhook": new.webhook}), worker, "the delivery to close")

    delivery = Delivery.objects.get(webhook=new.webhook)
    assert delivery.state == "succeeded" and delivery.event_id == event.id
    attempts = DeliveryAttempt.objects.filter(delivery=delivery).order_by("number")
    assert [(a.number, a.status_code, a.succeeded) for a in attempts] == [
        (1, 500, False),
        (2, 502, False),
        (3, 200, True),
    ]
    assert [h["Webhook-Id"] for _, h in webhook_receiver.received] == [event.id] * 3
    for body, headers in webhook_receiver.received:
        Verifier(new.secret).verify(body, headers)


def test_a_worker_killed_mid_delivery_loses_no_event(
    worker_setup, admin, tenant, project, webhook_receiver
):
    webhook_receiver.answer((None, "held until the worker is dead"))
    new = webhook_service.webhook_create(
        tenant=tenant,
        url=webhook_receiver.url,
        events=["document.updated"],
        projects=None,
        user=admin,
    )
    first = worker_setup()
    event = _emit(tenant, project, admin)
    _wait_until(webhook_receiver.held.is_set, first, "the worker to send the delivery")
    first.kill()
    webhook_receiver.release()  # its answer goes to a dead connection

    second = worker_setup()
    # The message the killed worker held is not redelivered for an hour; the sweep
    # (Celery beat runs it every 30 s) enqueues the delivery again once its lock is gone.
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and not _closed({"webhook": new.webhook})():
        delivery_service.delivery_sweep(older_than=test_tasks.timedelta(0))
        time.sleep(1)

    delivery = Delivery.objects.get(webhook=new.webhook)
    assert delivery.state == "succeeded", second.log_text()
    assert Delivery.objects.filter(event_id=event.id).count() == 1
    attempts = list(DeliveryAttempt.objects.filter(delivery=delivery))
    assert [(a.status_code, a.succeeded) for a in attempts] == [(200, True)]
    # The receiver saw the event twice, with the one id it deduplicates on.
    assert [h["Webhook-Id"] for _, h in webhook_receiver.received] == [event.id, event.id]


def test_with_a_broker_the_write_enqueues_and_a_sweep_meanwhile_sends_nothing_twice(
    worker_setup, admin, tenant, project, webhook_receiver
):
    new = webhook_service.webhook_create(
        tenant=tenant,
        url=webhook_receiver.url,
        events=["document.updated"],
        projects=None,
        user=admin,
    )
    event = _emit(tenant, project, admin)  # no worker yet: its task waits in Redis
    delivery = Delivery.objects.get(webhook=new.webhook)
    assert delivery.enqueued_for is not None and delivery.attempts == 0
    # Its task is on its way: the sweep (default --older-than) leaves it to the task.
    assert delivery_service.delivery_sweep() == []
    assert webhook_receiver.received == []

    worker = worker_setup()
    _wait_until(_closed({"webhook": new.webhook}), worker, "the delivery to close")
    assert delivery_service.delivery_sweep(older_than=test_tasks.timedelta(0)) == []
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == ("succeeded", 1)
    assert [h["Webhook-Id"] for _, h in webhook_receiver.received] == [event.id]

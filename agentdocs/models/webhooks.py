"""Webhooks: a tenant admin's subscription of a URL to event types, and its log.

A `Delivery` is one event on its way to one webhook (at most one per webhook and
event id: the event id is what receivers deduplicate on, sent as `webhook-id`);
each try to send it is a `DeliveryAttempt`. A delivery is open (pending or
retrying) until an attempt succeeds or its retries are spent.

A webhook's changes are history rows (who, why) in its tenant's hash chain; its
secret never is, and its URL only in a form that does not tell a secret in its path
or query (`core.webhooks.url_shown`, with an HMAC digest that a change of it changes).
Deliveries, and the `failing_since` that they keep, are not changes.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.dispatch import receiver
from django.utils import timezone
from simple_history.models import HistoricalRecords
from simple_history.signals import pre_create_historical_record

from agentdocs.core.webhooks import url_digest, url_shown
from agentdocs.models.history import HistoryChangeType
from agentdocs.models.tenancy import Tenant


class WebhookHistory(HistoryChangeType):
    """The URL as a webhook's history rows keep it, instead of the URL itself."""

    # Scheme and host, and `/…` when there is more (`core.webhooks.url_shown`).
    url_shown = models.CharField(max_length=2000, blank=True, default="")
    # HMAC-SHA256 of the whole URL under a key derived from SECRET_KEY: the same URL
    # gives the same digest, and the digest tells nothing of the URL.
    url_digest = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        abstract = True


class Webhook(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2000)
    # Event types (`agentdocs.core.webhooks.EVENT_TYPES`).
    events = models.JSONField(default=list)
    # Project slugs the webhook hears about; None: every project and tenant-wide events.
    projects = models.JSONField(null=True, blank=True, default=None)
    description = models.CharField(max_length=500, blank=True, default="")
    # `whsec_<base64>`, as Standard Webhooks signs with it; shown once, when made or rotated.
    secret = models.CharField(max_length=100)
    active = models.BooleanField(default=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=500, blank=True, default="")
    # The first failed attempt since the last success; a day of failures disables it.
    failing_since = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    # Never the secret (nor the URL, see WebhookHistory); `failing_since` is the
    # deliveries' bookkeeping, not a change.
    history = HistoricalRecords(
        bases=[WebhookHistory], excluded_fields=["secret", "url", "failing_since"]
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.url


@receiver(pre_create_historical_record, sender=Webhook.history.model)
def _record_url(
    sender: type[models.Model], instance: Webhook, history_instance: models.Model, **_: object
) -> None:
    # Connected here, before the chain's receiver (AgentdocsConfig.ready), which hashes these.
    digest = url_digest(instance.url, secret=str(settings.SECRET_KEY))
    history_instance.url_shown = url_shown(instance.url)  # type: ignore[attr-defined]
    history_instance.url_digest = digest  # type: ignore[attr-defined]


class DeliveryState(models.TextChoices):
    PENDING = "pending", "Pending"
    RETRYING = "retrying", "Retrying"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


OPEN_STATES = (DeliveryState.PENDING, DeliveryState.RETRYING)


class Delivery(models.Model):
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    # The event's id (`evt_…`, the `webhook-id` header) and type; a ping has no Event row.
    event_id = models.CharField(max_length=40)
    event_type = models.CharField(max_length=40)
    # What is sent, fixed when the delivery is made (`core.webhooks.WebhookPayload`).
    payload = models.JSONField(default=dict)
    state = models.CharField(
        max_length=10, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    # Automatic retries still to make if the next attempt fails.
    retries_left = models.PositiveIntegerField(default=0)
    # A ping, or a redelivery an admin asked for: one attempt, and its failure is no
    # reason to turn the webhook off.
    manual = models.BooleanField(default=False)
    # When the next attempt is due (None once the delivery is closed).
    next_retry_at = models.DateTimeField(null=True, blank=True)
    # When the task last enqueued for it is due to run; None: not enqueued, so the
    # sweep enqueues it once due. A task that never ran is enqueued again by the sweep.
    enqueued_for = models.DateTimeField(null=True, blank=True)
    # The last attempt, kept here so that lists need not read the attempts.
    status_code = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True, default="")
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["webhook", "event_id"], name="delivery_one_per_webhook_and_event"
            )
        ]
        indexes = [
            models.Index(fields=["webhook", "-created_at"], name="delivery_webhook_recent"),
            models.Index(fields=["state", "next_retry_at"], name="delivery_open_due"),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.event_id} → webhook {self.webhook_id} ({self.state})"

    @property
    def at(self) -> datetime:
        """When the delivery last changed hands: its last attempt, or its making."""
        return self.last_attempt_at or self.created_at


class DeliveryAttempt(models.Model):
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    # None when no response came: refused, unresolvable, timed out, connection failed.
    status_code = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    succeeded = models.BooleanField(default=False)
    error = models.CharField(max_length=500, blank=True, default="")
    # The start of the response body, up to AGENTDOCS_WEBHOOK_RESPONSE_BODY_BYTES.
    response_body = models.TextField(blank=True, default="")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["delivery_id", "number", "id"]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}"

"""Reads of a tenant's webhooks and their delivery logs (tenant admins only: the views
check the role before asking)."""

from __future__ import annotations

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery

from agentdocs.core.errors import NotFound
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.models import Delivery, DeliveryAttempt, Tenant, Webhook


def webhook_list(*, tenant: Tenant) -> QuerySet[Webhook]:
    """The tenant's webhooks, newest first, each with the id of its last delivery
    (`last_delivery_id`); `last_deliveries` reads those in one more query."""
    newest = Delivery.objects.filter(webhook=OuterRef("pk")).order_by("-created_at", "-id")
    return (
        Webhook.objects.filter(tenant=tenant)
        .select_related("created_by", "tenant")
        .annotate(last_delivery_id=Subquery(newest.values("pk")[:1]))
    )


def last_deliveries(webhooks: list[Webhook]) -> dict[int, Delivery]:
    """Each webhook's last delivery by webhook id, for webhooks from `webhook_list`."""
    ids = [getattr(w, "last_delivery_id", None) for w in webhooks]
    ids = [i for i in ids if i is not None]
    if not ids:
        return {}
    return {d.webhook_id: d for d in Delivery.objects.filter(pk__in=ids)}


def _number(value: object, what: str) -> int:
    number = positive_int(value, maximum=MAX_ID)
    if number is None:
        raise NotFound(f"No such {what}.", field="id")
    return number


def webhook_get(*, tenant: Tenant, webhook_id: object) -> Webhook:
    webhook = webhook_list(tenant=tenant).filter(pk=_number(webhook_id, "webhook")).first()
    if webhook is None:
        raise NotFound("No such webhook in this tenant.", field="id")
    return webhook


def delivery_list(*, webhook: Webhook) -> QuerySet[Delivery]:
    """The webhook's deliveries, newest first, each with its attempts in order."""
    return Delivery.objects.filter(webhook=webhook).prefetch_related(
        Prefetch("attempt_log", queryset=DeliveryAttempt.objects.order_by("number", "id"))
    )


def delivery_get(*, webhook: Webhook, delivery_id: object) -> Delivery:
    delivery = delivery_list(webhook=webhook).filter(pk=_number(delivery_id, "delivery")).first()
    if delivery is None:
        raise NotFound("No such delivery of this webhook.", field="delivery_id")
    delivery.webhook = webhook
    return delivery


def disabled_webhook_count(*, tenant: Tenant) -> int:
    """Webhooks off while failing (disabled by their failures): what the banner counts."""
    return Webhook.objects.filter(tenant=tenant, active=False, failing_since__isnull=False).count()

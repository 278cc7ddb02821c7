"""Webhooks: tenant admins subscribe URLs to the tenant's events, read each webhook's
delivery log, send a test `ping` and redeliver. The secret is in the answer that
made it (creation, or a PATCH with `rotate_secret`) and in no other answer."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.access import request_tenant_access
from agentdocs.api.common import ListView
from agentdocs.api.schema import errors
from agentdocs.api.serializers import StrictBooleanField, StrictSerializer, TextField
from agentdocs.core.webhooks import EVENT_TYPES
from agentdocs.models import Delivery, DeliveryState, Webhook
from agentdocs.permissions import Access
from agentdocs.selectors import webhooks as webhook_selectors
from agentdocs.services import deliveries as delivery_service
from agentdocs.services import webhooks as webhook_service
from agentdocs.services.webhooks import NewSecret

TAGS = ["webhooks"]
ADMINS = "Tenant admins (403 for other members, 404 for everyone else)."


def _admin_access(request: Request, tenant: str) -> Access:
    access = request_tenant_access(request, tenant)
    access.require_admin()
    return access


class AsSentListField(serializers.ListField):
    """A JSON list passed to the service as sent: the service names the field it refuses
    (`events`, `projects`) rather than an index inside it."""

    def to_internal_value(self, data: Any) -> Any:
        return data


class DeliverySummarySerializer(serializers.Serializer):
    class Meta:
        ref_name = "WebhookLastDelivery"

    id = serializers.IntegerField()
    event_id = serializers.CharField()
    type = serializers.CharField(source="event_type")
    state = serializers.ChoiceField(choices=DeliveryState.choices)
    status_code = serializers.IntegerField(allow_null=True)
    at = serializers.DateTimeField()


class WebhookOutputSerializer(serializers.Serializer):
    """A webhook as every answer shows it: never its secret."""

    class Meta:
        ref_name = "Webhook"

    id = serializers.IntegerField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_TYPES))
    projects = serializers.ListField(
        child=serializers.CharField(),
        allow_null=True,
        help_text="Project slugs; null: every project, and the tenant-wide events.",
    )
    description = serializers.CharField()
    active = serializers.BooleanField()
    failing = serializers.SerializerMethodField(
        help_text="Its last attempts failed (`failing_since`); a day of it turns it off."
    )
    failing_since = serializers.DateTimeField(allow_null=True)
    disabled_at = serializers.DateTimeField(allow_null=True)
    disabled_reason = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    last_delivery = DeliverySummarySerializer(allow_null=True, default=None)

    def get_failing(self, webhook: Webhook) -> bool:
        return webhook.failing_since is not None


class _WithNewSecret(WebhookOutputSerializer):
    # The answer that made a secret: the webhook, and the secret (`NewSecret`) this once.
    # (No docstring: the OpenAPI components keep the webhook's own description.)

    def to_representation(self, instance: NewSecret) -> dict[str, Any]:
        webhook = _with_last_delivery([instance.webhook])[0]
        body = dict(WebhookOutputSerializer(webhook, context=self.context).data)
        if instance.secret is not None:
            body["secret"] = instance.secret
        return body


class WebhookWithSecretSerializer(_WithNewSecret):
    class Meta:
        ref_name = "WebhookWithSecret"

    secret = serializers.CharField(
        help_text="`whsec_…`, to verify signatures with (Standard Webhooks). Shown this once."
    )


class WebhookPatchedSerializer(_WithNewSecret):
    class Meta:
        ref_name = "WebhookPatched"

    secret = serializers.CharField(
        required=False, help_text="With `rotate_secret`: the new secret, shown this once."
    )


class AttemptSerializer(serializers.Serializer):
    class Meta:
        ref_name = "WebhookDeliveryAttempt"

    attempt = serializers.IntegerField(source="number")
    status_code = serializers.IntegerField(allow_null=True)
    succeeded = serializers.BooleanField()
    duration_ms = serializers.IntegerField()
    error = serializers.CharField()
    response_body = serializers.CharField(help_text="The start of the response body.")
    at = serializers.DateTimeField()


class DeliveryOutputSerializer(serializers.Serializer):
    class Meta:
        ref_name = "WebhookDelivery"

    id = serializers.IntegerField()
    event_id = serializers.CharField(help_text="Sent as `webhook-id` on every attempt.")
    type = serializers.CharField(source="event_type")
    state = serializers.ChoiceField(choices=DeliveryState.choices)
    attempt = serializers.IntegerField(source="attempts", help_text="Attempts made so far.")
    status_code = serializers.IntegerField(allow_null=True, help_text="Of the last attempt.")
    duration_ms = serializers.IntegerField(allow_null=True, help_text="Of the last attempt.")
    error = serializers.CharField(help_text="Of the last attempt; empty when it succeeded.")
    next_retry_at = serializers.DateTimeField(allow_null=True)
    at = serializers.DateTimeField(help_text="The last attempt, or when it was made.")
    created_at = serializers.DateTimeField()
    attempts = AttemptSerializer(source="attempt_log.all", many=True)


def _with_last_delivery(webhooks: list[Webhook]) -> list[Webhook]:
    last = webhook_selectors.last_deliveries(webhooks)
    for webhook in webhooks:
        webhook.last_delivery = last.get(webhook.pk)  # type: ignore[attr-defined]
    return webhooks


def _webhook_body(webhook: Webhook) -> dict[str, Any]:
    return dict(WebhookOutputSerializer(_with_last_delivery([webhook])[0]).data)


def _delivery_body(webhook: Webhook, delivery: Delivery) -> dict[str, Any]:
    fresh = webhook_selectors.delivery_get(webhook=webhook, delivery_id=delivery.pk)
    return dict(DeliveryOutputSerializer(fresh).data)


class WebhookList(ListView):
    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "WebhookCreate"

        url = TextField(help_text="http:// or https://, without a user name or password.")
        events = AsSentListField(
            child=serializers.ChoiceField(choices=EVENT_TYPES), help_text="Event types."
        )
        projects = AsSentListField(
            child=serializers.CharField(),
            allow_null=True,
            required=False,
            default=None,
            help_text="Project slugs; null (the default): every project and tenant-wide events.",
        )
        description = TextField(required=False, default="")

    OutputSerializer = WebhookOutputSerializer

    @extend_schema(
        tags=TAGS,
        summary="List the tenant's webhooks",
        description=f"Newest first, paged, each with its last delivery; never a secret. {ADMINS}",
        responses={200: WebhookOutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        access = _admin_access(request, tenant)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            webhook_selectors.webhook_list(tenant=access.tenant), request, view=self
        )
        rows = _with_last_delivery(list(page or []))
        return paginator.get_paginated_response(self.OutputSerializer(rows, many=True).data)

    @extend_schema(
        tags=TAGS,
        summary="Create a webhook",
        description="Subscribes `url` to `events` of the tenant (of the `projects` named, or "
        "all). The answer holds the signing secret (`whsec_…`) this once. 400 naming `url` "
        "for a URL that is not http(s), holds credentials or names a private address; "
        f"`events` for an unknown event type; `projects` for an unknown project. 409 "
        "`too_many_webhooks` (its `limit` in the body) when the tenant has "
        f"`AGENTDOCS_MAX_WEBHOOKS_PER_TENANT` webhooks (default 20) already. {ADMINS}",
        request=InputSerializer,
        responses={201: WebhookWithSecretSerializer, **errors(400, 404, 409, 413)},
    )
    def post(self, request: Request, tenant: str) -> Response:
        access = _admin_access(request, tenant)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        new = webhook_service.webhook_create(
            tenant=access.tenant, user=access.user, **serializer.validated_data
        )
        return Response(WebhookWithSecretSerializer(new).data, status=status.HTTP_201_CREATED)


class WebhookDetail(APIView):
    class PatchInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "WebhookUpdate"

        url = TextField(required=False)
        events = AsSentListField(child=serializers.ChoiceField(choices=EVENT_TYPES), required=False)
        projects = AsSentListField(child=serializers.CharField(), allow_null=True, required=False)
        description = TextField(required=False)
        active = StrictBooleanField(
            required=False, help_text="true turns it on again and forgets its failures."
        )
        rotate_secret = StrictBooleanField(
            required=False, help_text="true: a new secret, in this answer only."
        )

    @extend_schema(
        tags=TAGS,
        summary="Read a webhook",
        description=f"Never its secret. {ADMINS}",
        responses={200: WebhookOutputSerializer, **errors(404)},
    )
    def get(self, request: Request, tenant: str, webhook_id: str) -> Response:
        access = _admin_access(request, tenant)
        webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
        return Response(_webhook_body(webhook))

    @extend_schema(
        tags=TAGS,
        summary="Change a webhook",
        description="Changes the fields given. `active: true` turns a disabled webhook on "
        "again; `rotate_secret: true` replaces the secret and answers the new one this once "
        f"(deliveries are signed with it from now on). 400 as for creating. {ADMINS}",
        request=PatchInputSerializer,
        responses={200: WebhookPatchedSerializer, **errors(400, 404, 413)},
    )
    def patch(self, request: Request, tenant: str, webhook_id: str) -> Response:
        access = _admin_access(request, tenant)
        webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
        serializer = self.PatchInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        changed = webhook_service.webhook_update(
            webhook=webhook, user=access.user, **serializer.validated_data
        )
        return Response(WebhookPatchedSerializer(changed).data)

    @extend_schema(
        tags=TAGS,
        summary="Delete a webhook",
        description=f"With its delivery log; deliveries on their way are dropped. {ADMINS}",
        request=None,
        responses={204: None, **errors(404)},
    )
    def delete(self, request: Request, tenant: str, webhook_id: str) -> Response:
        access = _admin_access(request, tenant)
        webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
        webhook_service.webhook_delete(webhook=webhook, user=access.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookTest(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Queue a test ping",
        description="Queues a `ping` event to the webhook, whatever it subscribes to: one "
        "attempt, no retries. Answers at once, without waiting on the receiver: 202 with "
        "the queued delivery (`pending`, no attempts yet). A worker sends it, or without a "
        "broker the sweeper (`manage.py webhook_sweep`); the deliveries list then shows how "
        "it went. "
        f"409 `webhook_disabled` when the webhook is off. {ADMINS}",
        request=None,
        responses={202: DeliveryOutputSerializer, **errors(404, 409)},
    )
    def post(self, request: Request, tenant: str, webhook_id: str) -> Response:
        access = _admin_access(request, tenant)
        webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
        delivery = delivery_service.webhook_test(webhook=webhook, user=access.user)
        return Response(_delivery_body(webhook, delivery), status=status.HTTP_202_ACCEPTED)


class DeliveryList(ListView):
    OutputSerializer = DeliveryOutputSerializer

    @extend_schema(
        tags=TAGS,
        summary="List a webhook's deliveries",
        description="Newest first, paged: each event sent to the webhook, its state (pending, "
        "retrying, succeeded, failed), its last attempt's status code, duration and error, "
        f"when it is retried next, and every attempt. {ADMINS}",
        responses={200: DeliveryOutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str, webhook_id: str) -> Response:
        access = _admin_access(request, tenant)
        webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
        return self.paginate(request, webhook_selectors.delivery_list(webhook=webhook))


class DeliveryRedeliver(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Redeliver",
        description="Queues the delivery again now, with the same event id (`webhook-id`) and "
        "payload: one more attempt, or the next retry brought forward. Answers at once: 202 "
        "with the delivery; a worker or the sweeper sends it, as a test ping. "
        f"409 `webhook_disabled` when the webhook is off. {ADMINS}",
        request=None,
        responses={202: DeliveryOutputSerializer, **errors(404, 409)},
    )
    def post(self, request: Request, tenant: str, webhook_id: str, delivery_id: str) -> Response:
        access = _admin_access(request, tenant)
        webhook = webhook_selectors.webhook_get(tenant=access.tenant, webhook_id=webhook_id)
        delivery = webhook_selectors.delivery_get(webhook=webhook, delivery_id=delivery_id)
        delivery_service.delivery_redeliver(delivery=delivery, user=access.user)
        return Response(_delivery_body(webhook, delivery), status=status.HTTP_202_ACCEPTED)

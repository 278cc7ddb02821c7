"""The tenant's audit chain: verify it (at once for a short chain, else as a task with
a progress link), or stream it out for anchoring elsewhere.

Tenant admins only (403 for other members, 404 for everyone else).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import prefetched_access
from agentdocs.api.renderers import JSONRenderer
from agentdocs.api.schema import errors, json_errors
from agentdocs.models import AuditVerification, AuditVerificationState, Tenant
from agentdocs.selectors import audit as audit_selectors
from agentdocs.services import audit_chain

TAGS = ["audit"]
ADMINS = "Tenant admins (403 for other members, 404 for everyone else)."
JSON_LINES = "application/jsonl"


def _admin_tenant(request: Request, tenant: str) -> Tenant:
    access = permissions.tenant_access(request.user, tenant, prefetched=prefetched_access(request))
    access.require_admin()
    return access.tenant


REASONS = (
    "link_mismatch",
    "sequence_gap",
    "head_mismatch",
    "past_head",
    "unlinked",
    "live_mismatch",
)


class BrokenLinkSerializer(serializers.Serializer):
    model = serializers.CharField(
        help_text="The history model of the row (`agentdocs.historicaldocument`); "
        "`audit_chain_head` when rows are missing after the last one that verifies; the "
        "live model (`agentdocs.document`) for a live_mismatch."
    )
    id = serializers.IntegerField(
        help_text="The row's history_id (the tenant's id for the head, the live row's id "
        "for a live_mismatch)."
    )
    expected = serializers.CharField(
        help_text="The chain_sha256 the chain computes there (past_head: the head's; "
        "unlinked: empty; live_mismatch: the sha256 of the compared columns of the newest "
        "chained history row, empty when there is none)."
    )
    found = serializers.CharField(
        allow_null=True,
        help_text="The chain_sha256 stored there (live_mismatch: the sha256 of the live "
        "row's compared columns, null when the row is gone).",
    )
    reason = serializers.ChoiceField(choices=REASONS, help_text="Which kind of break.")
    columns = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="live_mismatch only: the columns that differ.",
    )


class ChainReportSerializer(serializers.Serializer):
    class Meta:
        ref_name = "AuditChainReport"

    ok = serializers.BooleanField()
    checked = serializers.IntegerField(help_text="History rows of the chain walked.")
    broken_at = BrokenLinkSerializer(allow_null=True)


class VerificationSerializer(serializers.Serializer):
    class Meta:
        ref_name = "AuditVerification"

    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=AuditVerificationState.choices)
    total = serializers.IntegerField(help_text="The chain's length when the walk was asked for.")
    checked = serializers.IntegerField(help_text="Rows walked so far.")
    report = ChainReportSerializer(allow_null=True, help_text="Once `done`: the report.")
    error = serializers.CharField(help_text="Once `failed`: why.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    progress = serializers.CharField(help_text="This status resource's path.")


def _progress_path(tenant: Tenant, verification: AuditVerification) -> str:
    return reverse(
        "api-audit-verification", kwargs={"tenant": tenant.slug, "verification": verification.pk}
    )


def _verification_body(tenant: Tenant, verification: AuditVerification) -> dict[str, Any]:
    return VerificationSerializer(
        {
            "id": verification.pk,
            "state": verification.state,
            "total": verification.total,
            "checked": verification.checked,
            "report": verification.report,
            "error": verification.error,
            "created_at": verification.created_at,
            "started_at": verification.started_at,
            "finished_at": verification.finished_at,
            "progress": _progress_path(tenant, verification),
        }
    ).data


def _accepted(tenant: Tenant, verification: AuditVerification) -> Response:
    response = Response(_verification_body(tenant, verification), status=status.HTTP_202_ACCEPTED)
    response["Location"] = _progress_path(tenant, verification)
    return response


class AuditVerify(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Verify the tenant's history chain",
        description="Walks the hash chain over every history row of the tenant, in chain "
        "order, and reports the first break: a row edited, removed or inserted behind the "
        "application's back, a row numbered past the head, a history row outside the "
        "chain, or a live document, label, setting, recipe or provider that is not what "
        "its newest chained history row says. A chain of at most "
        "`AGENTDOCS_AUDIT_VERIFY_SYNC_ROWS` rows is walked at once (200, the report); a "
        "longer one by a task: 202 with the verification, whose `progress` path (also "
        f"`Location`) answers the report once done. {ADMINS}",
        responses={200: ChainReportSerializer, 202: VerificationSerializer, **errors(403, 404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        found = _admin_tenant(request, tenant)
        if (
            audit_selectors.audit_chain_length(tenant=found)
            > settings.AGENTDOCS_AUDIT_VERIFY_SYNC_ROWS
        ):
            verification = audit_chain.audit_verification_start(tenant=found, user=request.user)
            return _accepted(found, verification)
        report = audit_chain.audit_chain_verify(tenant=found)
        return Response(ChainReportSerializer(report).data)

    @extend_schema(
        tags=TAGS,
        summary="Start a verification of the tenant's history chain",
        description="Hands the walk (as `GET` describes it) to a task, whatever the chain's "
        "length, and answers 202 with the verification: its `progress` path (also "
        "`Location`) says how far it has come and, once `done`, the report. While one is "
        f"queued or running, asking again answers that one. {ADMINS}",
        request=None,
        responses={202: VerificationSerializer, **errors(403, 404)},
    )
    def post(self, request: Request, tenant: str) -> Response:
        found = _admin_tenant(request, tenant)
        verification = audit_chain.audit_verification_start(tenant=found, user=request.user)
        return _accepted(found, verification)


class AuditVerificationStatus(APIView):
    @extend_schema(
        tags=TAGS,
        summary="A verification of the tenant's history chain",
        description="How far the walk has come (`state` queued, running, done or failed; "
        f"`checked` of `total` rows) and, once `done`, its `report`. {ADMINS}",
        responses={200: VerificationSerializer, **errors(403, 404)},
    )
    def get(self, request: Request, tenant: str, verification: str) -> Response:
        found = _admin_tenant(request, tenant)
        run = audit_selectors.audit_verification_get(tenant=found, verification_id=verification)
        return Response(_verification_body(found, run))


class JSONLinesRenderer(BaseRenderer):
    media_type = JSON_LINES
    format = "jsonl"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        return b"" if data is None else JSONRenderer().render(data) + b"\n"


class AuditExport(APIView):
    renderer_classes = [JSONRenderer, JSONLinesRenderer]

    def finalize_response(self, request: Request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code >= 400 and isinstance(
            getattr(response, "accepted_renderer", None), JSONLinesRenderer
        ):
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response

    @extend_schema(
        tags=TAGS,
        summary="Export the tenant's history chain as JSON Lines",
        description="One line per history row in chain order (`seq`, `model`, `id`, "
        "`chain_sha256`, `row`: the hashed columns), then a last line with the chain's "
        "`head`. Anchor the head's chain_sha256 elsewhere (a ticket, a transparency log) "
        f"and any later rewrite of history shows. {ADMINS}",
        responses={
            (200, JSON_LINES): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines."),
            **json_errors(403, 404),
        },
    )
    def get(self, request: Request, tenant: str) -> StreamingHttpResponse:
        found = _admin_tenant(request, tenant)
        response = StreamingHttpResponse(
            audit_chain.audit_chain_lines(tenant=found), content_type=JSON_LINES
        )
        response["Content-Disposition"] = f'attachment; filename="{found.slug}-history.jsonl"'
        return response

"""The tenant's audit chain: verify it, or stream it out for anchoring elsewhere.

Tenant admins only (403 for other members, 404 for everyone else).
"""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import prefetched_access
from agentdocs.api.renderers import JSONRenderer
from agentdocs.api.schema import errors, json_errors
from agentdocs.models import Tenant
from agentdocs.services import audit_chain

TAGS = ["audit"]
ADMINS = "Tenant admins (403 for other members, 404 for everyone else)."
JSON_LINES = "application/jsonl"


def _admin_tenant(request: Request, tenant: str) -> Tenant:
    access = permissions.tenant_access(request.user, tenant, prefetched=prefetched_access(request))
    access.require_admin()
    return access.tenant


class BrokenLinkSerializer(serializers.Serializer):
    model = serializers.CharField(
        help_text="The history model of the row (`agentdocs.historicaldocument`), or "
        "`audit_chain_head` when rows are missing after the last one that verifies."
    )
    id = serializers.IntegerField(help_text="The row's history_id (the tenant's id for the head).")
    expected = serializers.CharField(help_text="The chain_sha256 the chain computes there.")
    found = serializers.CharField(allow_null=True, help_text="The chain_sha256 stored there.")


class AuditVerify(APIView):
    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AuditChainReport"

        ok = serializers.BooleanField()
        checked = serializers.IntegerField(help_text="History rows examined.")
        broken_at = BrokenLinkSerializer(allow_null=True)

    @extend_schema(
        tags=TAGS,
        summary="Verify the tenant's history chain",
        description="Walks the hash chain over every history row of the tenant, in chain "
        "order, and reports the first broken link: a row edited, removed or inserted "
        f"behind the application's back. {ADMINS}",
        responses={200: OutputSerializer, **errors(403, 404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        report = audit_chain.audit_chain_verify(tenant=_admin_tenant(request, tenant))
        return Response(self.OutputSerializer(report).data)


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

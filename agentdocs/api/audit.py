"""The tenant's audit chain: verify it, or export it for anchoring elsewhere; each at
once for a short chain, else as a task with a progress link (an export's file is then
downloaded from the storage it was written to).

Tenant admins only (403 for other members, 404 for everyone else).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import FileResponse, StreamingHttpResponse
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
from agentdocs.core.errors import ExportNotReady
from agentdocs.models import AuditExportRun, AuditVerification, AuditVerificationState, Tenant
from agentdocs.selectors import audit as audit_selectors
from agentdocs.services import audit_chain, audit_export

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


class ChainHeadSerializer(serializers.Serializer):
    class Meta:
        ref_name = "AuditChainHead"

    seq = serializers.IntegerField(help_text="The chain's length at the head.")
    chain_sha256 = serializers.CharField(help_text="The head's link: anchor it elsewhere.")


class ExportSerializer(serializers.Serializer):
    class Meta:
        ref_name = "AuditExport"

    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=AuditVerificationState.choices)
    total = serializers.IntegerField(help_text="The chain's length when the export was asked for.")
    written = serializers.IntegerField(help_text="Rows written so far.")
    bytes = serializers.IntegerField(help_text="Once `done`: the file's size.")
    sha256 = serializers.CharField(help_text="Once `done`: the file's sha256 (hex).")
    head = ChainHeadSerializer(
        allow_null=True, help_text="Once `done`: the head the file's last line names."
    )
    download = serializers.CharField(
        allow_null=True, help_text="Once `done`: the path the file is downloaded from."
    )
    expires_at = serializers.DateTimeField(
        help_text="When the file stops being served (`AGENTDOCS_AUDIT_EXPORT_KEEP_DAYS`)."
    )
    error = serializers.CharField(help_text="Once `failed`: why.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    progress = serializers.CharField(help_text="This status resource's path.")


def _export_path(name: str, tenant: Tenant, run: AuditExportRun) -> str:
    return reverse(name, kwargs={"tenant": tenant.slug, "export": run.pk})


def _export_body(tenant: Tenant, run: AuditExportRun) -> dict[str, Any]:
    done = run.state == AuditVerificationState.DONE
    return ExportSerializer(
        {
            "id": run.pk,
            "state": run.state,
            "total": run.total,
            "written": run.written,
            "bytes": run.bytes,
            "sha256": run.sha256,
            "head": {"seq": run.head_seq, "chain_sha256": run.head_sha256} if done else None,
            "download": _export_path("api-audit-export-download", tenant, run) if done else None,
            "expires_at": run.created_at + audit_selectors.audit_export_kept_for(),
            "error": run.error,
            "created_at": run.created_at,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "progress": _export_path("api-audit-export-status", tenant, run),
        }
    ).data


def _export_accepted(tenant: Tenant, run: AuditExportRun) -> Response:
    response = Response(_export_body(tenant, run), status=status.HTTP_202_ACCEPTED)
    response["Location"] = _export_path("api-audit-export-status", tenant, run)
    return response


class JSONLinesView(APIView):
    """A view answering JSON Lines as a stream or a file, and anything else (an error,
    an export's status) as JSON whatever was accepted."""

    renderer_classes = [JSONRenderer, JSONLinesRenderer]

    def finalize_response(self, request: Request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if isinstance(response, Response) and isinstance(
            getattr(response, "accepted_renderer", None), JSONLinesRenderer
        ):
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response


EXPORT_LINES = (
    "One line per history row in chain order (`seq`, `model`, `id`, `chain_sha256`, "
    "`row`: the hashed columns), then a last line with the chain's `head`. Anchor the "
    "head's chain_sha256 elsewhere (a ticket, a transparency log) and any later rewrite "
    "of history shows."
)


class AuditExport(JSONLinesView):
    @extend_schema(
        tags=TAGS,
        summary="Export the tenant's history chain as JSON Lines",
        description=f"{EXPORT_LINES} A chain of at most `AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS` "
        "rows is streamed at once (200); a longer one is written to a file by a task: 202 "
        "with the export, whose `progress` path (also `Location`) says how far it has come "
        f"and, once `done`, the `download` path of the file. {ADMINS}",
        responses={
            (200, JSON_LINES): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines."),
            (202, "application/json"): ExportSerializer,
            **json_errors(403, 404),
        },
    )
    def get(self, request: Request, tenant: str) -> StreamingHttpResponse | Response:
        found = _admin_tenant(request, tenant)
        if (
            audit_selectors.audit_chain_length(tenant=found)
            > settings.AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS
        ):
            run = audit_export.audit_export_start(tenant=found, user=request.user)
            return _export_accepted(found, run)
        lines = StreamingHttpResponse(
            audit_chain.audit_chain_lines(tenant=found), content_type=JSON_LINES
        )
        lines["Content-Disposition"] = f'attachment; filename="{found.slug}-history.jsonl"'
        return lines

    @extend_schema(
        tags=TAGS,
        summary="Start an export of the tenant's history chain",
        description="Hands the export (the JSON Lines `GET` describes) to a task, whatever "
        "the chain's length, and answers 202 with the export: its `progress` path (also "
        "`Location`) says how far it has come and, once `done`, the `download` path, the "
        "file's size and sha256 and the head it ends with. While one is queued or running, "
        f"asking again answers that one. {ADMINS}",
        request=None,
        responses={(202, "application/json"): ExportSerializer, **json_errors(403, 404)},
    )
    def post(self, request: Request, tenant: str) -> Response:
        found = _admin_tenant(request, tenant)
        return _export_accepted(
            found, audit_export.audit_export_start(tenant=found, user=request.user)
        )


class AuditExportStatus(APIView):
    @extend_schema(
        tags=TAGS,
        summary="An export of the tenant's history chain",
        description="How far the export has come (`state` queued, running, done or failed; "
        "`written` of `total` rows) and, once `done`, its `download` path, size, sha256 and "
        "head. An export is kept until `expires_at`, then 404. " + ADMINS,
        responses={200: ExportSerializer, **errors(403, 404)},
    )
    def get(self, request: Request, tenant: str, export: str) -> Response:
        found = _admin_tenant(request, tenant)
        run = audit_selectors.audit_export_get(tenant=found, export_id=export)
        return Response(_export_body(found, run))


class AuditExportDownload(JSONLinesView):
    @extend_schema(
        tags=TAGS,
        summary="Download a finished export of the tenant's history chain",
        description=f"The export's file: {EXPORT_LINES} Served from the file the task "
        "wrote (its `sha256` is also the `X-Content-SHA256` header), so the request holds "
        "no worker while the chain is read. 409 `export_not_ready` while the export is "
        "queued or running, or when it failed. " + ADMINS,
        responses={
            (200, JSON_LINES): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines."),
            **json_errors(403, 404, 409),
        },
    )
    def get(self, request: Request, tenant: str, export: str) -> FileResponse:
        found = _admin_tenant(request, tenant)
        run = audit_selectors.audit_export_get(tenant=found, export_id=export)
        if run.state != AuditVerificationState.DONE:
            raise ExportNotReady(
                f"The export is {run.state}: its file can be downloaded once it is done "
                "(its progress path says when).",
                field="id",
            )
        response = FileResponse(
            audit_selectors.audit_export_open(run),
            as_attachment=True,
            filename=f"{found.slug}-history.jsonl",
            content_type=JSON_LINES,
        )
        # Where the server has no file wrapper (gunicorn sends it with sendfile), it is
        # read in blocks of a MiB rather than Django's 4 KiB.
        response.block_size = 1 << 20
        response["Content-Length"] = str(run.bytes)
        response["X-Content-SHA256"] = run.sha256
        return response

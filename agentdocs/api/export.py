"""Export: the house rules as the files each agent tool reads, as JSON or as a zip.

`GET .../export/?format=F[&recipe=R&profile=P]`; `Accept: application/zip` returns
the same files as a zip whose bytes depend on nothing but the files.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import prefetched_access
from agentdocs.api.renderers import JSONRenderer
from agentdocs.api.schema import JSON, ZIP, json_errors
from agentdocs.api.serializers import represented, validated
from agentdocs.core.export import EXPORT_FORMATS
from agentdocs.services import export as export_service


class ZipRenderer(BaseRenderer):
    media_type = "application/zip"
    format = "zip"
    charset = None
    render_style = "binary"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        return data if isinstance(data, bytes) else b""


class _NoFormatOverride:
    URL_FORMAT_OVERRIDE = None


class FormatIsNotARenderer(DefaultContentNegotiation):
    """Here `?format=` names the export format, not DRF's renderer override."""

    settings = _NoFormatOverride  # type: ignore[assignment]


class ExportView(APIView):
    renderer_classes = [JSONRenderer, ZipRenderer]
    content_negotiation_class = FormatIsNotARenderer

    def finalize_response(self, request: Request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code >= 400 and isinstance(
            getattr(response, "accepted_renderer", None), ZipRenderer
        ):
            # Errors are always the JSON error shape, whatever was accepted.
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response

    class QuerySerializer(serializers.Serializer):
        format = serializers.CharField(
            required=False, allow_blank=True, default="", help_text=", ".join(EXPORT_FORMATS)
        )
        recipe = serializers.CharField(required=False, allow_blank=True, default="")
        profile = serializers.CharField(required=False, allow_blank=True, default="")

        def validate_format(self, format: str) -> str:
            return export_service.validate_format(format)

    class OutputSerializer(serializers.Serializer):
        class FileSerializer(serializers.Serializer):
            path = serializers.CharField()
            content = serializers.CharField()
            sha256 = serializers.CharField()

        class SourceSerializer(serializers.Serializer):
            project = serializers.CharField(allow_null=True)
            path = serializers.CharField()
            version = serializers.IntegerField(allow_null=True)
            sha256 = serializers.CharField()

        format = serializers.CharField()
        files = FileSerializer(many=True)
        sources = SourceSerializer(many=True)
        export_sha256 = serializers.CharField(
            help_text="sha256 of the lines `path<TAB>sha256` sorted by path, joined by newlines"
        )

    @extend_schema(
        tags=["export"],
        summary="Export the house rules as an agent tool's files",
        description="The files `?format=` names (such as `agents-md` or `cursor`) would "
        "hold, built from the Memory Block of `?recipe=` and `?profile=`, with the sources "
        "they came from. JSON by default; `Accept: application/zip` answers with the same "
        "files as a zip (Content-Disposition: attachment) whose bytes depend only on the "
        "files. Errors stay JSON. 400 for an unknown format, 404 for an unknown recipe or "
        "profile, 413 `too_large` naming `format` (with `size` and `limit` in bytes) when "
        "the files hold more than `AGENTDOCS_MAX_EXPORT_BYTES` (2 MiB by default): export "
        "one format at a time.",
        parameters=[
            QuerySerializer,
            OpenApiParameter(
                "Content-Disposition",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description='With the zip: `attachment; filename="agentdocs-<tenant>-'
                '<project>-<format>.zip"`.',
                response=[200],
            ),
        ],
        responses={
            (200, JSON): OutputSerializer,
            (200, ZIP): OpenApiResponse(
                OpenApiTypes.BINARY, description="With `Accept: application/zip`: the files."
            ),
            **json_errors(400, 404, 413),
        },
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        query = validated(self.QuerySerializer, request.query_params)
        export = export_service.export_build(
            project=access.project,
            format=query["format"],
            recipe_name=query["recipe"] or None,
            profile_name=query["profile"] or None,
        )
        if isinstance(getattr(request, "accepted_renderer", None), ZipRenderer):
            response = Response(export.zip_bytes())
            filename = f"agentdocs-{access.tenant.slug}-{access.project.slug}-{export.format}.zip"
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
        return Response(represented(self.OutputSerializer, export.as_dict()))

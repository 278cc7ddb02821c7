"""Export: the house rules as the files each agent tool reads, as JSON or as a zip.

`GET .../export/?format=F[&recipe=R&profile=P&label=L]`; `Accept: application/zip` returns
the same files as a zip whose bytes depend on nothing but the files.
`GET .../export/formats` lists the formats (the target registry).
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
from agentdocs.api.memory_block import LabelField
from agentdocs.api.renderers import JSONRenderer
from agentdocs.api.schema import JSON, ZIP, json_errors
from agentdocs.api.serializers import represented, validated
from agentdocs.core.export import EXPORT_FORMATS, validate_format
from agentdocs.core.targets import registry_as_dicts
from agentdocs.selectors import export as export_selectors


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
        label = LabelField()  # type: ignore[assignment]  # the wire name; shadows Field.label

        def validate_format(self, format: str) -> str:
            return validate_format(format)

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

        class WarningSerializer(serializers.Serializer):
            class Meta:
                ref_name = "ExportWarning"

            format = serializers.CharField()
            tool = serializers.CharField()
            path = serializers.CharField(
                help_text="the file (or, for a limit on all of a tool's files, their folder)"
            )
            limit = serializers.IntegerField()
            unit = serializers.ChoiceField(choices=["bytes", "characters"])
            size = serializers.IntegerField()
            cut_from = serializers.CharField(
                help_text="the first document the tool would cut: the one whose text "
                "crosses the limit"
            )
            folder = serializers.CharField(
                allow_null=True,
                help_text="for a limit spent along a path (Codex): the working folder "
                "(`src/api/`) the files are loaded from; `path` is then the file cut",
            )
            cut_at = serializers.IntegerField(
                allow_null=True,
                help_text="for a limit spent along a path: where in `path` the tool stops",
            )
            message = serializers.CharField(
                help_text="the warning in words (`codex: from src/api/, 35,112 of 32,768 "
                "bytes: src/api/AGENTS.md cut at byte 1,321`)"
            )

        format = serializers.CharField()
        files = FileSerializer(many=True)
        sources = SourceSerializer(many=True)
        export_sha256 = serializers.CharField(
            help_text="sha256 of the lines `path<TAB>sha256` sorted by path, joined by newlines"
        )
        warnings = WarningSerializer(
            many=True, help_text="each file over a size limit its tool applies"
        )

    @extend_schema(
        tags=["export"],
        summary="Export the house rules as an agent tool's files",
        description="The files `?format=` names (such as `agents-md` or `cursor`) would "
        "hold, built from the Memory Block of `?recipe=` and `?profile=`, with the sources "
        "they came from and `warnings` for each file over a size limit its tool applies "
        "(see `export/formats` for the limits and their sources). JSON by default; "
        "`Accept: application/zip` answers with the same "
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
        export = export_selectors.export_build(
            project=access.project,
            format=query["format"],
            recipe_name=query["recipe"] or None,
            profile_name=query["profile"] or None,
            label=query["label"] or None,
        )
        if isinstance(getattr(request, "accepted_renderer", None), ZipRenderer):
            response = Response(export.zip_bytes())
            filename = f"agentdocs-{access.tenant.slug}-{access.project.slug}-{export.format}.zip"
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
        return Response(represented(self.OutputSerializer, export.as_dict()))


class ExportFormatsView(APIView):
    """The target registry: what each format writes, how it scopes, what it limits."""

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "ExportFormats"

        class TargetSerializer(serializers.Serializer):
            class Meta:
                ref_name = "ExportFormat"

            class LimitSerializer(serializers.Serializer):
                class Meta:
                    ref_name = "ExportFormatLimit"

                tool = serializers.CharField()
                tool_id = serializers.CharField(help_text="the registry id of the tool")
                applies_to = serializers.ChoiceField(
                    choices=["main", "each", "path", "total"],
                    help_text="the main file, each file, the files on the path from the root "
                    "to a working folder (one budget), or all of the format's files",
                )
                order = serializers.ChoiceField(
                    choices=["root-first", "load-order"],
                    help_text="how a `path` or `total` budget is spent",
                )
                limit = serializers.IntegerField()
                unit = serializers.ChoiceField(choices=["bytes", "characters"])
                effect = serializers.ChoiceField(
                    choices=["cut", "warn"],
                    help_text="`cut`: the tool drops the rest unread; `warn`: it warns",
                )
                source = serializers.CharField(  # type: ignore[assignment]  # the wire name
                    help_text="where the tool documents it"
                )

            class NestedSerializer(serializers.Serializer):
                class Meta:
                    ref_name = "ExportFormatNested"

                files = serializers.ListField(
                    child=serializers.CharField(),
                    help_text="the names the tool reads in each folder, the first present "
                    "winning; the export writes the last",
                )
                reach = serializers.ChoiceField(
                    choices=["path", "closest"],
                    help_text="`path`: every folder's file from the root down, root first; "
                    "`closest`: only the closest file applies",
                )
                when = serializers.CharField(help_text="when the tool reads a folder's file")
                source = serializers.CharField(  # type: ignore[assignment]  # the wire name
                    help_text="where the tool documents it"
                )

            id = serializers.CharField(
                help_text="the tool's id: what `--tool` and `explain?tool=` take"
            )
            format = serializers.CharField()
            tool = serializers.CharField()
            docs = serializers.CharField(help_text="the tool's documentation of these files")
            files = serializers.ListField(
                child=serializers.CharField(),
                help_text="the main file, then the rule files' pattern",
            )

            class ReadBySerializer(serializers.Serializer):
                class Meta:
                    ref_name = "ExportFormatReadBy"

                tool_id = serializers.CharField(help_text="the id CLI options take for it")
                tool = serializers.CharField()
                docs = serializers.CharField(help_text="where it documents the files it reads")
                note = serializers.CharField(
                    allow_blank=True,
                    help_text="why the format serves it (blank: it reads just these files)",
                )

            scoping = serializers.CharField()
            scoping_fields = serializers.CharField()
            nested = NestedSerializer(
                allow_null=True,
                help_text="the file the tool reads per folder (null: none): a document "
                "scoped to exactly one folder is exported as that folder's file",
            )
            limits = LimitSerializer(many=True)
            tool_id = serializers.CharField(
                help_text="the id CLI options take for the tool (`agentdocs bind --repo DIR "
                "--tool`, `agentdocs run --tool`, `agentdocs hooks --tool`); `tool` is its "
                "name, and `agentdocs sync --format` takes `format`"
            )
            also_read_by = ReadBySerializer(
                many=True, help_text="other tools that read exactly these files"
            )

        formats = TargetSerializer(many=True)
        all = serializers.ListField(
            child=serializers.CharField(), help_text="the formats `format=all` exports"
        )

    @extend_schema(
        tags=["export"],
        summary="List the export formats",
        description="Every format `export/?format=` takes (the target registry): the tool "
        "it is for (its name, and the `tool_id` CLI options take), its files, how its "
        "frontmatter scopes a document, the size limits the tool applies with where they "
        "are documented, and the other tools that read the same files.",
        responses={200: OutputSerializer, **json_errors(404)},
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        formats = registry_as_dicts()
        data = {"formats": formats, "all": [entry["format"] for entry in formats]}
        return Response(represented(self.OutputSerializer, data))

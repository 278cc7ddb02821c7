"""Import: a repository's agent files become documents of the project.

`POST .../import/` with ``{"files": [{"path", "content"}], "dry_run", "reason", "adopt"}``
answers with the plan (one entry per file; a file agentdocs generated has one per
section, its edits proposed as change requests) and whether it was applied. Writers
import; into `_vance` (the project, or a `_vance/` path) only tenant admins.

`POST .../propose/`, with the same body, only sends the edits of generated files back
as change requests and writes no document: any member may propose.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api import parsers
from agentdocs.api.access import prefetched_access
from agentdocs.api.changes import change_page_path
from agentdocs.api.schema import errors
from agentdocs.api.serializers import ReasonField, StrictBooleanField, StrictSerializer, TextField
from agentdocs.core.agent_files import SourceFile
from agentdocs.core.errors import InvalidInput
from agentdocs.core.paths import validate_path
from agentdocs.models import ChangeRequest, Scope
from agentdocs.selectors import imports as import_selectors
from agentdocs.services import import_round_trip
from agentdocs.services import imports as import_service
from agentdocs.validation.documents import MAX_BODY_BYTES

MAX_FILES = 100
MAX_REASON_LENGTH = 200  # room for "; imported from <path>" within a history reason


class ImportFileSerializer(StrictSerializer):
    """One file of the repository, by its path from the repository root."""

    class Meta:
        ref_name = "ImportFile"

    path = TextField(help_text="From the repository root, such as `.cursor/rules/api.mdc`")
    content = TextField(help_text="The file's text; at most 256 KiB of UTF-8")

    def validate_path(self, value: str) -> str:
        try:
            return validate_path(value)
        except InvalidInput as error:
            # Raised as DRF's error, so the field is named `files.N.path`.
            raise serializers.ValidationError(error.detail) from None

    def validate_content(self, value: str) -> str:
        size = len(value.encode("utf-8", errors="surrogatepass"))
        if size > MAX_BODY_BYTES:
            raise serializers.ValidationError(
                f"The content is {size} bytes; at most {MAX_BODY_BYTES} bytes (256 KiB) "
                "are allowed."
            )
        return value


class ImportPlanEntrySerializer(serializers.Serializer):
    class Meta:
        ref_name = "ImportPlanEntry"

    # DRF's metaclass takes declared fields off the class, so this does not shadow
    # `Field.source`; mypy sees only the class attribute.
    source = serializers.CharField()  # type: ignore[assignment]
    target = serializers.CharField(
        allow_null=True,
        help_text="The document (`skills/<name>` for a skill folder); null when skipped",
    )
    action = serializers.ChoiceField(
        choices=["create", "update", "unchanged", "propose", "skipped"],
        help_text="`propose`: an edit of a generated file, sent back as a change request",
    )
    detail = serializers.CharField()
    change_request = serializers.IntegerField(
        source="change_request.pk",
        allow_null=True,
        default=None,
        help_text="The change request a `propose` opened (or found open with the same edit); "
        "null in a dry run",
    )
    change_request_url = serializers.SerializerMethodField(
        help_text="Its page; null without a change request"
    )

    def get_change_request_url(self, entry: import_selectors.PlanEntry) -> str | None:
        change: ChangeRequest | None = entry.change_request
        if change is None:
            return None
        request = self.context.get("request")
        url = change_page_path(change)
        return request.build_absolute_uri(url) if request is not None else url


class ProjectImport(APIView):
    # JSON up to AGENTDOCS_IMPORT_MAX_REQUEST_BYTES, room for MAX_FILES files of 256 KiB.
    parser_classes = [parsers.ImportJSONParser, parsers.FormParser, parsers.MultiPartParser]

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "ProjectImport"

        files = serializers.ListField(
            child=ImportFileSerializer(),
            allow_empty=False,
            max_length=MAX_FILES,
            help_text=f"At most {MAX_FILES} files, each path once",
        )
        dry_run = StrictBooleanField(
            required=False, default=False, help_text="Give the plan and write nothing"
        )
        reason = ReasonField(max_length=MAX_REASON_LENGTH)
        adopt = StrictBooleanField(
            required=False,
            default=False,
            help_text="Import files agentdocs generated (for any project) as hand-written "
            "ones, without their provenance line (of AGENTS.md and the like, the agent "
            "notes), instead of proposing their edits to the documents they came from",
        )

        def validate_files(self, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
            seen: set[str] = set()
            for index, file in enumerate(files):
                if file["path"] in seen:
                    raise serializers.ValidationError(
                        {str(index): {"path": [f"{file['path']!r} is given more than once."]}}
                    )
                seen.add(file["path"])
            return files

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "ProjectImportResult"

        plan = ImportPlanEntrySerializer(many=True)
        applied = serializers.BooleanField()

    @extend_schema(
        tags=["import"],
        summary="Import a repository's agent files as documents",
        description="Maps each file (`AGENTS.md`, `CLAUDE.md`, `.cursor/rules/*.mdc`, …) "
        "to a document and answers with the plan: create, update, unchanged or skipped, "
        "per file. With `dry_run` nothing is written; otherwise the plan is applied in one "
        "transaction. Writers import; a `_vance` target needs a tenant admin (403). 422 if "
        "a file looks like it holds a secret (nothing is written). The JSON body may be "
        "up to `AGENTDOCS_IMPORT_MAX_REQUEST_BYTES` (32 MiB by default, room for 100 "
        "files of 256 KiB); larger is 413 `too_large`.",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 404, 413, 422)},
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        access.require_write()
        files = [SourceFile(path=file["path"], content=file["content"]) for file in data["files"]]
        for target in import_selectors.import_targets(paths=[file.path for file in files]):
            access.require_write(target)
        result = import_service.project_import(
            project=access.project,
            user=access.user,
            files=files,
            dry_run=data["dry_run"],
            reason=data["reason"],
            adopt=data["adopt"],
        )
        return Response(self.OutputSerializer(result, context={"request": request}).data)


class ProposeFileSerializer(ImportFileSerializer):
    class Meta:
        ref_name = "ProposeFile"

    base_sha256 = TextField(
        required=False,
        default="",
        help_text="A file of an exported skill (under a tool's skills folder): the sha256 "
        "it had when it was synced (the lock file's); its edit is proposed against the "
        "skill's version that held it",
    )


class ProposeInputSerializer(ProjectImport.InputSerializer):
    class Meta:
        ref_name = "ProjectProposeInput"

    files = serializers.ListField(
        child=ProposeFileSerializer(),
        allow_empty=False,
        max_length=MAX_FILES,
        help_text=f"At most {MAX_FILES} files, each path once",
    )

    process = TextField(
        required=False,
        default="",
        help_text="Proposed by an agent: its process id (as its renders name it); each "
        "change request keeps it with that process's latest binding record",
    )


class ProjectPropose(APIView):
    """The edits of generated files, sent back to their documents as change requests."""

    parser_classes = ProjectImport.parser_classes
    required_scopes = {"POST": Scope.READ}
    InputSerializer = ProposeInputSerializer
    OutputSerializer = ProjectImport.OutputSerializer

    @extend_schema(
        tags=["import"],
        summary="Propose the edits of exported files as change requests",
        description="For each file agentdocs generated (recognised by its provenance "
        "line): every section edited since the export becomes a change request on the "
        "document it came from (`propose`), based on the version the provenance names and "
        "three-way merged onto the current one when the document was saved since; an "
        "unedited section is `unchanged`; what no document holds (the Policy section, text "
        "outside the sections) is `skipped`, saying why. The edited files of an exported "
        "skill (each with its `base_sha256`) become one change request of the skill, based "
        "on the version that held them as synced. Other files are `skipped`: this "
        "writes no document. Any member may propose, with a token of any scope; "
        "422 if an edit looks like it holds a secret (nothing is proposed).",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 404, 413, 422)},
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        files = [SourceFile(path=file["path"], content=file["content"]) for file in data["files"]]
        result = import_round_trip.round_trip_propose(
            project=access.project,
            user=access.user,
            files=files,
            dry_run=data["dry_run"],
            reason=data["reason"],
            process=data["process"],
            base_hashes={
                file["path"]: file["base_sha256"] for file in data["files"] if file["base_sha256"]
            },
        )
        plan = [import_selectors.round_trip_entry(entry) for entry in result.entries]
        return Response(
            self.OutputSerializer(
                {"plan": plan, "applied": result.applied}, context={"request": request}
            ).data
        )

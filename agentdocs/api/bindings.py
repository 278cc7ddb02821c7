"""Binding records: bind a run, list and read records, outdated, compare, reconstruct."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import ratelimit
from agentdocs.api.access import caller, request_project_access
from agentdocs.api.memory_block import (
    ClientDocumentSerializer,
    LabelField,
    name_field,
    paths_field,
    process_field,
)
from agentdocs.api.pagination import Pagination
from agentdocs.api.schema import RETRY_AFTER, errors
from agentdocs.api.serializers import JSONObjectField, MomentField, StrictSerializer, validated
from agentdocs.core import targets
from agentdocs.core.bindings import OUTDATED_STATUSES, SERVED_FROM, sha256_hex
from agentdocs.core.errors import InvalidInput
from agentdocs.core.hook_delivery import (
    FORMATS,
    MAX_EVENT_LENGTH,
    MAX_SESSION_ID_LENGTH,
    MAX_SOURCE_LENGTH,
)
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.core.timeline import timeline_segments
from agentdocs.models import BindingRecord, Scope
from agentdocs.paging import LateRows
from agentdocs.selectors import binding_checks
from agentdocs.selectors import bindings as binding_selectors
from agentdocs.selectors.binding_memory_block import MemoryBlockRequest
from agentdocs.services import bindings as binding_service
from agentdocs.validation import memory_block as memory_block_checks


def _record_id(raw: str, *, field: str = "record") -> int:
    """A record id from the path."""
    record_id = positive_int(raw, maximum=MAX_ID)
    if record_id is None:
        raise InvalidInput("A binding record id is a positive integer.", field=field)
    return record_id


SHA256_PATTERN = r"^[0-9a-f]{64}\Z"
SERVED_FROM_RULE = "`served_from` must be `server` or `cache`."
SERVED_SHA256_RULE = "`served_sha256` must be a sha256: 64 lowercase hex digits."


class ProblemsFilterField(serializers.BooleanField):
    """`?problems=`: true, 1 or yes; false, 0 or no (any case); empty means either."""

    default_error_messages = {"invalid": "`problems` must be true or false."}

    def to_internal_value(self, data: Any) -> bool | None:  # type: ignore[override]  # empty means either
        lowered = str(data).lower()
        if lowered == "":
            return None
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        self.fail("invalid")


class ArchiveSerializer(serializers.Serializer):
    path = serializers.CharField(source="archive_path", allow_null=True)
    sha256 = serializers.CharField(source="archive_sha256", allow_null=True)
    archived_at = serializers.DateTimeField(allow_null=True)

    def to_representation(self, record: BindingRecord) -> dict[str, Any]:
        data = super().to_representation(record)
        # Not archived yet: null, not an empty string.
        return {**data, "path": data["path"] or None, "sha256": data["sha256"] or None}


class BindingRecordSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    process = serializers.CharField()
    schema = serializers.CharField()
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    problem_count = serializers.IntegerField()
    memory_block_sha256 = serializers.SerializerMethodField()
    archive = ArchiveSerializer(source="*")

    delivery = serializers.SerializerMethodField(
        help_text="A live delivery's tool, event, source, how the block was had and whether "
        "the tool could use it; null for other runs"
    )

    def get_memory_block_sha256(self, record: BindingRecord) -> str | None:
        return record.memory_block_sha256 or None

    def get_delivery(self, record: BindingRecord) -> dict[str, Any] | None:
        summary = getattr(record, "delivery_summary", None)
        if not isinstance(summary, dict) or summary.get("tool") is None:
            return None
        # SQLite's JSON functions give a boolean inside an object as 'true' or 1.
        usable = summary.get("usable")
        if usable is not None and not isinstance(usable, bool):
            usable = usable in ("true", 1)
        return {**summary, "usable": usable}


class BindingRecordSerializer(serializers.Serializer):
    """The stored record (`context-binding/v1`) as it was made, with its id and archive."""

    id = serializers.IntegerField(source="pk")
    schema = serializers.CharField(source="record.schema")
    tenant = serializers.CharField(source="record.tenant")
    project = serializers.CharField(source="record.project")
    process = serializers.CharField(source="record.process")
    created_at = serializers.CharField(source="record.created_at")
    created_by = serializers.CharField(source="record.created_by", allow_null=True)
    manifest = serializers.DictField(source="record.manifest")
    context = serializers.ListField(  # type: ignore[assignment]  # the wire name; shadows Field.context in the stubs
        source="record.context", child=serializers.DictField()
    )
    local = serializers.ListField(source="record.local", child=serializers.DictField())
    exceptions = serializers.ListField(source="record.exceptions", child=serializers.DictField())
    memory_block = serializers.DictField(source="record.memory_block", allow_null=True)
    problems = serializers.ListField(source="record.problems", child=serializers.DictField())
    problem_count = serializers.IntegerField(source="record.problem_count")
    archive = ArchiveSerializer(source="*")
    signature = serializers.SerializerMethodField(
        help_text="The server's Ed25519 signature over the record's canonical JSON (the "
        "answer without `id`, `archive` and `signature`); null for a record made before "
        "records were signed. Verify with `agentdocs verify-record`."
    )

    def get_signature(self, record: BindingRecord) -> str | None:
        return record.signature or None

    def to_representation(self, record: BindingRecord) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(record)
        # Only in the records that carry them, so every answer is the signed record: how
        # the block was served, a repository run's files (`agentdocs bind --repo`), and
        # the skills a process read (`read_skill`).
        for key in ("served_from", "served_sha256", "repository", "delivery", "skills"):
            if key in record.record:
                data[key] = record.record[key]
        return data


DELIVERY_BLOCKS = ("server", "cache", "refused", "none")


class DeliverySerializer(StrictSerializer):
    """What a context hook wrote to its tool (`agentdocs hook context`): the exact output,
    its size and sha256 (checked against it); the server adds what the tool makes of it."""

    class Meta:
        ref_name = "Delivery"

    tool = serializers.ChoiceField(
        list(targets.CONTEXT_HOOKS),
        help_text="The tool the hook wrote to",
        error_messages={
            "invalid_choice": f"`delivery.tool` must be one of {', '.join(targets.CONTEXT_HOOKS)}."
        },
    )
    event = serializers.CharField(max_length=MAX_EVENT_LENGTH, help_text="The hook event")
    source = serializers.CharField(  # type: ignore[assignment]  # the wire name
        max_length=MAX_SOURCE_LENGTH,
        allow_blank=True,
        required=False,
        default="",
        help_text="What started it (startup, resume, clear, compact, manual, auto)",
    )
    format = serializers.ChoiceField(list(FORMATS), help_text="The form written")
    bytes = serializers.IntegerField(min_value=0, help_text="The output's size in bytes")
    sha256 = serializers.RegexField(
        SHA256_PATTERN,
        help_text="The sha256 of the output's UTF-8 bytes",
        error_messages={"invalid": "`delivery.sha256` must be 64 lowercase hex digits."},
    )
    output = serializers.CharField(
        allow_blank=True, trim_whitespace=False, help_text="Exactly what was written to stdout"
    )
    block = serializers.ChoiceField(
        list(DELIVERY_BLOCKS),
        required=False,
        help_text="How the block was had: server, cache, refused (its signature failed), none",
    )
    relies_on = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField(max_length=500)),
        required=False,
        max_length=20,
        help_text="The files the tool loads itself that the block relies on, with their state",
    )
    received = JSONObjectField(
        required=False, help_text="Ignored: the server reads the output by the tool's rules"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        data = attrs["output"].encode("utf-8")
        if sha256_hex(data) != attrs["sha256"]:
            raise InvalidInput(
                "`delivery.sha256` is not the sha256 of `delivery.output`.", field="delivery.sha256"
            )
        if len(data) != attrs["bytes"]:
            raise InvalidInput(
                f"`delivery.bytes` is {attrs['bytes']}, but `delivery.output` is "
                f"{len(data)} bytes.",
                field="delivery.bytes",
            )
        attrs.pop("received", None)
        return attrs


class MemoryBlockRequestSerializer(StrictSerializer):
    class Meta:
        ref_name = "BindMemoryBlock"

    recipe = name_field()
    profile = name_field()
    client_document = ClientDocumentSerializer(required=False, allow_null=True, default=None)
    paths = paths_field()
    label = LabelField()  # type: ignore[assignment]  # the wire name; shadows Field.label

    def validate(self, attrs: dict[str, Any]) -> MemoryBlockRequest:
        return MemoryBlockRequest(
            **{**attrs, "paths": attrs.get("paths") or (), "label": attrs.get("label") or None}
        )


class BindingListCreate(APIView):
    # Rendering and binding are what an agent's run does: a `render` token may.
    required_scopes = {"POST": Scope.RENDER}
    pagination_class = Pagination  # the schema shows GET's answer as the page it is

    class GetQuerySerializer(serializers.Serializer):
        process = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            trim_whitespace=False,
            help_text="Only records of this process",
        )
        problems = ProblemsFilterField(
            required=False,
            allow_null=True,
            default=None,
            help_text="Only records with (or without) problems",
        )
        session = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            trim_whitespace=False,
            max_length=MAX_SESSION_ID_LENGTH,
            help_text="One agent session's deliveries as a timeline, oldest first (startup, "
            "compactions, resumes)",
        )

    class PostInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "BindInput"

        process = process_field("`process` is required: the id of the run being bound.")
        manifest = JSONObjectField(
            required=False, allow_null=True, default=None, help_text="Inline; else context.json"
        )
        memory_block = MemoryBlockRequestSerializer(required=False, allow_null=True, default=None)
        served_from = serializers.ChoiceField(
            list(SERVED_FROM),
            required=False,
            allow_null=True,
            default=None,
            help_text="How the run's block was served: `server`, or `cache` when the server "
            "could not be reached and the client served the block it kept (docs/cli.md).",
            error_messages={"invalid_choice": SERVED_FROM_RULE},
        )
        served_sha256 = serializers.RegexField(
            SHA256_PATTERN,
            required=False,
            allow_null=True,
            default=None,
            help_text="The sha256 (64 lowercase hex digits) of the block text the run was "
            "served; required with `served_from: cache`.",
            error_messages={"invalid": SERVED_SHA256_RULE},
        )
        repository = JSONObjectField(
            required=False,
            allow_null=True,
            default=None,
            help_text="A repository run's files (`agentdocs bind --repo`): tool, remote, "
            "commit, branch, dirty and per file path, sha256, bytes, cut_at, custody, state",
        )
        delivery = DeliverySerializer(
            required=False,
            allow_null=True,
            default=None,
            help_text="A live delivery (`agentdocs hook context`): the exact output a session "
            "hook wrote to its tool; a problem (`unusable_delivery`) when the tool could not "
            "use it",
        )

        def validate_process(self, process: str) -> str:
            return memory_block_checks.validate_process(process)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs["served_from"] == "cache" and attrs["served_sha256"] is None:
                raise InvalidInput(
                    "`served_sha256` is required with `served_from: cache`: the sha256 of "
                    "the text served.",
                    field="served_sha256",
                )
            if attrs["served_sha256"] is not None and attrs["served_from"] is None:
                raise InvalidInput(
                    "`served_sha256` needs `served_from`: say how the block was served.",
                    field="served_from",
                )
            return attrs

    OutputSerializer = BindingRecordSerializer

    @extend_schema(
        tags=["bindings"],
        summary="List a project's binding records",
        description="Newest first, paged; `?process=` keeps one process's records, "
        "`?problems=true` (or false) those with (or without) problems, `?session=` one "
        "agent session's deliveries (`agentdocs hook context`), oldest first.",
        responses={200: BindingRecordSummarySerializer(many=True), **errors(400, 404)},
        parameters=[GetQuerySerializer],
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        query = validated(self.GetQuerySerializer, request.query_params)
        records = binding_selectors.binding_record_list(
            project=access.project,
            process=query["process"] or None,
            problems=query["problems"],
            session=query["session"] or None,
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(LateRows(records), request, view=self)
        return paginator.get_paginated_response(
            BindingRecordSummarySerializer(page, many=True).data
        )

    @extend_schema(
        tags=["bindings"],
        summary="Bind a run: record what it was given",
        description="Stores the record whatever its problems: 201 when it has none, "
        "422 with the record when it has some (the record, not the error shape). Readers "
        "may bind; an API token needs the `render` scope. The manifest is inline or the "
        "project's `context.json`; `memory_block` renders and binds the block as well "
        "(404 for an unknown recipe or profile). 413 when the record would be larger than "
        "the server keeps; 429 with Retry-After when the token, or the person across all "
        "their tokens, binds too often.",
        request=PostInputSerializer,
        responses={
            201: OutputSerializer,
            422: OpenApiResponse(
                OutputSerializer, description="Stored, with problems: the record names them."
            ),
            **errors(400, 404, 413, 429),
        },
        parameters=[
            RETRY_AFTER,
            OpenApiParameter(
                "Location",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="The stored record's address.",
                response=[201, 422],
            ),
        ],
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        serializer = self.PostInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        ratelimit.check("bind", caller(request), ("bind_user", ratelimit.user_key(access.user.pk)))
        result = binding_service.binding_create(
            tenant=access.tenant,
            project=access.project,
            user=access.user,
            **serializer.validated_data,
        )
        record = result.record
        response = Response(
            self.OutputSerializer(record).data,
            status=status.HTTP_422_UNPROCESSABLE_ENTITY
            if result.has_problems
            else status.HTTP_201_CREATED,
        )
        response["Location"] = reverse(
            "api-binding", kwargs={"tenant": tenant, "project": project, "record": record.pk}
        )
        return response


class _RecordView(APIView):
    def _record(self, request: Request, tenant: str, project: str, record: str) -> BindingRecord:
        access = request_project_access(request, tenant, project)
        return binding_selectors.binding_record_get(
            project=access.project, record_id=_record_id(record)
        )


class BindingDetail(_RecordView):
    OutputSerializer = BindingRecordSerializer

    @extend_schema(
        tags=["bindings"],
        summary="Read a binding record",
        description="The stored `context-binding/v1` record as it was made, with its "
        "archive (null until the archiver has written it).",
        responses={200: OutputSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str, record: str) -> Response:
        return Response(self.OutputSerializer(self._record(request, tenant, project, record)).data)


class BindingOutdated(_RecordView):
    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "BindingOutdated"

        record = serializers.IntegerField()
        sources = serializers.ListField(
            child=serializers.DictField(), help_text="Per bound source: bound and current"
        )
        summary = serializers.DictField(
            child=serializers.IntegerField(), help_text="How many sources have each status"
        )
        repository = serializers.ListField(
            child=serializers.DictField(),
            required=False,
            help_text="A repository run's files: each bound sha256 beside the server's "
            "export of it now (`current`, `changed`, `deleted`, or the state it was bound in)",
        )

    @extend_schema(
        tags=["bindings"],
        summary="Which of a record's sources are outdated",
        description="For each bound source, the version and sha256 it was bound at beside "
        "the current ones, with a status; `summary` counts the statuses.",
        responses={200: OutputSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str, record: str) -> Response:
        bound = self._record(request, tenant, project, record)
        rows = binding_selectors.binding_outdated(record=bound)
        counts = dict.fromkeys(OUTDATED_STATUSES, 0)
        for row in rows:
            counts[row["status"]] += 1
        answer: dict[str, Any] = {"record": bound.pk, "sources": rows, "summary": counts}
        files = binding_checks.binding_repository_outdated(record=bound)
        if files is not None:
            answer["repository"] = files
        return Response(self.OutputSerializer(answer).data)


class BindingCompare(APIView):
    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "BindingComparison"

        a = serializers.IntegerField()
        b = serializers.IntegerField()
        sources = serializers.ListField(
            child=serializers.DictField(),
            help_text="Sources added, removed, changed, or `unchanged`: bound to another "
            "version with the same sha256",
        )
        exceptions = serializers.ListField(
            child=serializers.DictField(), help_text="Exceptions whose outcome differs"
        )
        memory_block = serializers.DictField(help_text="The two blocks' sha256 and whether same")
        repository = serializers.ListField(
            child=serializers.DictField(),
            required=False,
            help_text="Repository runs: the loaded files added, removed or changed",
        )
        identical = serializers.BooleanField()

    @extend_schema(
        tags=["bindings"],
        summary="Compare two binding records",
        description="The sources added, removed or changed from record `record` (a) to "
        "record `other` (b), the exceptions whose outcome differs, and whether the two "
        "Memory Blocks are the same.",
        responses={200: OutputSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str, record: str, other: str) -> Response:
        access = request_project_access(request, tenant, project)
        a = binding_selectors.binding_record_get(
            project=access.project, record_id=_record_id(record)
        )
        b = binding_selectors.binding_record_get(
            project=access.project, record_id=_record_id(other, field="other")
        )
        comparison = {"a": a.pk, "b": b.pk, **binding_selectors.binding_compare(a=a, b=b)}
        return Response(self.OutputSerializer(comparison).data)


class BindingReconstruct(_RecordView):
    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "BindingReconstruction"

        record = serializers.IntegerField()
        sources = serializers.ListField(
            child=serializers.DictField(), help_text="Each bound source's text, verified"
        )
        memory_block = serializers.DictField(
            allow_null=True, help_text="The block rendered again from the bound versions"
        )
        repository = serializers.ListField(
            child=serializers.DictField(),
            required=False,
            help_text="A repository run's files: an in-sync file's text rebuilt from "
            "history and verified; any other file names the git blob to ask for",
        )
        delivery = serializers.DictField(
            required=False,
            help_text="A live delivery: the exact output the tool received, verified against "
            "its sha256, and the context the tool made of it by its own rules",
        )
        skills = serializers.ListField(
            child=serializers.DictField(),
            required=False,
            help_text="The skills the process read: each file restored from the skill's "
            "history at the bound version and verified against its sha256",
        )
        complete = serializers.BooleanField()

    @extend_schema(
        tags=["bindings"],
        summary="Reconstruct what a run was given",
        description="Each bound source's text at its bound version, verified against the "
        "recorded sha256, and the Memory Block rendered again from them; `complete` says "
        "whether everything could be rebuilt.",
        responses={200: OutputSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str, record: str) -> Response:
        bound = self._record(request, tenant, project, record)
        reconstruction = binding_checks.binding_reconstruct(record=bound)
        return Response(self.OutputSerializer({"record": bound.pk, **reconstruction}).data)


class TimelineSegmentSerializer(serializers.Serializer):
    class Meta:
        ref_name = "TimelineSegment"

    # The wire name; DRF's metaclass takes it off the class, so it does not shadow
    # `Field.source`, but mypy sees only the class attribute.
    source = serializers.CharField(  # type: ignore[assignment]
        help_text="`manifest`, `name:<provider name>`, `local:<path>`, "
        "`agent:<project>/<path>`, `client:<name>`, `context-document:<path>` or "
        "`memory-block`"
    )
    sha256 = serializers.CharField(allow_null=True, help_text="Null when unresolved")
    version = serializers.IntegerField(
        allow_null=True, help_text="Null for client texts, bundled defaults, unresolved ones"
    )
    label = serializers.CharField(  # type: ignore[assignment]  # the wire name
        allow_null=True,
        help_text="The label whose version the runs saw (`canary`, `production`); null "
        "for latest, or a render read by no label",
    )
    first_run = serializers.IntegerField(help_text="The binding record id of the first run")
    last_run = serializers.IntegerField(help_text="The binding record id of the last run")
    runs = serializers.IntegerField(help_text="How many runs the segment holds")
    problem_runs = serializers.IntegerField(help_text="How many of them had problems")
    first_at = serializers.DateTimeField()
    last_at = serializers.DateTimeField()


class BindingTimeline(APIView):
    class QuerySerializer(serializers.Serializer):
        since = MomentField(
            required=False, allow_null=True, default=None, help_text="Runs from then"
        )
        until = MomentField(
            required=False, allow_null=True, default=None, help_text="Runs before then"
        )
        limit = serializers.IntegerField(
            required=False,
            default=binding_selectors.TIMELINE_DEFAULT_RUNS,
            min_value=1,
            max_value=binding_selectors.TIMELINE_MAX_RUNS,
            help_text="Read at most this many runs, the newest "
            f"(default {binding_selectors.TIMELINE_DEFAULT_RUNS:,}, "
            f"at most {binding_selectors.TIMELINE_MAX_RUNS:,})",
        )

        def to_internal_value(self, data: Any) -> Any:
            # `?since=` reads as no bound at all.
            return super().to_internal_value({k: v for k, v in data.items() if v != ""})

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs["since"] and attrs["until"] and attrs["since"] >= attrs["until"]:
                raise serializers.ValidationError({"until": ["`until` must be after `since`."]})
            return attrs

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "BindingTimeline"

        since = serializers.DateTimeField(allow_null=True)
        until = serializers.DateTimeField(allow_null=True)
        limit = serializers.IntegerField(help_text="The most runs read")
        truncated = serializers.BooleanField(
            help_text="Older runs in the span were left out: narrow `since`/`until` or "
            "raise `limit` to see them"
        )
        runs = serializers.IntegerField(help_text="How many runs the segments cover")
        segments = TimelineSegmentSerializer(many=True)

    @extend_schema(
        tags=["bindings"],
        summary="Which versions of each source the runs saw, over time",
        description="The project's binding records made in [`since`, `until`) as "
        "segments: per bound source, each stretch of consecutive runs that saw one "
        "version and sha256 (`first_run`/`last_run` are record ids), ordered by source "
        "and then time. Reads the newest `limit` runs of the span (1,000 unless given, "
        "at most 10,000); `truncated` says when older ones were left out. 400 naming "
        "`since`, `until` or `limit` when one is not acceptable.",
        responses={200: OutputSerializer, **errors(400, 404)},
        parameters=[QuerySerializer],
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        query = validated(self.QuerySerializer, request.query_params)
        window = binding_selectors.binding_timeline_window(project=access.project, **query)
        return Response(
            self.OutputSerializer(
                {
                    "since": query["since"],
                    "until": query["until"],
                    "limit": window.limit,
                    "truncated": window.truncated,
                    "runs": len(window.runs),
                    "segments": timeline_segments(window.runs),
                }
            ).data
        )

"""Binding records: bind a run, list and read records, outdated, compare, reconstruct."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions, selectors
from agentdocs.api.access import prefetched_access
from agentdocs.api.common import reject_unknown_fields, username
from agentdocs.api.pagination import Pagination
from agentdocs.core.bindings import OUTDATED_STATUSES
from agentdocs.core.errors import InvalidInput
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.models import BindingRecord, Scope
from agentdocs.services import bindings as binding_service


def _archive(record: BindingRecord) -> dict[str, Any]:
    return {
        "path": record.archive_path or None,
        "sha256": record.archive_sha256 or None,
        "archived_at": record.archived_at,
    }


def _summary(record: BindingRecord) -> dict[str, Any]:
    return {
        "id": record.pk,
        "process": record.process,
        "schema": record.schema,
        "created_at": record.created_at,
        "created_by": username(record.created_by),
        "problem_count": record.problem_count,
        "memory_block_sha256": record.memory_block_sha256 or None,
        "archive": _archive(record),
    }


def _detail(record: BindingRecord) -> dict[str, Any]:
    return {"id": record.pk, **record.record, "archive": _archive(record)}


def _record_id(raw: str, *, field: str = "record") -> int:
    record_id = positive_int(raw, maximum=MAX_ID)
    if record_id is None:
        raise InvalidInput("A binding record id is a positive integer.", field=field)
    return record_id


def _problems_filter(raw: str | None) -> bool | None:
    if raw is None or raw == "":
        return None
    lowered = raw.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise InvalidInput("`problems` must be true or false.", field="problems")


class BindingRecordSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    process = serializers.CharField()
    schema = serializers.CharField()
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField(allow_null=True)
    problem_count = serializers.IntegerField()
    memory_block_sha256 = serializers.CharField(allow_null=True)
    archive = serializers.DictField()


class BindingRecordSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    schema = serializers.CharField()
    tenant = serializers.CharField()
    project = serializers.CharField()
    process = serializers.CharField()
    created_at = serializers.CharField()
    created_by = serializers.CharField(allow_null=True)
    manifest = serializers.DictField()
    context = serializers.ListField(child=serializers.DictField())
    local = serializers.ListField(child=serializers.DictField())
    exceptions = serializers.ListField(child=serializers.DictField())
    memory_block = serializers.DictField(allow_null=True)
    problems = serializers.ListField(child=serializers.DictField())
    problem_count = serializers.IntegerField()
    archive = serializers.DictField()


class BindingListCreate(APIView):
    # Rendering and binding are what an agent's run does: a `render` token may.
    required_scopes = {"POST": Scope.RENDER}

    class BindInputSerializer(serializers.Serializer):
        process = serializers.CharField()
        manifest = serializers.DictField(required=False)
        memory_block = serializers.DictField(required=False)

    @extend_schema(
        responses=BindingRecordSummarySerializer(many=True),
        parameters=[
            OpenApiParameter("process", str, description="Only records of this process"),
            OpenApiParameter(
                "problems", bool, description="Only records with (or without) problems"
            ),
        ],
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        process = request.query_params.get("process")
        records = selectors.binding_record_list(
            project=access.project,
            process=process if process else None,
            problems=_problems_filter(request.query_params.get("problems")),
        )
        paginator = Pagination()
        page = paginator.paginate_queryset(records, request, view=self)
        return paginator.get_paginated_response([_summary(r) for r in page])

    @extend_schema(
        request=BindInputSerializer,
        responses={201: BindingRecordSerializer, 422: BindingRecordSerializer},
        description="Stores the record whatever its problems: 201 when it has none, "
        "422 with the record when it has some.",
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        data = reject_unknown_fields(request.data, {"process", "manifest", "memory_block"})
        if "process" not in data:
            raise InvalidInput(
                "`process` is required: the id of the run being bound.", field="process"
            )
        manifest = data.get("manifest")
        if manifest is not None and not isinstance(manifest, dict):
            raise InvalidInput("`manifest` must be a JSON object.", field="manifest")
        memory_block = data.get("memory_block")
        if memory_block is not None and not isinstance(memory_block, dict):
            raise InvalidInput("`memory_block` must be a JSON object.", field="memory_block")
        result = binding_service.binding_create(
            tenant=access.tenant,
            project=access.project,
            user=request.user,
            process=data["process"],
            manifest=manifest,
            memory_block=memory_block,
        )
        record = result.record
        response = Response(
            _detail(record),
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
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        return selectors.binding_record_get(project=access.project, record_id=_record_id(record))


class BindingDetail(_RecordView):
    @extend_schema(responses=BindingRecordSerializer)
    def get(self, request: Request, tenant: str, project: str, record: str) -> Response:
        return Response(_detail(self._record(request, tenant, project, record)))


class BindingOutdated(_RecordView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, tenant: str, project: str, record: str) -> Response:
        bound = self._record(request, tenant, project, record)
        rows = binding_service.binding_outdated(record=bound)
        counts = dict.fromkeys(OUTDATED_STATUSES, 0)
        for row in rows:
            counts[row["status"]] += 1
        return Response({"record": bound.pk, "sources": rows, "summary": counts})


class BindingCompare(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, tenant: str, project: str, record: str, other: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        a = selectors.binding_record_get(project=access.project, record_id=_record_id(record))
        b = selectors.binding_record_get(
            project=access.project, record_id=_record_id(other, field="other")
        )
        return Response({"a": a.pk, "b": b.pk, **binding_service.binding_compare(a=a, b=b)})


class BindingReconstruct(_RecordView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, tenant: str, project: str, record: str) -> Response:
        bound = self._record(request, tenant, project, record)
        return Response({"record": bound.pk, **binding_service.binding_reconstruct(record=bound)})

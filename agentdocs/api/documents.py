"""Documents: list, create, read, write, edit, delete, history, diff, revert, lock."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions, selectors
from agentdocs.api.access import prefetched_access
from agentdocs.api.common import (
    ListView,
    base_version,
    document_etag,
    etag_matches,
    reason_of,
    reject_unknown_fields,
    username,
)
from agentdocs.core.diffs import diff_texts
from agentdocs.core.errors import InvalidInput
from agentdocs.core.numbers import positive_int
from agentdocs.core.paths import validate_path
from agentdocs.models import Document
from agentdocs.services import documents as document_service


def _summary(document: Document) -> dict[str, Any]:
    return {
        "path": document.path,
        "version": document.version,
        "sha256": document.sha256,
        "size": document.size,
        "updated_at": document.updated_at,
        "updated_by": username(document.updated_by),
    }


def _detail(document: Document) -> dict[str, Any]:
    return {
        **_summary(document),
        "body": document.body,
        "lock": document_service.lock_state(document),
    }


def _document_response(document: Document, *, status_code: int = 200) -> Response:
    response = Response(_detail(document), status=status_code)
    response["ETag"] = document_etag(document)
    return response


def _text_field(data: dict, name: str, *, required: bool = True) -> str | None:
    if name not in data:
        if required:
            raise InvalidInput(f"`{name}` is required.", field=name)
        return None
    value = data[name]
    if not isinstance(value, str):
        raise InvalidInput(f"`{name}` must be a string.", field=name)
    return value


class DocumentSummarySerializer(serializers.Serializer):
    path = serializers.CharField()
    version = serializers.IntegerField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(allow_null=True)


class DocumentSerializer(DocumentSummarySerializer):
    body = serializers.CharField()
    lock = serializers.DictField(allow_null=True)


class DocumentCreateSerializer(serializers.Serializer):
    path = serializers.CharField()
    body = serializers.CharField(allow_blank=True, trim_whitespace=False)
    reason = serializers.CharField(required=False, allow_blank=True)


class DocumentWriteSerializer(serializers.Serializer):
    body = serializers.CharField(allow_blank=True, trim_whitespace=False)
    reason = serializers.CharField(required=False, allow_blank=True)
    version = serializers.IntegerField(required=False, help_text="Base version, or If-Match")


class DocumentEditSerializer(serializers.Serializer):
    old = serializers.CharField(trim_whitespace=False)
    new = serializers.CharField(allow_blank=True, trim_whitespace=False)
    reason = serializers.CharField(required=False, allow_blank=True)
    version = serializers.IntegerField(required=False, help_text="Base version, or If-Match")


class DocumentDeletedSerializer(DocumentSummarySerializer):
    deleted = serializers.BooleanField()


class DocumentListCreate(ListView):
    @extend_schema(
        responses=DocumentSummarySerializer(many=True),
        parameters=[OpenApiParameter("prefix", str, description="Only paths starting with this")],
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        prefix = request.query_params.get("prefix", "")
        documents = selectors.document_list(project=access.project, prefix=prefix)
        return self.paginate(request, documents, _summary)

    @extend_schema(request=DocumentCreateSerializer, responses={201: DocumentSerializer})
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        data = reject_unknown_fields(request.data, {"path", "body", "reason"})
        path = validate_path(_text_field(data, "path"))
        access.require_write(path)
        document = document_service.document_create(
            project=access.project,
            path=path,
            body=_text_field(data, "body"),
            user=request.user,
            reason=reason_of(data),
        )
        return _document_response(document, status_code=status.HTTP_201_CREATED)


class DocumentDetail(APIView):
    def _document(self, request: Request, tenant: str, project: str, path: str, *, write: bool):
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        validate_path(path)
        if write:
            access.require_write(path)
        return document_service.document_get(project=access.project, path=path)

    @extend_schema(responses=DocumentSerializer)
    def get(self, request: Request, tenant: str, project: str, path: str) -> Response:
        document = self._document(request, tenant, project, path, write=False)
        etag = document_etag(document)
        if etag_matches(request.headers.get("If-None-Match"), etag):
            response = Response(status=status.HTTP_304_NOT_MODIFIED)
            response["ETag"] = etag
            return response
        return _document_response(document)

    @extend_schema(request=DocumentWriteSerializer, responses=DocumentSerializer)
    def put(self, request: Request, tenant: str, project: str, path: str) -> Response:
        data = reject_unknown_fields(request.data, {"body", "reason", "version"})
        document = self._document(request, tenant, project, path, write=True)
        document = document_service.document_write(
            document=document,
            body=_text_field(data, "body"),
            base_version=base_version(request),
            user=request.user,
            reason=reason_of(data),
        )
        return _document_response(document)

    @extend_schema(request=DocumentEditSerializer, responses=DocumentSerializer)
    def patch(self, request: Request, tenant: str, project: str, path: str) -> Response:
        data = reject_unknown_fields(request.data, {"old", "new", "reason", "version"})
        document = self._document(request, tenant, project, path, write=True)
        document = document_service.document_edit(
            document=document,
            old=_text_field(data, "old"),
            new=_text_field(data, "new"),
            base_version=base_version(request),
            user=request.user,
            reason=reason_of(data),
        )
        return _document_response(document)

    @extend_schema(responses=DocumentDeletedSerializer)
    def delete(self, request: Request, tenant: str, project: str, path: str) -> Response:
        data = request.data if isinstance(request.data, dict) else {}
        reject_unknown_fields(data, {"reason", "version"})
        document = self._document(request, tenant, project, path, write=True)
        document = document_service.document_delete(
            document=document,
            base_version=base_version(request),
            user=request.user,
            reason=reason_of(data),
        )
        return Response({**_summary(document), "deleted": True})


class HistoryEntrySerializer(serializers.Serializer):
    version = serializers.IntegerField()
    history_id = serializers.IntegerField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    user = serializers.CharField(allow_null=True)
    date = serializers.DateTimeField()
    reason = serializers.CharField(allow_null=True)
    change_type = serializers.CharField()
    deleted = serializers.BooleanField()


def _history_entry(record: Any) -> dict[str, Any]:
    return {
        "version": record.version,
        "history_id": record.history_id,
        "sha256": record.sha256,
        "size": record.size,
        "user": username(record.history_user),
        "date": record.history_date,
        "reason": record.history_change_reason or "",
        "change_type": record.change_type,
        "deleted": record.is_deleted,
    }


def _query_version(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    version = positive_int(raw)
    if version is None:
        raise InvalidInput(f"`{name}` must be a positive version number.", field=name)
    return version


class HistoryVersionSerializer(HistoryEntrySerializer):
    path = serializers.CharField()
    body = serializers.CharField()


class DocumentHistory(ListView):
    @extend_schema(
        responses=HistoryEntrySerializer(many=True),
        description="Versions newest first. With `?version=N`, that version with its body "
        "(a HistoryVersion object instead of the page).",
        parameters=[OpenApiParameter("version", int, description="Return this version's body")],
    )
    def get(self, request: Request, tenant: str, project: str, path: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        document = document_service.document_get(
            project=access.project, path=path, include_deleted=True
        )
        version = _query_version(request, "version")
        if version is not None:
            record = document_service.document_version(document=document, version=version)
            return Response({**_history_entry(record), "path": document.path, "body": record.body})
        return self.paginate(request, selectors.document_history(document=document), _history_entry)


class DiffLineSerializer(serializers.Serializer):
    op = serializers.ChoiceField(choices=[" ", "-", "+"])
    text = serializers.CharField()
    old_number = serializers.IntegerField(allow_null=True)
    new_number = serializers.IntegerField(allow_null=True)


class DiffHunkSerializer(serializers.Serializer):
    old_start = serializers.IntegerField()
    old_lines = serializers.IntegerField()
    new_start = serializers.IntegerField()
    new_lines = serializers.IntegerField()
    lines = DiffLineSerializer(many=True)


class DiffSerializer(serializers.Serializer):
    path = serializers.CharField()
    to = serializers.IntegerField()
    diff = serializers.CharField(help_text="Unified diff text")
    hunks = DiffHunkSerializer(many=True)
    added = serializers.IntegerField()
    removed = serializers.IntegerField()

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = serializers.IntegerField()
        return fields


class DocumentDiff(APIView):
    @extend_schema(
        responses=DiffSerializer,
        parameters=[
            OpenApiParameter("from", int, required=True),
            OpenApiParameter("to", int, description="Defaults to the current version"),
        ],
    )
    def get(self, request: Request, tenant: str, project: str, path: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        document = document_service.document_get(
            project=access.project, path=path, include_deleted=True
        )
        from_version = _query_version(request, "from")
        if from_version is None:
            raise InvalidInput("`from` is required: the version to diff from.", field="from")
        to_version = _query_version(request, "to") or document.version
        old = document_service.document_version(document=document, version=from_version)
        new = document_service.document_version(document=document, version=to_version)
        diff = diff_texts(
            old.body,
            new.body,
            old_label=f"{document.path}@{from_version}",
            new_label=f"{document.path}@{to_version}",
        )
        return Response(
            {"path": document.path, "from": from_version, "to": to_version, **diff.as_dict()}
        )


class RevertSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="The version whose body becomes current")
    reason = serializers.CharField(required=False, allow_blank=True)
    base_version = serializers.IntegerField(required=False)


class LockInputSerializer(serializers.Serializer):
    ttl_seconds = serializers.IntegerField(required=False)
    force = serializers.BooleanField(required=False, help_text="Break another's lock (admins)")


class LockSerializer(serializers.Serializer):
    path = serializers.CharField()
    lock = serializers.DictField(allow_null=True)


class DocumentRevert(APIView):
    @extend_schema(request=RevertSerializer, responses=DocumentSerializer)
    def post(self, request: Request, tenant: str, project: str, path: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        data = reject_unknown_fields(request.data, {"version", "reason", "base_version"})
        validate_path(path)
        access.require_write(path)
        document = document_service.document_get(
            project=access.project, path=path, include_deleted=True
        )
        if "version" not in data:
            raise InvalidInput("`version` is required: the version to revert to.", field="version")
        raw_base = data.get("base_version")
        if raw_base is None and request.headers.get("If-Match"):
            raw_base = base_version(request)
        document = document_service.document_revert(
            document=document,
            version=data["version"],
            user=request.user,
            reason=reason_of(data),
            base_version=raw_base,
        )
        return _document_response(document)


class DocumentLock(APIView):
    def _access_and_document(self, request: Request, tenant: str, project: str, path: str):
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        validate_path(path)
        access.require_write(path)
        document = document_service.document_get(project=access.project, path=path)
        data = request.data if isinstance(request.data, dict) else {}
        reject_unknown_fields(data, {"ttl_seconds", "force"})
        force = data.get("force", False)
        if not isinstance(force, bool):
            raise InvalidInput("`force` must be true or false.", field="force")
        if force:
            access.require_admin()
        return document, data, force

    @extend_schema(request=LockInputSerializer, responses=LockSerializer)
    def post(self, request: Request, tenant: str, project: str, path: str) -> Response:
        document, data, force = self._access_and_document(request, tenant, project, path)
        document = document_service.document_lock(
            document=document, user=request.user, ttl_seconds=data.get("ttl_seconds"), force=force
        )
        return Response({"path": document.path, "lock": document_service.lock_state(document)})

    @extend_schema(request=LockInputSerializer, responses=LockSerializer)
    def delete(self, request: Request, tenant: str, project: str, path: str) -> Response:
        document, _, force = self._access_and_document(request, tenant, project, path)
        document = document_service.document_unlock(
            document=document, user=request.user, force=force
        )
        return Response({"path": document.path, "lock": None})

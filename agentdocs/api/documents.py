"""Documents: list, create, read, write, edit, delete, lock (their history, diff and
revert are `document_history`'s)."""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import request_document, request_project_access
from agentdocs.api.common import ListView, base_version, document_etag, etag_matches
from agentdocs.api.schema import (
    IF_MATCH,
    IF_NONE_MATCH,
    MERGE_CONFLICT,
    errors,
    etag_header,
)
from agentdocs.api.serializers import (
    JSONIntegerField,
    ReasonField,
    StrictBooleanField,
    StrictSerializer,
    TextField,
    VersionField,
    optional_body,
    validated,
)
from agentdocs.core import paths
from agentdocs.core.errors import LockState
from agentdocs.core.hidden_characters import count_hidden
from agentdocs.core.labels import optional_label
from agentdocs.models import Document
from agentdocs.selectors import document_locks as lock_selectors
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import labels as label_selectors
from agentdocs.services import document_locks, render_cache
from agentdocs.services import documents as document_service


class AcknowledgeSecretField(TextField):
    """The optional override of a secret refusal; the service checks its value."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", "")
        kwargs.setdefault(
            "help_text",
            "`false_positive` or `test_value`: save a text the secret check refused "
            "(needs a `reason`; recorded in history), unless the tenant set "
            "`security.secretOverride: off`.",
        )
        super().__init__(**kwargs)


class AcknowledgeHiddenField(TextField):
    """The optional override of a hidden-character refusal; the service checks its value."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", "")
        kwargs.setdefault(
            "help_text",
            "`intended`: save a text holding hidden characters (bidi controls, zero-width "
            "or tag characters) that the check refused with 422 `hidden_characters` (needs "
            "a `reason`; recorded in history), unless the tenant set "
            "`security.hiddenOverride: off`.",
        )
        super().__init__(**kwargs)


class MergeField(StrictBooleanField):
    """Whether a write based on a stale version is merged onto the current one."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", False)
        kwargs.setdefault(
            "help_text",
            "true: if the base version is stale, merge this change onto the current version "
            "(three-way, by lines) instead of answering 412; overlapping edits answer 409 "
            "`merge_conflict`. Same as `?merge=1`.",
        )
        super().__init__(**kwargs)


class BypassReviewField(StrictBooleanField):
    """Write a path `review.required` protects without a change request (tenant admins,
    with a reason; recorded in history). Without it such a write answers 409."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", False)
        kwargs.setdefault(
            "help_text",
            "Tenant admins: write a protected path (`review.required`) without review; "
            "needs a `reason`, recorded in history. Otherwise such a write answers 409 "
            "`review_required` with `propose_url`.",
        )
        super().__init__(**kwargs)


class QueryBooleanField(serializers.BooleanField):
    """A flag in the query string: 1 or true, 0 or false, and nothing else."""

    TRUE_VALUES = {"1", "true"}
    FALSE_VALUES = {"0", "false"}
    NULL_VALUES: set[str | None] = set()


class MergeQuerySerializer(serializers.Serializer):
    merge = QueryBooleanField(
        required=False,
        default=False,
        help_text="1 or true: merge a stale write (as the body's `merge`)",
        error_messages={"invalid": "`merge` must be 1, 0, true or false."},
    )

    def to_internal_value(self, data: Any) -> Any:
        # `?merge=` reads as not given.
        return super().to_internal_value({key: value for key, value in data.items() if value != ""})


def _merge_requested(request: Request, data: dict[str, Any]) -> bool:
    """`merge` in the body or `?merge=1`: either asks for a merge."""
    return bool(data["merge"]) or bool(
        validated(MergeQuerySerializer, request.query_params)["merge"]
    )


class DocumentSummarySerializer(serializers.Serializer):
    path = serializers.CharField()
    version = serializers.IntegerField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(source="updated_by.username", allow_null=True)


class DocumentSerializer(DocumentSummarySerializer):
    body = serializers.CharField()
    lock = serializers.SerializerMethodField()
    merged_with = serializers.IntegerField(
        allow_null=True,
        help_text="When this version was a stale write merged onto the version then "
        "current (`merge`): that version's number; null otherwise",
    )
    hidden_characters = serializers.SerializerMethodField(
        help_text="How many characters of the body a reader cannot see (bidi controls, "
        "zero-width or tag characters; saved with `acknowledge_hidden`)"
    )

    def get_hidden_characters(self, document: Document) -> int:
        return count_hidden(document.body)

    def get_lock(self, document: Document) -> LockState | None:
        return lock_selectors.lock_state(document)


def document_response(document: Document, *, status_code: int = 200) -> Response:
    response = Response(DocumentSerializer(document).data, status=status_code)
    response["ETag"] = document_etag(document)
    return response


def _not_modified(etag: str) -> Response:
    response = Response(status=status.HTTP_304_NOT_MODIFIED)
    response["ETag"] = etag
    return response


class DocumentListCreate(ListView):
    class QuerySerializer(serializers.Serializer):
        prefix = serializers.CharField(
            required=False,
            default="",
            allow_blank=True,
            trim_whitespace=False,
            help_text="Only paths starting with this",
        )

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "DocumentCreate"

        path = TextField()
        body = TextField()
        reason = ReasonField()
        acknowledge_secret = AcknowledgeSecretField()
        acknowledge_hidden = AcknowledgeHiddenField()
        bypass_review = BypassReviewField()

        def validate_path(self, value: str) -> str:
            return paths.validate_path(value)

    OutputSerializer = DocumentSummarySerializer

    @extend_schema(
        tags=["documents"],
        summary="List a project's documents",
        description="The project's current documents (not deleted ones), by path, paged. "
        "Readers and above; `?prefix=` keeps the paths that start with it.",
        responses={200: OutputSerializer(many=True), **errors(400, 404)},
        parameters=[QuerySerializer],
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        query = validated(self.QuerySerializer, request.query_params)
        documents = document_selectors.document_list(project=access.project, prefix=query["prefix"])
        return self.paginate(request, documents)

    @extend_schema(
        tags=["documents"],
        summary="Create a document",
        description="Writes version 1 at `path` (writers; `_vance/` paths and the `_vance` "
        "project need a tenant admin). 409 if a document exists there; 422 if the body "
        "looks like it holds a secret.",
        request=InputSerializer,
        responses={201: DocumentSerializer, **errors(400, 404, 409, 413, 422)},
        parameters=[etag_header(201)],
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        access.require_write(data["path"])
        if data["bypass_review"]:
            access.require_bypass_review()
        document = document_service.document_create(
            project=access.project, user=access.user, **data
        )
        return document_response(document, status_code=status.HTTP_201_CREATED)


class LabelQuerySerializer(serializers.Serializer):
    label = serializers.CharField(  # type: ignore[assignment]  # the wire name; shadows Field.label in the stubs
        required=False,
        default="",
        allow_blank=True,
        help_text="Read the version this label points at (`production`, `canary`, ...); "
        "404 naming `label` when the document has no such label. `latest` is the current "
        "version.",
    )

    def validate_label(self, value: str) -> str | None:
        return optional_label(value)


def _labelled(document: Document, label: str) -> Document:
    """The document as its version under ``label`` was: that version's body, number,
    sha256, writer and time, with the current lock."""
    row = label_selectors.labelled_version(document=document, name=label)
    shown = copy.copy(document)
    for name in ("body", "sha256", "size", "version", "updated_at", "merged_with"):
        setattr(shown, name, getattr(row, name))
    shown.updated_by = row.history_user
    return shown


class DocumentDetail(APIView):
    OutputSerializer = DocumentSerializer

    class WriteInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "DocumentWrite"

        body = TextField()
        reason = ReasonField()
        acknowledge_secret = AcknowledgeSecretField()
        acknowledge_hidden = AcknowledgeHiddenField()
        version = VersionField(required=False, help_text="Base version, or If-Match")
        merge = MergeField()
        bypass_review = BypassReviewField()

    class EditInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "DocumentEdit"

        old = TextField()
        new = TextField()
        reason = ReasonField()
        acknowledge_secret = AcknowledgeSecretField()
        acknowledge_hidden = AcknowledgeHiddenField()
        version = VersionField(required=False, help_text="Base version, or If-Match")
        merge = MergeField()
        bypass_review = BypassReviewField()

    class DeleteInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "DocumentDelete"

        reason = ReasonField()
        version = VersionField(required=False, help_text="Base version, or If-Match")
        bypass_review = BypassReviewField()

    class DeleteOutputSerializer(DocumentSummarySerializer):
        class Meta:
            ref_name = "DocumentDeleted"

        deleted = serializers.SerializerMethodField()

        def get_deleted(self, document: Document) -> bool:
            return True

    @extend_schema(
        tags=["documents"],
        summary="Read a document",
        description="The current version with its body, lock and ETag; with `?label=` the "
        "version that label points at (404 naming `label` when the document has none). "
        "With If-None-Match naming the current ETag, 304 and no body.",
        responses={
            200: OutputSerializer,
            304: OpenApiResponse(description="Not modified: the If-None-Match ETag is current."),
            **errors(400, 404),
        },
        parameters=[IF_NONE_MATCH, LabelQuerySerializer, etag_header(200, 304)],
    )
    def get(self, request: Request, tenant: str, project: str, path: str) -> Response:
        label = validated(LabelQuerySerializer, request.query_params)["label"]
        if label is not None:
            document = request_document(request, tenant, project, path)[1]
            shown = _labelled(document, label)
            etag = document_etag(shown)
            if etag_matches(request.headers.get("If-None-Match") or "", etag):
                return _not_modified(etag)
            return document_response(shown)
        if_none_match = request.headers.get("If-None-Match")
        if not if_none_match:
            return document_response(request_document(request, tenant, project, path)[1])
        access = request_project_access(request, tenant, project)
        paths.validate_path(path)
        # Answered from the ETag last served while no document of the tenant has changed
        # since: the access check above is the request's only database read.
        validator = render_cache.validator(
            tenant_id=access.project.tenant_id, inputs=("document", access.project.pk, path)
        )
        if validator.etag is not None and etag_matches(if_none_match, validator.etag):
            return _not_modified(validator.etag)
        document = document_selectors.document_get(project=access.project, path=path)
        etag = document_etag(document)
        validator.store(etag)
        if etag_matches(if_none_match, etag):
            return _not_modified(etag)
        return document_response(document)

    @extend_schema(
        tags=["documents"],
        summary="Replace a document's body",
        description="Writes a new version with the whole body. Name the version it is "
        "based on with If-Match (the ETag) or `version`: a stale one is refused with 412 "
        "and nothing is written, none at all with 428. With `merge` (or `?merge=1`) a stale "
        "write is merged onto the current version instead, line by line against the base "
        "version's text, and saved with the reason as a new version whose `merged_with` "
        "names the version it was merged onto; edits of the same lines answer 409 "
        "`merge_conflict` with the `conflicts` and nothing is written, a base version not "
        "in the history 412. 423 while another user holds the lock; 422 if the body looks "
        "like it holds a secret (see `acknowledge_secret`) or holds hidden characters "
        "(`hidden_characters`, see `acknowledge_hidden`).",
        request=WriteInputSerializer,
        responses={
            200: OutputSerializer,
            **errors(400, 404, 412, 413, 422, 423, 428),
            409: MERGE_CONFLICT,
        },
        parameters=[IF_MATCH, MergeQuerySerializer, etag_header(200)],
    )
    def put(self, request: Request, tenant: str, project: str, path: str) -> Response:
        serializer = self.WriteInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        _, document = request_document(
            request, tenant, project, path, intent="write", bypass_review=data["bypass_review"]
        )
        document = document_service.document_write(
            document=document,
            body=data["body"],
            base_version=base_version(request, data.get("version")),
            user=permissions.signed_in(request.user),
            reason=data["reason"],
            acknowledge_secret=data["acknowledge_secret"],
            acknowledge_hidden=data["acknowledge_hidden"],
            merge=_merge_requested(request, data),
            bypass_review=data["bypass_review"],
        ).document
        return document_response(document)

    @extend_schema(
        tags=["documents"],
        summary="Edit a document: replace one passage",
        description="Replaces the one occurrence of `old` with `new` and writes a new "
        "version (400 when `old` is not found exactly once). Base version, lock and secret "
        "check as for PUT: 412, 428, 423, 422. With `merge` (or `?merge=1`) and a stale "
        "base version, `old` is looked for in the base version's text and the edited text "
        "is merged onto the current version as for PUT (409 `merge_conflict`).",
        request=EditInputSerializer,
        responses={
            200: OutputSerializer,
            **errors(400, 404, 412, 413, 422, 423, 428),
            409: MERGE_CONFLICT,
        },
        parameters=[IF_MATCH, MergeQuerySerializer, etag_header(200)],
    )
    def patch(self, request: Request, tenant: str, project: str, path: str) -> Response:
        serializer = self.EditInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        _, document = request_document(
            request, tenant, project, path, intent="write", bypass_review=data["bypass_review"]
        )
        document = document_service.document_edit(
            document=document,
            old=data["old"],
            new=data["new"],
            base_version=base_version(request, data.get("version")),
            user=permissions.signed_in(request.user),
            reason=data["reason"],
            acknowledge_secret=data["acknowledge_secret"],
            acknowledge_hidden=data["acknowledge_hidden"],
            merge=_merge_requested(request, data),
            bypass_review=data["bypass_review"],
        )
        return document_response(document)

    @extend_schema(
        tags=["documents"],
        summary="Delete a document",
        description="Marks the document deleted; its history stays (and it can be "
        "reverted). Base version as for PUT (412, 428); 423 while another user holds the lock.",
        request=DeleteInputSerializer,
        responses={200: DeleteOutputSerializer, **errors(400, 404, 409, 412, 423, 428)},
        parameters=[IF_MATCH],
    )
    def delete(self, request: Request, tenant: str, project: str, path: str) -> Response:
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        _, document = request_document(
            request, tenant, project, path, intent="write", bypass_review=data["bypass_review"]
        )
        document = document_service.document_delete(
            document=document,
            base_version=base_version(request, data.get("version")),
            user=permissions.signed_in(request.user),
            reason=data["reason"],
            bypass_review=data["bypass_review"],
        )
        return Response(self.DeleteOutputSerializer(document).data)


class LockSerializer(serializers.Serializer):
    path = serializers.CharField()
    lock = serializers.SerializerMethodField()

    def get_lock(self, document: Document) -> LockState | None:
        return lock_selectors.lock_state(document)


class DocumentLock(APIView):
    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "LockInput"

        ttl_seconds = JSONIntegerField(
            required=False, allow_null=True, help_text="How long the lock lasts"
        )
        force = StrictBooleanField(
            required=False, default=False, help_text="Break another's lock (admins)"
        )

    OutputSerializer = LockSerializer

    def _document_and_input(self, request: Request, tenant: str, project: str, path: str):
        access, document = request_document(request, tenant, project, path, intent="write")
        serializer = self.InputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if data["force"]:
            access.require_admin()
        return document, data

    @extend_schema(
        tags=["locks"],
        summary="Lock a document",
        description="Takes (or extends) your advisory lock for `ttl_seconds` (writers): "
        "others' writes get 423 until it expires. 423 if another user holds it; `force` "
        "breaks theirs (tenant admins, else 403).",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 404, 423)},
    )
    def post(self, request: Request, tenant: str, project: str, path: str) -> Response:
        document, data = self._document_and_input(request, tenant, project, path)
        document = document_locks.document_lock(
            document=document,
            user=permissions.signed_in(request.user),
            ttl_seconds=data.get("ttl_seconds"),
            force=data["force"],
        )
        return Response(self.OutputSerializer(document).data)

    @extend_schema(
        tags=["locks"],
        summary="Unlock a document",
        description="Releases your lock. 423 if another user holds it; `force` releases "
        "theirs (tenant admins, else 403).",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 404, 423)},
    )
    def delete(self, request: Request, tenant: str, project: str, path: str) -> Response:
        document, data = self._document_and_input(request, tenant, project, path)
        document = document_locks.document_unlock(
            document=document, user=permissions.signed_in(request.user), force=data["force"]
        )
        return Response(self.OutputSerializer(document).data)

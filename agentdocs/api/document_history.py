"""A document's history: its versions (or the versions that introduced a phrase), the
diff of two versions, and the revert to one."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import request_document, request_project_access
from agentdocs.api.common import ListView, base_version
from agentdocs.api.documents import (
    AcknowledgeHiddenField,
    AcknowledgeSecretField,
    BypassReviewField,
    DocumentSerializer,
    document_response,
)
from agentdocs.api.pagination import Pagination
from agentdocs.api.schema import (
    IF_MATCH_OPTIONAL,
    errors,
    etag_header,
)
from agentdocs.api.serializers import (
    ReasonField,
    StrictSerializer,
    VersionField,
    validated,
)
from agentdocs.core.diffs import diff_texts
from agentdocs.core.errors import InvalidInput
from agentdocs.paging import LateRows
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors.search import validate_search_query
from agentdocs.services import documents as document_service


class HistoryEntrySerializer(serializers.Serializer):
    version = serializers.IntegerField()
    history_id = serializers.IntegerField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    user = serializers.CharField(source="history_user.username", allow_null=True)
    date = serializers.DateTimeField(source="history_date")
    reason = serializers.SerializerMethodField()
    change_type = serializers.CharField()
    deleted = serializers.BooleanField(source="is_deleted")
    secret_acknowledgement = serializers.CharField(
        help_text="`false_positive` or `test_value` when the writer saved a text the "
        "secret check refused; empty otherwise"
    )
    hidden_acknowledgement = serializers.CharField(
        help_text="`intended` when the writer saved a text holding hidden characters "
        "(`acknowledge_hidden`); empty otherwise"
    )
    merged_with = serializers.IntegerField(
        allow_null=True,
        help_text="When this version was a stale write merged onto the version then "
        "current: that version's number; null otherwise",
    )
    review_bypassed = serializers.BooleanField(
        help_text="A tenant admin wrote this protected path without review (`bypass_review`)"
    )
    change_request = serializers.IntegerField(
        source="change_request_id",
        allow_null=True,
        help_text="The change request this version merged, if any",
    )

    def get_reason(self, record: Any) -> str:
        return record.history_change_reason or ""


def _query_version(name: str, **kwargs: Any) -> VersionField:
    """A version in the query string; empty counts as not given."""
    return VersionField(
        required=False,
        allow_null=True,
        default=None,
        error_messages={"invalid": f"`{name}` must be a positive version number."},
        **kwargs,
    )


class _QuerySerializer(serializers.Serializer):
    def to_internal_value(self, data: Any) -> Any:
        # `?version=` reads as no version at all.
        return super().to_internal_value({key: value for key, value in data.items() if value != ""})


class HistoryPagination(Pagination):
    """The history's pages; with `?q=`, they also say how far the search went."""

    def get_paginated_response_schema(self, schema: dict) -> dict:
        paged = super().get_paginated_response_schema(schema)
        version = {"type": "integer", "nullable": True}
        paged["properties"].update(
            {
                "scan_complete": {
                    "type": "boolean",
                    "description": "With `q`: false when older versions were not searched",
                },
                "scanned": {
                    "type": "integer",
                    "description": "With `q`: how many versions' text was searched",
                },
                "newest_scanned_version": {
                    **version,
                    "description": "With `q`: the newest version searched",
                },
                "oldest_scanned_version": {
                    **version,
                    "description": "With `q`: the oldest version searched",
                },
                "scan_next": {
                    "type": "string",
                    "format": "uri",
                    "nullable": True,
                    "description": "With `q`: the URL searching the next older versions "
                    "(`before`); null when the search reached version 1",
                },
            }
        )
        return paged


class DocumentHistory(ListView):
    pagination_class = HistoryPagination

    class QuerySerializer(_QuerySerializer):
        version = _query_version("version", help_text="Return this version's body")
        q = serializers.CharField(
            required=False,
            default="",
            trim_whitespace=False,
            help_text="Only the versions that introduced this phrase: their body holds it "
            "(case-insensitive) and the version before did not",
        )
        before = _query_version(
            "before",
            help_text="With `q`: search the versions older than this one (the "
            "`oldest_scanned_version` of the answer before, as `scan_next` gives it)",
        )

    OutputSerializer = HistoryEntrySerializer

    class VersionOutputSerializer(HistoryEntrySerializer):
        class Meta:
            ref_name = "HistoryVersion"

        path = serializers.CharField()
        body = serializers.CharField()

    @extend_schema(
        tags=["history"],
        summary="List a document's versions, or read one",
        responses={200: OutputSerializer(many=True), **errors(400, 404)},
        description="Versions newest first, deleted documents included. With "
        "`?version=N`, that version with its body (a HistoryVersion object instead of the "
        "page); 404 if there is no such version. With `?q=phrase`, only the versions that "
        "introduced the phrase (its body holds it, case-insensitively, and the version "
        "before did not; the oldest one is where it first appeared); 400 naming `q` when "
        "it is longer than 200 characters or given with `version`. A search reads the "
        "bodies of at most `AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT` versions (20 by default), "
        "newest first, and the page then also holds `scan_complete` (false when older "
        "versions were not searched), `scanned` (how many were), `newest_scanned_version`, "
        "`oldest_scanned_version` and `scan_next` (the URL searching the next older "
        "versions, with `before`; null when complete).",
        parameters=[QuerySerializer],
    )
    def get(self, request: Request, tenant: str, project: str, path: str) -> Response:
        _, document = request_document(request, tenant, project, path, include_deleted=True)
        query = validated(self.QuerySerializer, request.query_params)
        version, phrase = query["version"], query["q"].strip()
        if phrase and version is not None:
            raise InvalidInput("Give `version` or `q`, not both.", field="q")
        if query["before"] is not None and not phrase:
            raise InvalidInput("`before` goes with `q`: it resumes a search.", field="before")
        if version is not None:
            record = document_selectors.document_version(document=document, version=version)
            return Response(self.VersionOutputSerializer(record).data)
        if phrase:
            phrase = validate_search_query(phrase)
            scan = document_selectors.document_history_introducing(
                document=document, phrase=phrase, before=query["before"]
            )
            response = self.paginate(request, scan.records)
            response.data.update(_scan_data(request, scan))
            return response
        return self.paginate(
            request, LateRows(document_selectors.document_history(document=document))
        )


def _scan_data(request: Request, scan: document_selectors.IntroductionScan) -> dict[str, Any]:
    """How far a bounded `?q=` search went, and the URL that goes on from there."""
    scan_next = None
    if scan.resume_before is not None:
        url = remove_query_param(request.build_absolute_uri(), "page")
        scan_next = replace_query_param(url, "before", scan.resume_before)
    return {
        "scan_complete": scan.complete,
        "scanned": scan.scanned,
        "newest_scanned_version": scan.newest_scanned,
        "oldest_scanned_version": scan.oldest_scanned,
        "scan_next": scan_next,
    }


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
    """A bounded diff (`core.diffs.Diff.as_dict`): what a document's diff, a skill file's
    and a change request's show alike."""

    diff = serializers.CharField(help_text="Unified diff text")
    hunks = DiffHunkSerializer(many=True)
    added = serializers.IntegerField(help_text="Lines added in the whole diff")
    removed = serializers.IntegerField(help_text="Lines removed in the whole diff")
    truncated = serializers.BooleanField(
        help_text="The hunks and the unified text stop before the end of a long diff"
    )
    shown_changed_lines = serializers.IntegerField(
        help_text="How many of the added and removed lines the hunks show"
    )


class FileDiffSerializer(DiffSerializer):
    """One file of a skill that differs between two bundles (`core.diffs.FileDiff`)."""

    class Meta:
        ref_name = "SkillFileDiff"

    path = serializers.CharField()
    status = serializers.ChoiceField(
        choices=["added", "removed", "modified"],
        help_text="The file is new, gone, or changed",
    )


class DocumentDiff(APIView):
    class QuerySerializer(_QuerySerializer):
        # `from` is a Python keyword, so it is added in get_fields.
        to = _query_version("to", help_text="Defaults to the current version")

        def get_fields(self) -> dict[str, serializers.Field]:
            fields = super().get_fields()
            fields["from"] = _query_version("from", help_text="The version to diff from")
            return fields

    class OutputSerializer(DiffSerializer):
        class Meta:
            ref_name = "Diff"

        path = serializers.CharField()
        to = serializers.IntegerField()

        def get_fields(self) -> dict[str, serializers.Field]:
            fields = super().get_fields()
            fields["from"] = serializers.IntegerField()
            return fields

    @extend_schema(
        tags=["history"],
        summary="Diff two versions of a document",
        description="The changes from `?from=` (required) to `?to=` (default: the current "
        "version), as unified text and as hunks; a long diff is truncated (`truncated`).",
        responses={200: OutputSerializer, **errors(400, 404)},
        parameters=[QuerySerializer],
    )
    def get(self, request: Request, tenant: str, project: str, path: str) -> Response:
        _, document = request_document(request, tenant, project, path, include_deleted=True)
        query = validated(self.QuerySerializer, request.query_params)
        from_version = query["from"]
        if from_version is None:
            raise InvalidInput("`from` is required: the version to diff from.", field="from")
        to_version = query["to"] or document.version
        old = document_selectors.document_version(document=document, version=from_version)
        new = document_selectors.document_version(document=document, version=to_version)
        diff = diff_texts(
            old.body,
            new.body,
            old_label=f"{document.path}@{from_version}",
            new_label=f"{document.path}@{to_version}",
        )
        return Response(
            self.OutputSerializer(
                {"path": document.path, "from": from_version, "to": to_version, **diff.as_dict()}
            ).data
        )


class DocumentRevert(APIView):
    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "Revert"

        version = VersionField(
            strings=False,
            help_text="The version whose body becomes current",
            error_messages={
                "required": "`version` is required: the version to revert to.",
                "invalid": "The version to revert to must be a positive integer.",
            },
        )
        reason = ReasonField()
        acknowledge_secret = AcknowledgeSecretField()
        acknowledge_hidden = AcknowledgeHiddenField()
        base_version = VersionField(
            strings=False,
            required=False,
            allow_null=True,
            error_messages={"invalid": "The base version must be a positive integer."},
        )
        bypass_review = BypassReviewField()

    OutputSerializer = DocumentSerializer

    @extend_schema(
        tags=["history"],
        summary="Revert a document to an earlier version",
        description="Writes a new version whose body is `version`'s (a deleted document "
        "comes back). With `base_version` or If-Match, refused with 412 if the document "
        "has moved on; 423 under another's lock; 422 if the old body looks like it holds "
        "a secret.",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 404, 409, 412, 413, 422, 423)},
        parameters=[IF_MATCH_OPTIONAL, etag_header(200)],
    )
    def post(self, request: Request, tenant: str, project: str, path: str) -> Response:
        access = request_project_access(request, tenant, project)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        document = permissions.document_for(
            access,
            path,
            intent="write",
            include_deleted=True,
            bypass_review=data["bypass_review"],
        )
        base = data.get("base_version")
        if base is None and request.headers.get("If-Match"):
            base = base_version(request, None)
        document = document_service.document_revert(
            document=document,
            version=data["version"],
            user=access.user,
            reason=data["reason"],
            base_version=base,
            acknowledge_secret=data["acknowledge_secret"],
            acknowledge_hidden=data["acknowledge_hidden"],
            bypass_review=data["bypass_review"],
        )
        return document_response(document)

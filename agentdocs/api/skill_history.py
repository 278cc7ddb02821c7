"""A skill's history: its versions (each the whole bundle), one version with its files,
the per-file diff of two versions, and the revert to one."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.access import request_project_access
from agentdocs.api.common import ListView, base_version
from agentdocs.api.document_history import FileDiffSerializer
from agentdocs.api.documents import BypassReviewField
from agentdocs.api.schema import IF_MATCH_OPTIONAL, errors, etag_header
from agentdocs.api.serializers import ReasonField, StrictSerializer, VersionField, validated
from agentdocs.api.skills import (
    SkillFileSerializer,
    SkillSerializer,
    skill_files,
    skill_response,
)
from agentdocs.core.diffs import bundle_diffs
from agentdocs.core.errors import InvalidInput
from agentdocs.core.skills import skill_body_warnings
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import skill_review


class SkillVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    history_id = serializers.IntegerField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    description = serializers.CharField()
    user = serializers.CharField(source="history_user.username", allow_null=True)
    date = serializers.DateTimeField(source="history_date")
    reason = serializers.SerializerMethodField()
    change_type = serializers.CharField()
    deleted = serializers.BooleanField(source="is_deleted")

    def get_reason(self, row: Any) -> str:
        return row.history_change_reason or ""


class SkillVersionDetailSerializer(SkillVersionSerializer):
    name = serializers.CharField()
    files = serializers.SerializerMethodField()
    warnings = serializers.SerializerMethodField()

    def get_files(self, row: Any) -> list[dict[str, Any]]:
        return SkillFileSerializer(skill_files(row.files), many=True).data  # type: ignore[return-value]

    def get_warnings(self, row: Any) -> list[str]:
        return skill_body_warnings(row.files)


class _QuerySerializer(serializers.Serializer):
    def to_internal_value(self, data: Any) -> Any:
        # `?to=` reads as not given.
        return super().to_internal_value({key: value for key, value in data.items() if value != ""})


def _query_version(name: str, **kwargs: Any) -> VersionField:
    return VersionField(
        required=False,
        allow_null=True,
        default=None,
        error_messages={"invalid": f"`{name}` must be a positive version number."},
        **kwargs,
    )


class SkillVersions(ListView):
    OutputSerializer = SkillVersionSerializer

    @extend_schema(
        tags=["skills"],
        summary="List a skill's versions",
        description="Every version of the skill as the project offers it (its own, else "
        "the tenant's), newest first, paged, without the files: who, when, why, what kind "
        "of change. Readers and above.",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str, project: str, name: str) -> Response:
        access = request_project_access(request, tenant, project)
        skill = skill_selectors.skill_get(project=access.project, name=name)
        return self.paginate(request, skill_selectors.skill_versions(skill=skill))


class SkillVersion(APIView):
    OutputSerializer = SkillVersionDetailSerializer

    @extend_schema(
        tags=["skills"],
        summary="Read one version of a skill with its files",
        description="The whole bundle as that version held it. 404 naming `version` when "
        "the skill has no such version.",
        responses={200: OutputSerializer, **errors(404)},
    )
    def get(self, request: Request, tenant: str, project: str, name: str, version: str) -> Response:
        access = request_project_access(request, tenant, project)
        skill = skill_selectors.skill_get(project=access.project, name=name)
        number = validated(_VersionPathSerializer, {"version": version})["version"]
        row = skill_selectors.skill_version(skill=skill, version=number)
        return Response(self.OutputSerializer(row).data)


class _VersionPathSerializer(serializers.Serializer):
    version = VersionField(error_messages={"invalid": "`version` must be a positive number."})


class SkillDiff(APIView):
    class QuerySerializer(_QuerySerializer):
        to = _query_version("to", help_text="Defaults to the current version")

        def get_fields(self) -> dict[str, serializers.Field]:
            fields = super().get_fields()
            fields["from"] = _query_version("from", help_text="The version to diff from")
            return fields

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "SkillDiff"

        name = serializers.CharField()
        to = serializers.IntegerField()
        files = FileDiffSerializer(many=True, help_text="The files that differ, by path")

        def get_fields(self) -> dict[str, serializers.Field]:
            fields = super().get_fields()
            fields["from"] = serializers.IntegerField()
            return fields

    @extend_schema(
        tags=["skills"],
        summary="Diff two versions of a skill, file by file",
        description="The files that differ from `?from=` (required) to `?to=` (default: "
        "the current version), each as unified text and hunks (a long one truncated).",
        responses={200: OutputSerializer, **errors(404)},
        parameters=[QuerySerializer],
    )
    def get(self, request: Request, tenant: str, project: str, name: str) -> Response:
        access = request_project_access(request, tenant, project)
        skill = skill_selectors.skill_get(project=access.project, name=name)
        query = validated(self.QuerySerializer, request.query_params)
        from_version = query["from"]
        if from_version is None:
            raise InvalidInput("`from` is required: the version to diff from.", field="from")
        to_version = query["to"] or skill.version
        rows = skill_selectors.skill_versions_by_number(
            skill=skill, versions=(from_version, to_version)
        )
        for number in (from_version, to_version):
            if number not in rows:
                skill_selectors.skill_version(skill=skill, version=number)  # raises NotFound
        files = bundle_diffs(
            rows[from_version].files,
            rows[to_version].files,
            old_label=f"{skill.name}@{from_version}",
            new_label=f"{skill.name}@{to_version}",
        )
        return Response(
            self.OutputSerializer(
                {
                    "name": skill.name,
                    "from": from_version,
                    "to": to_version,
                    "files": [file.as_dict() for file in files],
                }
            ).data
        )


class SkillRevert(APIView):
    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "SkillRevert"

        version = VersionField(
            strings=False,
            help_text="The version whose files become current",
            error_messages={
                "required": "`version` is required: the version to revert to.",
                "invalid": "The version to revert to must be a positive integer.",
            },
        )
        reason = ReasonField()
        base_version = VersionField(
            strings=False,
            required=False,
            allow_null=True,
            error_messages={"invalid": "The base version must be a positive integer."},
        )
        bypass_review = BypassReviewField()

    OutputSerializer = SkillSerializer

    @extend_schema(
        tags=["skills"],
        summary="Revert a skill to an earlier version",
        description="Writes a new version whose files are `version`'s (a deleted skill "
        "comes back). With `base_version` or If-Match, 412 if the skill has moved on. The "
        "old files pass today's checks (422 naming the file). 423 while another user holds "
        "the skill's lock. The project's own skill only. Under `review.required`, 409 "
        "`review_required` naming `name` with `propose_url`, for everyone: propose that "
        "version's files with `POST .../changes/` instead, or, a tenant admin, send "
        "`bypass_review` with a `reason`.",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 403, 404, 409, 412, 413, 422, 423)},
        parameters=[IF_MATCH_OPTIONAL, etag_header(200)],
    )
    def post(self, request: Request, tenant: str, project: str, name: str) -> Response:
        access = request_project_access(request, tenant, project)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        access.require_write()
        if data["bypass_review"]:
            access.require_bypass_review()
        skill = skill_selectors.own_skill_get(
            project=access.project, name=name, include_deleted=True
        )
        base = data.get("base_version")
        if base is None and request.headers.get("If-Match"):
            base = base_version(request, None)
        written = skill_review.skill_revert_request(
            skill=skill,
            version=data["version"],
            user=access.user,
            reason=data["reason"],
            base_version=base,
            bypass_review=data["bypass_review"],
        )
        return skill_response(written.skill)

"""Skills: list (a project's own and its tenant's), create, read, replace, delete
(their versions, diff and revert are `skill_history`'s)."""

from __future__ import annotations

import hashlib
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.access import request_project_access
from agentdocs.api.common import ListView, base_version, etag_matches, versioned_etag
from agentdocs.api.documents import (
    BypassReviewField,
    LabelQuerySerializer,
    MergeField,
    MergeQuerySerializer,
)
from agentdocs.api.schema import IF_MATCH, IF_NONE_MATCH, MERGE_CONFLICT, errors, etag_header
from agentdocs.api.serializers import (
    FilesField,
    ReasonField,
    StrictSerializer,
    TextField,
    VersionField,
    optional_body,
    validated,
)
from agentdocs.core.errors import LockState
from agentdocs.core.skills import skill_body_warnings
from agentdocs.models import Skill
from agentdocs.selectors import document_locks as lock_selectors
from agentdocs.selectors import skill_labels as skill_label_selectors
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import skill_review


def skill_etag(skill: Skill) -> str:
    return versioned_etag(version=skill.version, sha256=skill.sha256)


class SkillSummarySerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(help_text="The `description` of its `SKILL.md`")
    version = serializers.IntegerField()
    sha256 = serializers.CharField(help_text="Digest of the bundle: its files' paths and sha256")
    size = serializers.IntegerField(help_text="All files' UTF-8 bytes")
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(source="updated_by.username", allow_null=True)
    project = serializers.CharField(
        source="project.slug",
        help_text="The project the skill is stored in: this one, or `_vance` for the "
        "tenant's skill this project offers (no skill of the same name here replaces it)",
    )


class SkillFileSerializer(serializers.Serializer):
    path = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField(help_text="UTF-8 bytes")
    content = serializers.CharField()


def skill_files(files: dict[str, str]) -> list[dict[str, Any]]:
    """A bundle as the API shows it: each file with its digest and size, by path."""
    return [
        {
            "path": path,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "size": len(text.encode("utf-8")),
            "content": text,
        }
        for path, text in sorted(files.items())
    ]


class SkillSerializer(SkillSummarySerializer):
    files = serializers.SerializerMethodField()
    warnings = serializers.SerializerMethodField(
        help_text="The specification's recommendations `SKILL.md` misses (its body over "
        "500 lines or about 5,000 tokens): shown, never refused"
    )

    def get_files(self, skill: Skill) -> list[dict[str, Any]]:
        return SkillFileSerializer(skill_files(skill.files), many=True).data  # type: ignore[return-value]

    def get_warnings(self, skill: Skill) -> list[str]:
        return skill_body_warnings(skill.files)

    lock = serializers.SerializerMethodField(help_text="The live edit lock, or null")
    merged_with = serializers.IntegerField(
        allow_null=True,
        help_text="When this version was a stale write merged onto the version then "
        "current (`merge`): that version's number; null otherwise",
    )

    def get_lock(self, skill: Skill) -> LockState | None:
        return lock_selectors.lock_state(skill)


def skill_response(skill: Skill, *, status_code: int = 200) -> Response:
    response = Response(SkillSerializer(skill).data, status=status_code)
    response["ETag"] = skill_etag(skill)
    return response


class SkillListCreate(ListView):
    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "SkillCreate"

        name = TextField(help_text="The skill's name; `SKILL.md`'s `name` must be the same")
        files = FilesField()
        reason = ReasonField()
        bypass_review = BypassReviewField()

    OutputSerializer = SkillSummarySerializer

    @extend_schema(
        tags=["skills"],
        summary="List the skills a project offers",
        description="The project's own skills and its tenant's (from `_vance`) that no "
        "skill of the same name here replaces, by name, paged, without their files. "
        "Readers and above.",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        return self.paginate(request, skill_selectors.skill_list(project=access.project))

    @extend_schema(
        tags=["skills"],
        summary="Create a skill",
        description="Writes version 1 of the skill `name` with its files (writers; in the "
        "`_vance` project, tenant admins). 409 if the project has a skill of that name; "
        "422 naming the file (`files/<path>`, and `#<field>` for `SKILL.md`'s frontmatter) "
        "when the bundle breaks the Agent Skills specification (`invalid_skill`), holds a "
        "binary file (`binary_file`), a secret or hidden characters; 413 over "
        "`AGENTDOCS_SKILL_MAX_FILE_BYTES` or `AGENTDOCS_SKILL_MAX_BYTES`. "
        "`review.required` protecting the skill (its path is `skills/<name>`) answers 409 "
        "`review_required` naming `name` with `propose_url`, for everyone: propose the "
        "files with `POST .../changes/` (`{skill, files, base_version, reason}`) instead, "
        "or, a tenant admin, send `bypass_review` with a `reason`.",
        request=InputSerializer,
        responses={201: SkillSerializer, **errors(400, 403, 404, 409, 413, 422)},
        parameters=[etag_header(201)],
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        access.require_write()
        if serializer.validated_data["bypass_review"]:
            access.require_bypass_review()
        written = skill_review.skill_create_request(
            project=access.project, user=access.user, **serializer.validated_data
        )
        return skill_response(written.skill, status_code=status.HTTP_201_CREATED)


class SkillDetail(APIView):
    OutputSerializer = SkillSerializer

    class WriteInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "SkillWrite"

        files = FilesField()
        reason = ReasonField()
        version = VersionField(required=False, help_text="Base version, or If-Match")
        merge = MergeField(
            help_text="true: if the base version is stale, merge these files onto the "
            "current version (three-way, file by file, by lines) instead of answering 412; "
            "overlapping edits answer 409 `merge_conflict`. Same as `?merge=1`."
        )
        bypass_review = BypassReviewField()

    class DeleteInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "SkillDelete"

        reason = ReasonField()
        version = VersionField(required=False, help_text="Base version, or If-Match")
        bypass_review = BypassReviewField()

    class DeleteOutputSerializer(SkillSummarySerializer):
        class Meta:
            ref_name = "SkillDeleted"

        deleted = serializers.SerializerMethodField()

        def get_deleted(self, skill: Skill) -> bool:
            return True

    @extend_schema(
        tags=["skills"],
        summary="Read a skill with its files",
        description="The skill as the project offers it (its own, else its tenant's from "
        "`_vance`: `project` says which) with every file, its ETag and the "
        "specification's `warnings`; with `?label=` the version that label points at, its "
        "files from the skill's history (404 naming `label` when the skill has none). "
        "With If-None-Match naming the current ETag, 304.",
        responses={
            200: OutputSerializer,
            304: OpenApiResponse(description="Not modified: the If-None-Match ETag is current."),
            **errors(400, 404),
        },
        parameters=[IF_NONE_MATCH, LabelQuerySerializer, etag_header(200, 304)],
    )
    def get(self, request: Request, tenant: str, project: str, name: str) -> Response:
        label = validated(LabelQuerySerializer, request.query_params)["label"]
        access = request_project_access(request, tenant, project)
        skill = skill_selectors.skill_get(project=access.project, name=name)
        if label is not None:
            skill = skill_label_selectors.skill_labelled(skill=skill, name=label)
        etag = skill_etag(skill)
        if etag_matches(request.headers.get("If-None-Match"), etag):
            response = Response(status=status.HTTP_304_NOT_MODIFIED)
            response["ETag"] = etag
            return response
        return skill_response(skill)

    @extend_schema(
        tags=["skills"],
        summary="Replace a skill's files",
        description="Writes a new version of the whole skill with the files given (the "
        "whole set: a file left out is removed). Name the version it is based on with "
        "If-Match (the ETag) or `version`: a stale one is 412 and nothing is written, none "
        "at all 428. With `merge` (or `?merge=1`) a stale write is merged onto the current "
        "version instead, file by file against the base version's files (a file only one "
        "side changed takes that side's; a file both edited is merged by lines), and saved "
        "as a new version whose `merged_with` names the version it was merged onto; edits "
        "of the same lines, or a file one side removed and the other changed, answer 409 "
        "`merge_conflict` with the `conflicts` (each naming its file's `path`) and nothing "
        "is written. 423 while another user holds the skill's lock. The project's own "
        "skill only (a tenant skill is written in `_vance`, by tenant admins). Refusals as "
        "for create: 422 naming the file, 413 over a cap. "
        "`review.required` protecting the skill (its path is `skills/<name>`) answers 409 "
        "`review_required` naming `name` with `propose_url`, for everyone: propose the "
        "files with `POST .../changes/` (`{skill, files, base_version, reason}`) instead, "
        "or, a tenant admin, send `bypass_review` with a `reason`."
        " (merging the change request writes the version, three-way, file by file).",
        request=WriteInputSerializer,
        responses={
            200: OutputSerializer,
            **errors(400, 403, 404, 412, 413, 422, 423, 428),
            409: MERGE_CONFLICT,
        },
        parameters=[IF_MATCH, MergeQuerySerializer, etag_header(200)],
    )
    def put(self, request: Request, tenant: str, project: str, name: str) -> Response:
        access = request_project_access(request, tenant, project)
        serializer = self.WriteInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        access.require_write()
        if data["bypass_review"]:
            access.require_bypass_review()
        skill = skill_selectors.own_skill_get(project=access.project, name=name)
        written = skill_review.skill_write_request(
            skill=skill,
            files=data["files"],
            base_version=base_version(request, data.get("version")),
            user=access.user,
            reason=data["reason"],
            merge=bool(data["merge"])
            or bool(validated(MergeQuerySerializer, request.query_params)["merge"]),
            bypass_review=data["bypass_review"],
        )
        return skill_response(written.skill)

    @extend_schema(
        tags=["skills"],
        summary="Delete a skill",
        description="Marks the skill deleted as a new version; its history stays and it "
        "can be reverted. Base version as for PUT (412, 428). A deleted project skill no "
        "longer replaces the tenant's of the same name. 423 while another user holds the "
        "skill's lock. Under `review.required`, 409 `review_required` naming `name` (a "
        "deletion is not proposed), unless a tenant admin sends `bypass_review` with a "
        "`reason`.",
        request=DeleteInputSerializer,
        responses={200: DeleteOutputSerializer, **errors(400, 403, 404, 409, 412, 423, 428)},
        parameters=[IF_MATCH],
    )
    def delete(self, request: Request, tenant: str, project: str, name: str) -> Response:
        access = request_project_access(request, tenant, project)
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        access.require_write()
        if data["bypass_review"]:
            access.require_bypass_review()
        skill = skill_selectors.own_skill_get(project=access.project, name=name)
        skill = skill_review.skill_delete_request(
            skill=skill,
            base_version=base_version(request, data.get("version")),
            user=access.user,
            reason=data["reason"],
            bypass_review=data["bypass_review"],
        )
        return Response(self.DeleteOutputSerializer(skill).data)

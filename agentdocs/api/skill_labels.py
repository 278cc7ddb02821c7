"""Labels of a skill's versions: list them (paged), read, move (`PUT`) and remove
(`DELETE`) one, as a document's (`api.labels`).

`latest` is implicit (the newest version): listed, never moved. Moving or removing is
writing the project's skills (tenant admins in `_vance`); a label
`review.protectedLabels` names (default `production`) is moved and removed by
reviewers (tenant admins) only; under `review.required` a move or removal by a member
who may not bypass review opens a change request (202), as a document's label's. Reads
see the skill the project offers (its own, else
its tenant's); moves change the project's own skill, as writes do. A skill carries at
most `AGENTDOCS_MAX_LABELS_PER_DOCUMENT` labels (409 `too_many_labels` past it).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import request_project_access
from agentdocs.api.changes import ChangeSerializer
from agentdocs.api.common import ListView
from agentdocs.api.labels import (
    LABEL_PARAMETER,
    PAGE_PARAMETER,
    PAGE_SIZE_PARAMETER,
    LabelFieldsSerializer,
    LatestFieldsSerializer,
    label_moved_response,
    label_removed_response,
    labels_page,
    latest_entry,
)
from agentdocs.api.schema import errors
from agentdocs.api.serializers import ReasonField, StrictSerializer, VersionField, optional_body
from agentdocs.core.labels import LATEST, validate_label_name
from agentdocs.models import Skill
from agentdocs.selectors import skill_labels as skill_label_selectors
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import label_review


class SkillLabelSerializer(LabelFieldsSerializer):
    class Meta:
        ref_name = "SkillLabel"

    skill = serializers.CharField(source="skill.name", help_text="The skill's name")


class SkillLatestSerializer(LatestFieldsSerializer):
    class Meta:
        ref_name = "SkillLabelLatest"

    skill = serializers.CharField()


class SkillLabelListSerializer(serializers.Serializer):
    class Meta:
        ref_name = "SkillLabels"

    skill = serializers.CharField()
    project = serializers.CharField(
        help_text="The project the skill is stored in: this one, or `_vance`"
    )
    latest = SkillLatestSerializer(help_text="The implicit label: the newest version")
    labels = SkillLabelSerializer(many=True, help_text="The named labels of this page, by name")
    count = serializers.IntegerField(help_text="How many entries the list holds, `latest` too")
    count_exact = serializers.BooleanField(help_text="As every paged list's")
    next = serializers.URLField(allow_null=True, help_text="The next page, or null")
    previous = serializers.URLField(allow_null=True, help_text="The previous page, or null")
    results = SkillLabelSerializer(
        many=True,
        help_text="This page of every label: `latest` first (on the first page), then the "
        "named labels by name",
    )


def _latest(skill: Skill) -> dict[str, Any]:
    return latest_entry(skill, skill=skill.name)


class SkillLabelList(ListView):
    OutputSerializer = SkillLabelListSerializer

    @extend_schema(
        tags=["skills"],
        summary="List a skill's labels",
        operation_id="skill_labels_list",
        description="`latest` (the current version) and every named label of the skill "
        "as the project offers it (its own, else its tenant's) with the version it points "
        "at and who moved it last, when and why, paged as every list: `results` holds "
        "`latest` first, then the named labels by name; `labels` the page's named labels. "
        "Readers and above.",
        responses={200: OutputSerializer, **errors(400, 404)},
        parameters=[PAGE_PARAMETER, PAGE_SIZE_PARAMETER],
    )
    def get(self, request: Request, tenant: str, project: str, name: str) -> Response:
        access = request_project_access(request, tenant, project)
        skill = skill_selectors.skill_get(project=access.project, name=name)
        page = labels_page(
            self,
            request,
            latest=SkillLatestSerializer(_latest(skill)).data,
            rows=skill_label_selectors.skill_label_rows(skill=skill),
            serializer=SkillLabelSerializer,
        )
        return Response({"skill": skill.name, "project": skill.project.slug, **page})


class SkillLabelDetail(APIView):
    OutputSerializer = SkillLabelSerializer

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "SkillLabelMove"

        version = VersionField(help_text="The version the label is to point at")
        reason = ReasonField()

    class DeleteInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "SkillLabelRemove"

        reason = ReasonField()

    def _movable(self, request: Request, tenant: str, project: str, name: str, label: str):
        access = request_project_access(request, tenant, project)
        skill = skill_selectors.own_skill_get(project=access.project, name=name)
        return access, skill, permissions.movable_skill_label_for(access, label)

    @extend_schema(
        tags=["skills"],
        summary="Read one label of a skill",
        operation_id="skill_label_retrieve",
        description="The version the label points at, who moved it last, when and why "
        "(`latest`: the current version). Readers and above; 404 naming `label` when the "
        "skill has no such label.",
        responses={200: OutputSerializer, **errors(400, 404)},
        parameters=[LABEL_PARAMETER],
    )
    def get(self, request: Request, tenant: str, project: str, name: str, label: str) -> Response:
        access = request_project_access(request, tenant, project)
        skill = skill_selectors.skill_get(project=access.project, name=name)
        checked = validate_label_name(label, field="label")
        if checked == LATEST:
            return Response(SkillLatestSerializer(_latest(skill)).data)
        found = skill_label_selectors.skill_label_get(skill=skill, name=checked)
        return Response(self.OutputSerializer(found).data)

    @extend_schema(
        tags=["skills"],
        summary="Move a skill's label to a version",
        operation_id="skill_label_update",
        description="Points the label at `version` of the project's own skill: 201 when "
        "the label is new, 200 when it moved. Writers (tenant admins in `_vance`, else 403); "
        "a label `review.protectedLabels` names (default `production`) only reviewers "
        "(tenant admins), else 403 naming `label`. `latest` or a name that is not a slug: "
        "400 naming `label`; a version the skill never had: 404 naming `version`, a "
        "deletion 400. A new label on a skill that carries "
        "`AGENTDOCS_MAX_LABELS_PER_DOCUMENT` (default 50) is 409 `too_many_labels`. Under "
        "`review.required` (the skill's path is `skills/<name>`), a move by a member who may "
        "not bypass review opens a change request naming the label and answers 202 with "
        "it; merging it moves the label.",
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            201: OutputSerializer,
            202: ChangeSerializer,
            **errors(400, 404, 409),
        },
        parameters=[LABEL_PARAMETER],
    )
    def put(self, request: Request, tenant: str, project: str, name: str, label: str) -> Response:
        access, skill, checked = self._movable(request, tenant, project, name, label)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        done = label_review.label_request(
            skill=skill,
            name=checked,
            version=data["version"],
            user=access.user,
            reason=data["reason"],
            may_bypass_review=access.may_bypass_review,
        )
        return label_moved_response(request, done, self.OutputSerializer)

    @extend_schema(
        tags=["skills"],
        summary="Remove a skill's label",
        operation_id="skill_label_destroy",
        description="Readers asking for the label get `latest` again. Rights as for a move "
        "(writers; a protected label only reviewers, else 403 naming `label`; in `_vance` "
        "only tenant admins); 404 naming `label` when the skill has no such label. Under "
        "`review.required`, a removal by a member who may not bypass review opens a change "
        "request naming the label with `label_action` `remove` and answers 202 with it.",
        request=DeleteInputSerializer,
        responses={204: None, 202: ChangeSerializer, **errors(400, 404)},
        parameters=[LABEL_PARAMETER],
    )
    def delete(
        self, request: Request, tenant: str, project: str, name: str, label: str
    ) -> Response:
        access, skill, checked = self._movable(request, tenant, project, name, label)
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        proposed = label_review.label_remove_request(
            skill=skill,
            name=checked,
            user=access.user,
            reason=serializer.validated_data["reason"],
            may_bypass_review=access.may_bypass_review,
        )
        return label_removed_response(request, proposed)

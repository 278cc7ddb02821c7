"""Labels of a skill's versions: list them (paged), read, move (`PUT`) and remove
(`DELETE`) one, as a document's (`api.labels`).

`latest` is implicit (the newest version): listed, never moved. Moving or removing is
writing the project's skills (tenant admins in `_vance`); a label
`review.protectedLabels` names (default `production`) is moved and removed by
reviewers (tenant admins) only. Reads see the skill the project offers (its own, else
its tenant's); moves change the project's own skill, as writes do. A skill carries at
most `AGENTDOCS_MAX_LABELS_PER_DOCUMENT` labels (409 `too_many_labels` past it).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import request_project_access
from agentdocs.api.common import ListView
from agentdocs.api.labels import PAGE_PARAMETER, PAGE_SIZE_PARAMETER
from agentdocs.api.schema import errors
from agentdocs.api.serializers import ReasonField, StrictSerializer, VersionField, optional_body
from agentdocs.core.labels import LATEST, validate_label_name
from agentdocs.models import Skill
from agentdocs.paging import Prepended
from agentdocs.selectors import skill_labels as skill_label_selectors
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import skill_labels as skill_label_service


class SkillLabelSerializer(serializers.Serializer):
    class Meta:
        ref_name = "SkillLabel"

    # `label` is also a Field attribute (its title) to the type checker, not to DRF.
    label = serializers.CharField(  # type: ignore[assignment]
        source="name", help_text="The label's name (a slug)"
    )
    name = serializers.CharField(help_text="Same as `label`")
    skill = serializers.CharField(source="skill.name", help_text="The skill's name")
    version = serializers.IntegerField(help_text="The version the label points at")
    moved_by = serializers.CharField(
        source="moved_by.username", allow_null=True, help_text="Who moved it last"
    )
    moved_at = serializers.DateTimeField(help_text="When it was moved last")
    reason = serializers.CharField(
        allow_null=True, help_text="Why, as the mover said (null for `latest`)"
    )


class SkillLatestSerializer(serializers.Serializer):
    class Meta:
        ref_name = "SkillLabelLatest"

    label = serializers.CharField(help_text="`latest`")  # type: ignore[assignment]
    name = serializers.CharField(help_text="Same as `label`")
    skill = serializers.CharField()
    version = serializers.IntegerField(help_text="The skill's current version")
    moved_by = serializers.CharField(allow_null=True, help_text="Who wrote the current version")
    moved_at = serializers.DateTimeField(help_text="When the current version was written")
    reason = serializers.CharField(allow_null=True, help_text="Always null: latest moves itself")


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
    return {
        "label": LATEST,
        "name": LATEST,
        "skill": skill.name,
        "version": skill.version,
        "moved_by": skill.updated_by.username if skill.updated_by else None,
        "moved_at": skill.updated_at,
        "reason": None,
    }


LABEL_PARAMETER = OpenApiParameter(
    "label",
    str,
    OpenApiParameter.PATH,
    description="The label's name: a slug (lowercase letters, digits, hyphens), not `latest`",
)


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
        latest = SkillLatestSerializer(_latest(skill)).data
        rows = Prepended([latest], skill_label_selectors.skill_label_rows(skill=skill))
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        labels = SkillLabelSerializer([row for row in page if row is not latest], many=True).data
        paged = paginator.get_paginated_response(
            [latest, *labels] if page and page[0] is latest else list(labels)
        )
        body = {
            "skill": skill.name,
            "project": skill.project.slug,
            "latest": latest,
            "labels": labels,
            **paged.data,
        }
        return Response(body)


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
        "`AGENTDOCS_MAX_LABELS_PER_DOCUMENT` (default 50) is 409 `too_many_labels`. Moves "
        "do not go through change requests (skills have none yet).",
        request=InputSerializer,
        responses={200: OutputSerializer, 201: OutputSerializer, **errors(400, 404, 409)},
        parameters=[LABEL_PARAMETER],
    )
    def put(self, request: Request, tenant: str, project: str, name: str, label: str) -> Response:
        access, skill, checked = self._movable(request, tenant, project, name, label)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        done = skill_label_service.skill_label_move(
            skill=skill,
            name=checked,
            version=data["version"],
            user=access.user,
            reason=data["reason"],
        )
        code = status.HTTP_201_CREATED if done.created else status.HTTP_200_OK
        return Response(self.OutputSerializer(done.label).data, status=code)

    @extend_schema(
        tags=["skills"],
        summary="Remove a skill's label",
        operation_id="skill_label_destroy",
        description="Readers asking for the label get `latest` again. Rights as for a move "
        "(writers; a protected label only reviewers, else 403 naming `label`; in `_vance` "
        "only tenant admins); 404 naming `label` when the skill has no such label.",
        request=DeleteInputSerializer,
        responses={204: None, **errors(400, 404)},
        parameters=[LABEL_PARAMETER],
    )
    def delete(
        self, request: Request, tenant: str, project: str, name: str, label: str
    ) -> Response:
        access, skill, checked = self._movable(request, tenant, project, name, label)
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        skill_label_service.skill_label_remove(
            skill=skill, name=checked, user=access.user, reason=serializer.validated_data["reason"]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

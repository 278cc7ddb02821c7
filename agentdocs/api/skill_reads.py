"""`POST .../skills/{name}/reads`: a process reads a skill, and the read is recorded.

The skill as `GET .../skills/{name}` answers it (the project's own, else its tenant's),
with `record`: the binding record of ``process`` that keeps what was read
(`agentdocs.services.skill_reads`). What `agentdocs mcp`'s `read_skill` calls when the
agent names its process; the web app's `/mcp/` calls the same service.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import ratelimit
from agentdocs.api.access import caller, request_project_access
from agentdocs.api.memory_block import process_field
from agentdocs.api.schema import errors
from agentdocs.api.serializers import StrictSerializer
from agentdocs.api.skills import SkillSerializer
from agentdocs.core.labels import optional_label
from agentdocs.models import Scope, Skill
from agentdocs.selectors import skill_labels as skill_label_selectors
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import skill_reads as skill_read_service
from agentdocs.validation import memory_block as memory_block_checks


class SkillReadSerializer(SkillSerializer):
    record = serializers.SerializerMethodField(
        help_text="The binding record of the process that keeps the read"
    )

    def get_record(self, skill: Skill) -> int:
        return int(self.context["record"])


class SkillReadCreate(APIView):
    # Recording a read is binding, which a run's `render` token may do.
    required_scopes = {"POST": Scope.RENDER}

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "SkillReadInput"

        process = process_field("`process` is required: the id of the process reading.")
        label = serializers.CharField(  # type: ignore[assignment]  # the wire name
            required=False,
            default="",
            allow_blank=True,
            help_text="Read by this label (`canary`, ...), as a render reads: the labelled "
            "version's files where the skill has the label, else its latest; the record "
            "keeps the label (null when it had none). Not given: latest.",
        )

        def validate_label(self, value: str) -> str | None:
            return optional_label(value)

    OutputSerializer = SkillReadSerializer

    @extend_schema(
        tags=["skills"],
        summary="Read a skill for a process, recorded",
        description="The skill the project offers (its own, else its tenant's) with every "
        "file, and a binding record of `process` whose `skills` keeps its version and each "
        "file's sha256, so `reconstruct` restores the exact files later. With `label`, the "
        "version that label points at (else latest, recorded with a null `label`).",
        request=InputSerializer,
        responses={201: OutputSerializer, **errors(400, 404, 422, 429)},
    )
    def post(self, request: Request, tenant: str, project: str, name: str) -> Response:
        access = request_project_access(request, tenant, project)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        process = memory_block_checks.validate_process(serializer.validated_data["process"])
        read = skill_label_selectors.skills_by_label(
            skills=[skill_selectors.skill_get(project=access.project, name=name)],
            label=serializer.validated_data["label"],
        )[0]
        skill = read.skill
        ratelimit.check("bind", caller(request), ("bind_user", ratelimit.user_key(access.user.pk)))
        record = skill_read_service.skill_read_record(
            tenant=access.tenant,
            project=access.project,
            user=access.user,
            process=process,
            skill=skill,
            label=read.label,
        )
        data: dict[str, Any] = SkillReadSerializer(skill, context={"record": record.pk}).data
        return Response(data, status=201)

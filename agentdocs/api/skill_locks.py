"""A skill's edit lock: take or renew it (`POST`), release or break it (`DELETE`), as a
document's (`api.documents.DocumentLock`)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.access import request_project_access
from agentdocs.api.documents import DocumentLock
from agentdocs.api.schema import errors
from agentdocs.api.serializers import optional_body
from agentdocs.core.errors import LockState
from agentdocs.models import Skill
from agentdocs.selectors import document_locks as lock_selectors
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import skill_locks


class SkillLockSerializer(serializers.Serializer):
    name = serializers.CharField()
    lock = serializers.SerializerMethodField()

    def get_lock(self, skill: Skill) -> LockState | None:
        return lock_selectors.lock_state(skill)


class SkillLock(APIView):
    InputSerializer = DocumentLock.InputSerializer
    OutputSerializer = SkillLockSerializer

    def _skill_and_input(
        self, request: Request, tenant: str, project: str, name: str
    ) -> tuple[Any, Skill, dict[str, Any]]:
        access = request_project_access(request, tenant, project)
        skill = skill_selectors.own_skill_get(project=access.project, name=name)
        access.require_write()
        serializer = self.InputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if data["force"]:
            access.require_admin()
        return access, skill, data

    @extend_schema(
        tags=["locks"],
        summary="Lock a skill",
        description="Takes (or extends) your advisory lock of the project's own skill for "
        "`ttl_seconds` (writers; tenant admins in `_vance`): others' writes, deletes and "
        "reverts get 423 until it expires. 423 if another user holds it; `force` breaks "
        "theirs (tenant admins, else 403).",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 404, 423)},
    )
    def post(self, request: Request, tenant: str, project: str, name: str) -> Response:
        access, skill, data = self._skill_and_input(request, tenant, project, name)
        skill = skill_locks.skill_lock(
            skill=skill, user=access.user, ttl_seconds=data.get("ttl_seconds"), force=data["force"]
        )
        return Response(self.OutputSerializer(skill).data)

    @extend_schema(
        tags=["locks"],
        summary="Unlock a skill",
        description="Releases your lock. 423 if another user holds it; `force` releases "
        "theirs (tenant admins, else 403).",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 404, 423)},
    )
    def delete(self, request: Request, tenant: str, project: str, name: str) -> Response:
        access, skill, data = self._skill_and_input(request, tenant, project, name)
        skill = skill_locks.skill_unlock(skill=skill, user=access.user, force=data["force"])
        return Response(self.OutputSerializer(skill).data)

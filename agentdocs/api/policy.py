"""`memory.*` settings at tenant and project scope, and recipes. Admins write, members read."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import prefetched_access
from agentdocs.api.common import ListView
from agentdocs.api.serializers import (
    ReasonField,
    StrictBooleanField,
    StrictSerializer,
    TextField,
    optional_body,
)
from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.models import Recipe, Setting
from agentdocs.permissions import Access
from agentdocs.selectors import policy as policy_selectors
from agentdocs.services import policy as policy_service


class SettingSerializer(serializers.Serializer):
    key = serializers.CharField()
    value = serializers.CharField()
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(source="updated_by.username", allow_null=True)
    enforced = serializers.BooleanField(required=False, help_text="Tenant settings only.")

    def to_representation(self, setting: Setting) -> dict[str, Any]:
        data = super().to_representation(setting)
        if setting.project_id is not None:
            # A project setting cannot be enforced, so it does not say either way.
            data.pop("enforced")
        return data


class RecipeSerializer(serializers.Serializer):
    name = serializers.CharField()
    params = serializers.JSONField()
    profiles = serializers.JSONField()
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(source="updated_by.username", allow_null=True)


class _ReasonInputSerializer(StrictSerializer):
    reason = ReasonField()


class _SettingViews(ListView):
    """Shared by tenant scope (project None) and project scope."""

    project_scope = False

    def _access(self, request: Request, tenant: str, project: str | None) -> Access:
        if self.project_scope:
            assert project is not None  # the project routes always capture it
            return permissions.project_access(
                request.user, tenant, project, prefetched=prefetched_access(request)
            )
        return permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )


class _SettingList(_SettingViews):
    OutputSerializer = SettingSerializer

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, tenant: str, project: str | None = None) -> Response:
        access = self._access(request, tenant, project)
        settings = policy_selectors.setting_list(tenant=access.tenant, project=access.project)
        return self.paginate(request, settings)


class _SettingDetail(_SettingViews):
    pagination_class = None  # type: ignore[assignment]  # one setting: nothing to page
    OutputSerializer = SettingSerializer
    PutInputSerializer: type[StrictSerializer]

    class DeleteInputSerializer(_ReasonInputSerializer):
        class Meta:
            ref_name = "SettingDelete"

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, tenant: str, key: str, project: str | None = None) -> Response:
        access = self._access(request, tenant, project)
        policy_service.validate_setting_key(key)
        setting = (
            policy_selectors.setting_list(tenant=access.tenant, project=access.project)
            .filter(key=key)
            .first()
        )
        if setting is None:
            raise NotFound(f"No setting {key!r} here.", field="key")
        return Response(self.OutputSerializer(setting).data)

    def put(self, request: Request, tenant: str, key: str, project: str | None = None) -> Response:
        access = self._access(request, tenant, project)
        access.require_admin()
        serializer = self.PutInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        setting, created = policy_service.setting_set(
            tenant=access.tenant,
            project=access.project,
            key=key,
            user=access.user,
            **serializer.validated_data,
        )
        return Response(
            self.OutputSerializer(setting).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(request=DeleteInputSerializer, responses={204: None})
    def delete(
        self, request: Request, tenant: str, key: str, project: str | None = None
    ) -> Response:
        access = self._access(request, tenant, project)
        access.require_admin()
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        policy_service.setting_delete(
            tenant=access.tenant,
            project=access.project,
            key=key,
            user=access.user,
            **serializer.validated_data,
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProjectSettingInputSerializer(StrictSerializer):
    class Meta:
        ref_name = "ProjectSettingInput"

    value = TextField()
    reason = ReasonField()


class TenantSettingInputSerializer(ProjectSettingInputSerializer):
    class Meta:
        ref_name = "TenantSettingInput"

    enforced = StrictBooleanField(required=False, default=False, help_text="Enforce on projects")


_SETTING_PUT = {200: SettingSerializer, 201: SettingSerializer}


class TenantSettingList(_SettingList):
    pass


class TenantSettingDetail(_SettingDetail):
    PutInputSerializer = TenantSettingInputSerializer

    @extend_schema(request=PutInputSerializer, responses=_SETTING_PUT)
    def put(self, request: Request, tenant: str, key: str, project: str | None = None) -> Response:
        return super().put(request, tenant, key, project)


class ProjectSettingList(_SettingList):
    project_scope = True


class ProjectSettingDetail(_SettingDetail):
    project_scope = True
    PutInputSerializer = ProjectSettingInputSerializer

    @extend_schema(request=PutInputSerializer, responses=_SETTING_PUT)
    def put(self, request: Request, tenant: str, key: str, project: str | None = None) -> Response:
        return super().put(request, tenant, key, project)


def _recipe_or_404(access: Access, name: str) -> Recipe:
    recipe = policy_selectors.recipe_list(tenant=access.tenant).filter(name=name).first()
    if recipe is None:
        raise NotFound(f"No recipe {name!r} in this tenant.", field="recipe")
    return recipe


class _RecipeInputSerializer(StrictSerializer):
    # What params and profiles may hold is the policy service's rule, shared with the pages.
    params = serializers.JSONField(required=False, default=dict)
    profiles = serializers.JSONField(required=False, default=dict)
    reason = ReasonField()


class RecipeListCreate(ListView):
    class InputSerializer(_RecipeInputSerializer):
        class Meta:
            ref_name = "RecipeCreate"

        name = TextField()

    OutputSerializer = RecipeSerializer

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, tenant: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        return self.paginate(request, policy_selectors.recipe_list(tenant=access.tenant))

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request: Request, tenant: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        recipe = policy_service.recipe_create(
            tenant=access.tenant, user=access.user, **serializer.validated_data
        )
        return Response(self.OutputSerializer(recipe).data, status=status.HTTP_201_CREATED)


class RecipeDetail(APIView):
    class PutInputSerializer(_RecipeInputSerializer):
        class Meta:
            ref_name = "RecipeUpdate"

        name = TextField(required=False, help_text="The recipe's name, if given; never changed.")

    class DeleteInputSerializer(_ReasonInputSerializer):
        class Meta:
            ref_name = "RecipeDelete"

    OutputSerializer = RecipeSerializer

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, tenant: str, name: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        return Response(self.OutputSerializer(_recipe_or_404(access, name)).data)

    @extend_schema(request=PutInputSerializer, responses=OutputSerializer)
    def put(self, request: Request, tenant: str, name: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        serializer = self.PutInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if data.pop("name", name) != name:
            raise InvalidInput("A recipe cannot be renamed; create a new one.", field="name")
        recipe = policy_service.recipe_update(
            recipe=_recipe_or_404(access, name), user=access.user, **data
        )
        return Response(self.OutputSerializer(recipe).data)

    @extend_schema(request=DeleteInputSerializer, responses={204: None})
    def delete(self, request: Request, tenant: str, name: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        policy_service.recipe_delete(
            recipe=_recipe_or_404(access, name), user=access.user, **serializer.validated_data
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

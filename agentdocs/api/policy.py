"""`memory.*` settings at tenant and project scope, and recipes. Admins write, members read."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions, selectors
from agentdocs.api.access import prefetched_access
from agentdocs.api.common import ListView, reason_of, reject_unknown_fields, username
from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.models import Recipe, Setting
from agentdocs.permissions import Access
from agentdocs.services import policy as policy_service


def _setting(setting: Setting) -> dict[str, Any]:
    data = {
        "key": setting.key,
        "value": setting.value,
        "updated_at": setting.updated_at,
        "updated_by": username(setting.updated_by),
    }
    if setting.project_id is None:
        data["enforced"] = setting.enforced
    return data


def _recipe(recipe: Recipe) -> dict[str, Any]:
    return {
        "name": recipe.name,
        "params": recipe.params,
        "profiles": recipe.profiles,
        "updated_at": recipe.updated_at,
        "updated_by": username(recipe.updated_by),
    }


class SettingInputSerializer(serializers.Serializer):
    value = serializers.CharField(allow_blank=True)
    enforced = serializers.BooleanField(required=False, help_text="Tenant settings only.")
    reason = serializers.CharField(required=False)


class SettingSerializer(serializers.Serializer):
    key = serializers.CharField()
    value = serializers.CharField()
    enforced = serializers.BooleanField(required=False, help_text="Tenant settings only.")
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(allow_null=True)


class RecipeSerializer(serializers.Serializer):
    name = serializers.CharField()
    params = serializers.JSONField()
    profiles = serializers.JSONField()
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(allow_null=True)


class _SettingViews(ListView):
    """Shared by tenant scope (project None) and project scope."""

    project_scope = False

    def _access(self, request: Request, tenant: str, project: str | None) -> Access:
        if self.project_scope:
            return permissions.project_access(
                request.user, tenant, project, prefetched=prefetched_access(request)
            )
        return permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )


class _SettingList(_SettingViews):
    @extend_schema(responses=SettingSerializer(many=True))
    def get(self, request: Request, tenant: str, project: str | None = None) -> Response:
        access = self._access(request, tenant, project)
        settings = selectors.setting_list(tenant=access.tenant, project=access.project)
        return self.paginate(request, settings, _setting)


class _SettingDetail(_SettingViews):
    pagination_class = None

    @extend_schema(responses=SettingSerializer)
    def get(self, request: Request, tenant: str, key: str, project: str | None = None) -> Response:
        access = self._access(request, tenant, project)
        policy_service.validate_setting_key(key)
        setting = (
            selectors.setting_list(tenant=access.tenant, project=access.project)
            .filter(key=key)
            .first()
        )
        if setting is None:
            raise NotFound(f"No setting {key!r} here.", field="key")
        return Response(_setting(setting))

    @extend_schema(
        request=SettingInputSerializer,
        responses={200: SettingSerializer, 201: SettingSerializer},
    )
    def put(self, request: Request, tenant: str, key: str, project: str | None = None) -> Response:
        access = self._access(request, tenant, project)
        access.require_admin()
        allowed = {"value", "reason"} if self.project_scope else {"value", "enforced", "reason"}
        data = reject_unknown_fields(request.data, allowed)
        if "value" not in data:
            raise InvalidInput("`value` is required.", field="value")
        setting, created = policy_service.setting_set(
            tenant=access.tenant,
            project=access.project,
            key=key,
            value=data["value"],
            enforced=data.get("enforced", False),
            user=request.user,
            reason=reason_of(data),
        )
        return Response(
            _setting(setting), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

    @extend_schema(responses={204: None})
    def delete(
        self, request: Request, tenant: str, key: str, project: str | None = None
    ) -> Response:
        access = self._access(request, tenant, project)
        access.require_admin()
        data = request.data if isinstance(request.data, dict) else {}
        policy_service.setting_delete(
            tenant=access.tenant,
            project=access.project,
            key=key,
            user=request.user,
            reason=reason_of(data),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class TenantSettingList(_SettingList):
    pass


class TenantSettingDetail(_SettingDetail):
    pass


class ProjectSettingList(_SettingList):
    project_scope = True


class ProjectSettingDetail(_SettingDetail):
    project_scope = True


class RecipeInputSerializer(serializers.Serializer):
    name = serializers.CharField()
    params = serializers.JSONField(required=False)
    profiles = serializers.JSONField(required=False)
    reason = serializers.CharField(required=False)


def _recipe_or_404(access: Access, name: str) -> Recipe:
    recipe = selectors.recipe_list(tenant=access.tenant).filter(name=name).first()
    if recipe is None:
        raise NotFound(f"No recipe {name!r} in this tenant.", field="recipe")
    return recipe


class RecipeListCreate(ListView):
    @extend_schema(responses=RecipeSerializer(many=True))
    def get(self, request: Request, tenant: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        return self.paginate(request, selectors.recipe_list(tenant=access.tenant), _recipe)

    @extend_schema(request=RecipeInputSerializer, responses={201: RecipeSerializer})
    def post(self, request: Request, tenant: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        data = reject_unknown_fields(request.data, {"name", "params", "profiles", "reason"})
        recipe = policy_service.recipe_create(
            tenant=access.tenant,
            name=data.get("name"),
            params=data.get("params", {}),
            profiles=data.get("profiles", {}),
            user=request.user,
            reason=reason_of(data),
        )
        return Response(_recipe(recipe), status=status.HTTP_201_CREATED)


class RecipeDetail(APIView):
    @extend_schema(responses=RecipeSerializer)
    def get(self, request: Request, tenant: str, name: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        return Response(_recipe(_recipe_or_404(access, name)))

    @extend_schema(request=RecipeInputSerializer, responses=RecipeSerializer)
    def put(self, request: Request, tenant: str, name: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        data = reject_unknown_fields(request.data, {"name", "params", "profiles", "reason"})
        if "name" in data and data["name"] != name:
            raise InvalidInput("A recipe cannot be renamed; create a new one.", field="name")
        recipe = policy_service.recipe_update(
            recipe=_recipe_or_404(access, name),
            params=data.get("params", {}),
            profiles=data.get("profiles", {}),
            user=request.user,
            reason=reason_of(data),
        )
        return Response(_recipe(recipe))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, tenant: str, name: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        data = request.data if isinstance(request.data, dict) else {}
        policy_service.recipe_delete(
            recipe=_recipe_or_404(access, name), user=request.user, reason=reason_of(data)
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

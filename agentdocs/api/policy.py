"""`memory.*` settings at tenant and project scope, and recipes. Admins write, members read."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.access import request_project_access, request_tenant_access
from agentdocs.api.common import ListView
from agentdocs.api.schema import errors
from agentdocs.api.serializers import (
    ReasonField,
    StrictBooleanField,
    StrictSerializer,
    TextField,
    optional_body,
)
from agentdocs.core import policy as policy_rules
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
            return request_project_access(request, tenant, project)
        return request_tenant_access(request, tenant)


class _SettingList(_SettingViews):
    OutputSerializer = SettingSerializer

    @extend_schema(
        tags=["settings"],
        description="The settings set at this scope, by key, paged; members read.",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
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

    @extend_schema(
        tags=["settings"],
        description="The setting set at this scope; 400 for a key that is no setting, 404 "
        "if it is not set here (a tenant's setting is not a project's).",
        responses={200: OutputSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, key: str, project: str | None = None) -> Response:
        access = self._access(request, tenant, project)
        policy_rules.validate_setting_key(key)
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

    @extend_schema(
        tags=["settings"],
        description="Unsets the setting at this scope; the default (or the tenant's value) "
        "applies again. Tenant admins (403 otherwise); 404 if it is not set here.",
        request=DeleteInputSerializer,
        responses={204: None, **errors(400, 404)},
    )
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


@extend_schema_view(get=extend_schema(summary="List a tenant's settings"))
class TenantSettingList(_SettingList):
    pass


@extend_schema_view(
    get=extend_schema(summary="Read a tenant setting"),
    delete=extend_schema(summary="Unset a tenant setting"),
)
class TenantSettingDetail(_SettingDetail):
    PutInputSerializer = TenantSettingInputSerializer

    @extend_schema(
        tags=["settings"],
        summary="Set a tenant setting",
        description="Sets `key` for the tenant (201 when new, 200 when changed); with "
        "`enforced`, projects cannot set it themselves. Tenant admins (403 otherwise); 400 "
        "for an unknown key or a value it cannot take.",
        request=PutInputSerializer,
        responses={**_SETTING_PUT, **errors(400, 404, 413)},
    )
    def put(self, request: Request, tenant: str, key: str, project: str | None = None) -> Response:
        return super().put(request, tenant, key, project)


@extend_schema_view(get=extend_schema(summary="List a project's settings"))
class ProjectSettingList(_SettingList):
    project_scope = True


@extend_schema_view(
    get=extend_schema(summary="Read a project setting"),
    delete=extend_schema(summary="Unset a project setting"),
)
class ProjectSettingDetail(_SettingDetail):
    project_scope = True
    PutInputSerializer = ProjectSettingInputSerializer

    @extend_schema(
        tags=["settings"],
        summary="Set a project setting",
        description="Sets `key` for the project (201 when new, 200 when changed), over the "
        "tenant's value. Tenant admins (403 otherwise); 400 for an unknown key or a value "
        "it cannot take; 409 when the tenant enforces the key.",
        request=PutInputSerializer,
        responses={**_SETTING_PUT, **errors(400, 404, 409, 413)},
    )
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

    @extend_schema(
        tags=["recipes"],
        summary="List a tenant's recipes",
        description="Recipes by name, paged; members read.",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        return self.paginate(request, policy_selectors.recipe_list(tenant=access.tenant))

    @extend_schema(
        tags=["recipes"],
        summary="Create a recipe",
        description="A recipe says what a Memory Block holds (`params`) and names its "
        "profiles. Tenant admins (403 otherwise); 400 when `params` or `profiles` break "
        "the rules, 409 if the name is taken.",
        request=InputSerializer,
        responses={201: OutputSerializer, **errors(400, 404, 409, 413)},
    )
    def post(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
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

    @extend_schema(
        tags=["recipes"],
        summary="Read a recipe",
        description="404 if the tenant has no recipe of that name.",
        responses={200: OutputSerializer, **errors(404)},
    )
    def get(self, request: Request, tenant: str, name: str) -> Response:
        access = request_tenant_access(request, tenant)
        return Response(self.OutputSerializer(_recipe_or_404(access, name)).data)

    @extend_schema(
        tags=["recipes"],
        summary="Update a recipe",
        description="Replaces `params` and `profiles`; a recipe cannot be renamed (400). "
        "Tenant admins (403 otherwise); 404 if there is no such recipe.",
        request=PutInputSerializer,
        responses={200: OutputSerializer, **errors(400, 404, 413)},
    )
    def put(self, request: Request, tenant: str, name: str) -> Response:
        access = request_tenant_access(request, tenant)
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

    @extend_schema(
        tags=["recipes"],
        summary="Delete a recipe",
        description="Tenant admins (403 otherwise); 404 if there is no such recipe.",
        request=DeleteInputSerializer,
        responses={204: None, **errors(400, 404)},
    )
    def delete(self, request: Request, tenant: str, name: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        policy_service.recipe_delete(
            recipe=_recipe_or_404(access, name), user=access.user, **serializer.validated_data
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

"""The history of each setting (a project's with `?project=`), recipe, membership and
provider map entry: every change with who made it, why, and the values before and after."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agentdocs.api.access import request_project_access, request_tenant_access
from agentdocs.api.common import ListView
from agentdocs.api.schema import errors
from agentdocs.core import policy as policy_rules
from agentdocs.core import recipes as recipe_rules
from agentdocs.core.manifest import validate_provider_name
from agentdocs.permissions import Access
from agentdocs.selectors import history as history_selectors


class ChangeHistoryEntrySerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="1 for the oldest change.")
    at = serializers.DateTimeField()
    actor = serializers.CharField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    action = serializers.CharField(help_text="created, updated or deleted.")
    before = serializers.DictField(allow_null=True, help_text="The values before; null: none.")
    after = serializers.DictField(allow_null=True, help_text="The values after; null: deleted.")


class RecipeHistoryEntrySerializer(ChangeHistoryEntrySerializer):
    diff = serializers.CharField(
        source="diff.unified", help_text="A unified line diff of the recipe's JSON."
    )


class _HistoryList(ListView):
    """A history as pages of entries, each compared with the one before it."""

    OutputSerializer = ChangeHistoryEntrySerializer
    fields: tuple[str, ...] = ()
    with_diff = False

    def entries(self, request: Request, rows: Any) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        entries = history_selectors.history_entries(
            page or [], self.fields, with_diff=self.with_diff
        )
        return paginator.get_paginated_response(self.OutputSerializer(entries, many=True).data)

    def access(self, request: Request, tenant: str) -> Access:
        return request_tenant_access(request, tenant)


class SettingHistory(_HistoryList):
    fields = history_selectors.SETTING_FIELDS

    @extend_schema(
        tags=["activity"],
        summary="A setting's history",
        description="Every change of the tenant setting `key` (of a project's with "
        "`?project=<slug>`), newest first, paged: who, why, the values before and after. "
        "Members read; 404 if the key was never set there.",
        parameters=[
            OpenApiParameter(
                "project",
                OpenApiTypes.STR,
                OpenApiParameter.QUERY,
                description="A project's slug: that project's setting.",
            )
        ],
        responses={200: ChangeHistoryEntrySerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, key: str) -> Response:
        project_slug = request.query_params.get("project") or ""
        access: Access
        if project_slug:
            access = request_project_access(request, tenant, project_slug)
        else:
            access = self.access(request, tenant)
        policy_rules.validate_setting_key(key)
        rows = history_selectors.setting_history(
            tenant=access.tenant, project=access.project, key=key
        )
        return self.entries(request, rows)


class RecipeHistory(_HistoryList):
    OutputSerializer = RecipeHistoryEntrySerializer
    fields = history_selectors.RECIPE_FIELDS
    with_diff = True

    @extend_schema(
        tags=["activity"],
        summary="A recipe's history",
        description="Every change of the recipe, newest first, paged, with a line diff of its "
        "JSON. Members read; 404 if the tenant never had such a recipe.",
        responses={200: RecipeHistoryEntrySerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, name: str) -> Response:
        access = self.access(request, tenant)
        recipe_rules.validate_recipe_name(name)
        return self.entries(
            request, history_selectors.recipe_history(tenant=access.tenant, name=name)
        )


class MembershipHistory(_HistoryList):
    fields = history_selectors.MEMBERSHIP_FIELDS

    @extend_schema(
        tags=["activity"],
        summary="A membership's history",
        description="Every role the user held in the tenant, newest first, paged. Tenant "
        "admins (403 otherwise); 404 if the user was never a member.",
        responses={200: ChangeHistoryEntrySerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str, username: str) -> Response:
        access = self.access(request, tenant)
        access.require_admin()
        return self.entries(
            request, history_selectors.membership_history(tenant=access.tenant, username=username)
        )


class ProviderHistory(_HistoryList):
    fields = history_selectors.PROVIDER_FIELDS

    @extend_schema(
        tags=["activity"],
        summary="A provider's history",
        description="Every document the name was mapped to, newest first, paged. Members "
        "read; 400 for a name that cannot be one, 404 if the map never had it.",
        responses={200: ChangeHistoryEntrySerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, name: str) -> Response:
        access = self.access(request, tenant)
        validate_provider_name(name)
        return self.entries(
            request, history_selectors.provider_history(tenant=access.tenant, name=name)
        )

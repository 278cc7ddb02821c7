"""The provider map: members read it, tenant admins write it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions, selectors
from agentdocs.api.access import prefetched_access
from agentdocs.api.common import reject_unknown_fields, username
from agentdocs.api.pagination import Pagination
from agentdocs.core.errors import InvalidInput
from agentdocs.models import ProviderMapping
from agentdocs.services import providers as provider_service


def _mapping(mapping: ProviderMapping) -> dict[str, Any]:
    return {
        "name": mapping.name,
        "project": mapping.project.slug,
        "path": mapping.path,
        "updated_at": mapping.updated_at,
        "updated_by": username(mapping.updated_by),
    }


class ProviderSerializer(serializers.Serializer):
    name = serializers.CharField()
    project = serializers.CharField()
    path = serializers.CharField()
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(allow_null=True)


def _string(data: dict, name: str, *, required: bool = True) -> str:
    value = data.get(name, None if required else "")
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"`{name}` must be a string.", field=name)
    return value


class ProviderList(APIView):
    @extend_schema(responses=ProviderSerializer(many=True))
    def get(self, request: Request, tenant: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        paginator = Pagination()
        page = paginator.paginate_queryset(
            selectors.provider_list(tenant=access.tenant), request, view=self
        )
        return paginator.get_paginated_response([_mapping(m) for m in page])


class ProviderDetail(APIView):
    class ProviderInputSerializer(serializers.Serializer):
        project = serializers.CharField()
        path = serializers.CharField()
        reason = serializers.CharField(required=False, allow_blank=True)

    @extend_schema(responses=ProviderSerializer)
    def get(self, request: Request, tenant: str, name: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        return Response(_mapping(provider_service.provider_get(tenant=access.tenant, name=name)))

    @extend_schema(
        request=ProviderInputSerializer,
        responses={200: ProviderSerializer, 201: ProviderSerializer},
    )
    def put(self, request: Request, tenant: str, name: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        data = reject_unknown_fields(request.data, {"project", "path", "reason"})
        if "project" not in data or "path" not in data:
            missing = "project" if "project" not in data else "path"
            raise InvalidInput(f"`{missing}` is required.", field=missing)
        mapping, created = provider_service.provider_set(
            tenant=access.tenant,
            name=name,
            project_slug=_string(data, "project"),
            path=_string(data, "path"),
            user=request.user,
            reason=_string(data, "reason", required=False),
        )
        return Response(
            _mapping(mapping), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

    @extend_schema(responses={204: None})
    def delete(self, request: Request, tenant: str, name: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        data = request.data if isinstance(request.data, dict) else {}
        reject_unknown_fields(data, {"reason"})
        provider_service.provider_delete(
            tenant=access.tenant,
            name=name,
            user=request.user,
            reason=_string(data, "reason", required=False),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

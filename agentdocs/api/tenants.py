"""Ping, tenants, projects and members."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions, selectors
from agentdocs.api.access import prefetched_access
from agentdocs.api.common import ListView, reason_of, reject_unknown_fields
from agentdocs.core.errors import Forbidden, InvalidInput, NotFound
from agentdocs.models import Membership, Project, Tenant
from agentdocs.services import tenants as tenant_service


def _tenant(tenant: Tenant, role: str | None = None) -> dict[str, Any]:
    data = {"slug": tenant.slug, "name": tenant.name, "created_at": tenant.created_at}
    if role is not None:
        data["role"] = role
    return data


def _project(project: Project) -> dict[str, Any]:
    return {
        "slug": project.slug,
        "name": project.name,
        "reserved": project.is_reserved,
        "created_at": project.created_at,
    }


def _member(membership: Membership) -> dict[str, Any]:
    return {
        "username": membership.user.get_username(),
        "role": membership.role,
        "created_at": membership.created_at,
    }


def _string(data: dict, name: str) -> str:
    value = data.get(name)
    if value is None:
        raise InvalidInput(f"`{name}` is required.", field=name)
    if not isinstance(value, str):
        raise InvalidInput(f"`{name}` must be a string.", field=name)
    return value


class SlugNameSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()


class TenantSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    created_at = serializers.DateTimeField()
    role = serializers.ChoiceField(choices=["reader", "writer", "admin"])


class ProjectSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    reserved = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    role = serializers.ChoiceField(choices=["reader", "writer", "admin"], required=False)


class MemberSerializer(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=["reader", "writer", "admin"])
    created_at = serializers.DateTimeField()


class MemberInputSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["reader", "writer", "admin"])
    reason = serializers.CharField(required=False)


class PingSerializer(serializers.Serializer):
    ok = serializers.BooleanField()


class Ping(APIView):
    @extend_schema(responses=PingSerializer)
    def get(self, request: Request) -> Response:
        return Response({"ok": True})


class TenantListCreate(ListView):
    @extend_schema(responses=TenantSerializer(many=True))
    def get(self, request: Request) -> Response:
        tenants = selectors.tenant_list_for(user=request.user)
        return self.paginate(request, tenants, _tenant)

    @extend_schema(request=SlugNameSerializer, responses={201: TenantSerializer})
    def post(self, request: Request) -> Response:
        if not permissions.may_create_tenants(request.user):
            raise Forbidden("Creating tenants is reserved to superusers on this server.")
        data = reject_unknown_fields(request.data, {"slug", "name"})
        tenant = tenant_service.tenant_create(
            slug=_string(data, "slug"), name=_string(data, "name"), user=request.user
        )
        return Response(_tenant(tenant, "admin"), status=status.HTTP_201_CREATED)


class TenantDetail(APIView):
    @extend_schema(responses=TenantSerializer)
    def get(self, request: Request, tenant: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        return Response(_tenant(access.tenant, access.role))


class ProjectListCreate(ListView):
    @extend_schema(responses=ProjectSerializer(many=True))
    def get(self, request: Request, tenant: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        return self.paginate(request, selectors.project_list(tenant=access.tenant), _project)

    @extend_schema(request=SlugNameSerializer, responses={201: ProjectSerializer})
    def post(self, request: Request, tenant: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        data = reject_unknown_fields(request.data, {"slug", "name"})
        project = tenant_service.project_create(
            tenant=access.tenant,
            slug=_string(data, "slug"),
            name=_string(data, "name"),
            user=request.user,
        )
        return Response(_project(project), status=status.HTTP_201_CREATED)


class ProjectDetail(APIView):
    @extend_schema(responses=ProjectSerializer)
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        return Response({**_project(access.project), "role": access.role})


class MemberList(ListView):
    @extend_schema(responses=MemberSerializer(many=True))
    def get(self, request: Request, tenant: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        return self.paginate(request, selectors.member_list(tenant=access.tenant), _member)


class MemberDetail(APIView):
    @extend_schema(responses=MemberSerializer)
    def get(self, request: Request, tenant: str, username: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        membership = (
            selectors.member_list(tenant=access.tenant).filter(user__username=username).first()
        )
        if membership is None:
            raise NotFound(f"{username!r} is not a member of this tenant.", field="username")
        return Response(_member(membership))

    @extend_schema(
        request=MemberInputSerializer, responses={200: MemberSerializer, 201: MemberSerializer}
    )
    def put(self, request: Request, tenant: str, username: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        data = reject_unknown_fields(request.data, {"role", "reason"})
        membership, created = tenant_service.membership_set(
            tenant=access.tenant,
            username=username,
            role=data.get("role"),
            actor=request.user,
            reason=reason_of(data),
        )
        return Response(
            _member(membership), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

    @extend_schema(responses={204: None})
    def delete(self, request: Request, tenant: str, username: str) -> Response:
        access = permissions.tenant_access(
            request.user, tenant, prefetched=prefetched_access(request)
        )
        access.require_admin()
        data = request.data if isinstance(request.data, dict) else {}
        tenant_service.membership_remove(
            tenant=access.tenant,
            username=username,
            actor=request.user,
            reason=reason_of(data),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

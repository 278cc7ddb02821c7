"""Tenants, projects and members."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import (
    request_project_access,
    request_tenant_access,
    token_tenant_id,
)
from agentdocs.api.common import ListView
from agentdocs.api.invitations import TenantInvitationSerializer
from agentdocs.api.schema import errors
from agentdocs.api.serializers import ReasonField, StrictSerializer, TextField, optional_body
from agentdocs.core.errors import Forbidden, NotFound
from agentdocs.models import Invitation, Role
from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.services import tenancy as tenant_service

ROLES = Role.values


class _RoleInContext(serializers.Serializer):
    """An output whose `role` is the caller's, given in the context, not read off the row."""

    role = serializers.SerializerMethodField()

    def get_role(self, obj: object) -> str:
        return self.context["role"]


class TenantSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    created_at = serializers.DateTimeField()


class TenantWithRoleSerializer(_RoleInContext, TenantSerializer):
    pass


class ProjectSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    reserved = serializers.BooleanField(source="is_reserved")
    created_at = serializers.DateTimeField()


class ProjectWithRoleSerializer(_RoleInContext, ProjectSerializer):
    pass


class MemberSerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=ROLES)
    created_at = serializers.DateTimeField()


class _SlugNameInputSerializer(StrictSerializer):
    slug = TextField()
    name = TextField()


class TenantListCreate(ListView):
    class InputSerializer(_SlugNameInputSerializer):
        class Meta:
            ref_name = "TenantCreate"

    OutputSerializer = TenantSerializer

    @extend_schema(
        tags=["tenants"],
        summary="List your tenants",
        description="The tenants you are a member of, paged (a tenant-bound API token sees "
        "only its own).",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request) -> Response:
        tenants = tenancy_selectors.tenant_list_for(user=permissions.signed_in(request.user))
        bound_to = token_tenant_id(request)
        if bound_to is not None:
            tenants = tenants.filter(pk=bound_to)  # a tenant token sees only its own
        return self.paginate(request, tenants)

    @extend_schema(
        tags=["tenants"],
        summary="Create a tenant",
        description="Creates the tenant, with its `_vance` project, and makes you its "
        "admin. Reserved to Django superusers on this server (403 otherwise); 409 if the "
        "slug is taken.",
        request=InputSerializer,
        responses={201: TenantWithRoleSerializer, **errors(400, 409, 413)},
    )
    def post(self, request: Request) -> Response:
        if not permissions.may_create_tenants(request.user):
            raise Forbidden("Creating tenants is reserved to superusers on this server.")
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        tenant = tenant_service.tenant_create(
            user=permissions.signed_in(request.user), **serializer.validated_data
        )
        output = TenantWithRoleSerializer(tenant, context={"role": Role.ADMIN.value})
        return Response(output.data, status=status.HTTP_201_CREATED)


class TenantDetail(APIView):
    OutputSerializer = TenantWithRoleSerializer

    @extend_schema(
        tags=["tenants"],
        summary="Read a tenant",
        description="The tenant with your role in it. 404 unless you are a member.",
        responses={200: OutputSerializer, **errors(404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        return Response(self.OutputSerializer(access.tenant, context={"role": access.role}).data)


class ProjectListCreate(ListView):
    class InputSerializer(_SlugNameInputSerializer):
        class Meta:
            ref_name = "ProjectCreate"

    OutputSerializer = ProjectSerializer

    @extend_schema(
        tags=["projects"],
        summary="List a tenant's projects",
        description="Every project of the tenant, `_vance` included, paged; members read.",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        return self.paginate(request, tenancy_selectors.project_list(tenant=access.tenant))

    @extend_schema(
        tags=["projects"],
        summary="Create a project",
        description="Tenant admins (403 otherwise); 409 if the slug is taken in the tenant.",
        request=InputSerializer,
        responses={201: OutputSerializer, **errors(400, 404, 409, 413)},
    )
    def post(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        project = tenant_service.project_create(
            tenant=access.tenant, user=access.user, **serializer.validated_data
        )
        return Response(self.OutputSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetail(APIView):
    OutputSerializer = ProjectWithRoleSerializer

    @extend_schema(
        tags=["projects"],
        summary="Read a project",
        description="The project with your role in it. 404 unless you may read it.",
        responses={200: OutputSerializer, **errors(404)},
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        return Response(self.OutputSerializer(access.project, context={"role": access.role}).data)


class MemberList(ListView):
    OutputSerializer = MemberSerializer

    @extend_schema(
        tags=["members"],
        summary="List a tenant's members",
        description="Members and their roles, paged. Tenant admins (403 otherwise).",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        return self.paginate(request, tenancy_selectors.member_list(tenant=access.tenant))


class MemberDetail(APIView):
    class PutInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "MemberSet"

        role = serializers.ChoiceField(
            choices=ROLES,
            error_messages={
                "required": "`role` is required.",
                "invalid_choice": f"The role must be one of {', '.join(ROLES)}.",
            },
        )
        reason = ReasonField()

    class DeleteInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "MemberRemove"

        reason = ReasonField()

    OutputSerializer = MemberSerializer

    @extend_schema(
        tags=["members"],
        summary="Read a member",
        description="One member's role. Tenant admins (403 otherwise); 404 if the user is "
        "not a member.",
        responses={200: OutputSerializer, **errors(404)},
    )
    def get(self, request: Request, tenant: str, username: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        membership = (
            tenancy_selectors.member_list(tenant=access.tenant)
            .filter(user__username=username)
            .first()
        )
        if membership is None:
            raise NotFound(f"{username!r} is not a member of this tenant.", field="username")
        return Response(self.OutputSerializer(membership).data)

    @extend_schema(
        tags=["members"],
        summary="Set a member's role, or invite a user",
        request=PutInputSerializer,
        responses={
            200: OutputSerializer,
            201: OutputSerializer,
            202: TenantInvitationSerializer,
            **errors(400, 404, 422),
        },
        description="Changes the role of an existing member (200). Anyone else is invited "
        "instead (202 with the invitation, alike whether or not such a user exists), and "
        "becomes a member by accepting it; a Django superuser, or any tenant admin when "
        "`AGENTDOCS_DIRECT_MEMBERSHIP` is on, adds them directly (201; 404 if there is no "
        "such user). Tenant admins (403 otherwise); 422 when it would demote the last "
        "admin.",
    )
    def put(self, request: Request, tenant: str, username: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        serializer = self.PutInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if request.user.is_superuser or settings.AGENTDOCS_DIRECT_MEMBERSHIP:
            membership, created = tenant_service.membership_set(
                tenant=access.tenant,
                username=username,
                actor=access.user,
                **serializer.validated_data,
            )
            return Response(
                self.OutputSerializer(membership).data,
                status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
            )
        result = tenant_service.member_role_set_or_invite(
            tenant=access.tenant,
            username=username,
            actor=access.user,
            **serializer.validated_data,
        )
        if isinstance(result, Invitation):
            return Response(
                TenantInvitationSerializer(result).data, status=status.HTTP_202_ACCEPTED
            )
        return Response(self.OutputSerializer(result).data)

    @extend_schema(
        tags=["members"],
        summary="Remove a member",
        description="Tenant admins (403 otherwise); 404 if the user is not a member, 422 "
        "when it would remove the last admin.",
        request=DeleteInputSerializer,
        responses={204: None, **errors(400, 404, 422)},
    )
    def delete(self, request: Request, tenant: str, username: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        tenant_service.membership_remove(
            tenant=access.tenant,
            username=username,
            actor=access.user,
            **serializer.validated_data,
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

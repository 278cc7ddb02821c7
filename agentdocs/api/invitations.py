"""Invitations: a tenant admin invites a user by username or email, and only the
invited user's acceptance makes them a member.

The answer to an invitation (202) is the same whether or not such a user exists,
so a tenant admin cannot use it to learn who has an account on the server.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import request_tenant_access, token_tenant_id
from agentdocs.api.common import ListView
from agentdocs.api.schema import errors
from agentdocs.api.serializers import ReasonField, StrictSerializer, TextField, optional_body
from agentdocs.models import Invitation, InvitationState, Role
from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.services import tenancy as tenant_service

TAGS = ["invitations"]
ROLES = Role.values


class _BlankAsNullField(serializers.CharField):
    """The one of username and email an invitation does not name is null, not ""."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> Any:
        return str(value) if value else None


class TenantInvitationSerializer(serializers.Serializer):
    """An invitation as its tenant's admins see it: the target as it was written
    (an email lowercased)."""

    id = serializers.IntegerField()
    username = _BlankAsNullField()
    email = _BlankAsNullField()
    role = serializers.ChoiceField(choices=ROLES)
    state = serializers.ChoiceField(choices=InvitationState.choices)
    invited_by = serializers.CharField(source="invited_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)


class OwnInvitationSerializer(serializers.Serializer):
    """An invitation as the invited user sees it: which tenant, which role, from whom."""

    id = serializers.IntegerField()
    tenant = serializers.CharField(source="tenant.slug")
    tenant_name = serializers.CharField(source="tenant.name")
    role = serializers.ChoiceField(choices=ROLES)
    state = serializers.ChoiceField(choices=InvitationState.choices)
    invited_by = serializers.CharField(source="invited_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)


class _ReasonInputSerializer(StrictSerializer):
    class Meta:
        ref_name = "InvitationDecision"

    reason = ReasonField()


class TenantInvitationList(ListView):
    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "InvitationCreate"

        username = TextField(required=False, allow_null=True, default=None)
        email = TextField(required=False, allow_null=True, default=None)
        role = serializers.ChoiceField(
            choices=ROLES,
            error_messages={
                "required": "`role` is required.",
                "invalid_choice": f"The role must be one of {', '.join(ROLES)}.",
            },
        )
        reason = ReasonField()

    OutputSerializer = TenantInvitationSerializer

    @extend_schema(
        tags=TAGS,
        summary="List a tenant's pending invitations (tenant admins)",
        description="The invitations not yet accepted, declined or cancelled, paged. "
        "Tenant admins (403 otherwise).",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        return self.paginate(request, tenancy_selectors.invitation_list_in(tenant=access.tenant))

    @extend_schema(
        tags=TAGS,
        summary="Invite a user to the tenant (tenant admins)",
        description="Name the user by `username` or by `email` (not both). The answer is "
        "202 with the invitation whether or not such a user exists; the user sees it on "
        "their home page and in `GET /api/v1/invitations/`, and becomes a member only "
        "by accepting it.",
        request=InputSerializer,
        responses={202: OutputSerializer, **errors(400, 404, 413)},
    )
    def post(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        invitation = tenant_service.invitation_create(
            tenant=access.tenant,
            invited_by=access.user,
            **serializer.validated_data,
        )
        return Response(self.OutputSerializer(invitation).data, status=status.HTTP_202_ACCEPTED)


class TenantInvitationDetail(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Cancel a pending invitation (tenant admins)",
        description="The invited user can no longer accept it. 409 if it was already "
        "accepted, declined or cancelled.",
        request=_ReasonInputSerializer,
        responses={204: None, **errors(400, 404, 409)},
    )
    def delete(self, request: Request, tenant: str, invitation_id: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        serializer = _ReasonInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        invitation = tenancy_selectors.invitation_get_in(
            tenant=access.tenant, invitation_id=invitation_id
        )
        tenant_service.invitation_cancel(
            invitation=invitation,
            actor=access.user,
            **serializer.validated_data,
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationList(ListView):
    OutputSerializer = OwnInvitationSerializer

    @extend_schema(
        tags=TAGS,
        summary="List your pending invitations",
        description="Invitations to your username, or to your email address as it is now.",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request) -> Response:
        invitations = tenancy_selectors.invitation_list_for(
            user=request.user, tenant_id=token_tenant_id(request)
        )
        return self.paginate(request, invitations)


def _own_invitation(request: Request, invitation_id: str) -> tuple[Invitation, str]:
    """The caller's invitation and the reason in the body; someone else's is a 404."""
    serializer = _ReasonInputSerializer(data=optional_body(request.data))
    serializer.is_valid(raise_exception=True)
    invitation = tenancy_selectors.invitation_get_for(
        user=request.user, invitation_id=invitation_id, tenant_id=token_tenant_id(request)
    )
    return invitation, serializer.validated_data["reason"]


class InvitationAccept(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Accept an invitation: you become a member with its role",
        description="404 if it is not yours; 409 if it was already accepted, declined or "
        "cancelled.",
        request=_ReasonInputSerializer,
        responses={200: OwnInvitationSerializer, **errors(400, 404, 409)},
    )
    def post(self, request: Request, invitation_id: str) -> Response:
        invitation, reason = _own_invitation(request, invitation_id)
        accepted = tenant_service.invitation_accept(
            invitation=invitation, user=permissions.signed_in(request.user), reason=reason
        )
        return Response(OwnInvitationSerializer(accepted).data)


class InvitationDecline(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Decline an invitation",
        description="404 if it is not yours; 409 if it was already accepted, declined or "
        "cancelled.",
        request=_ReasonInputSerializer,
        responses={200: OwnInvitationSerializer, **errors(400, 404, 409)},
    )
    def post(self, request: Request, invitation_id: str) -> Response:
        invitation, reason = _own_invitation(request, invitation_id)
        declined = tenant_service.invitation_decline(
            invitation=invitation, user=permissions.signed_in(request.user), reason=reason
        )
        return Response(OwnInvitationSerializer(declined).data)

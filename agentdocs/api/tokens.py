"""API tokens: a user's own (list, create, revoke) and a tenant admin's view of the
tokens scoped to their tenant. The key is in the response to its creation only."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions, ratelimit
from agentdocs.api.access import (
    calling_token,
    request_tenant_access,
    token_tenant_id,
)
from agentdocs.api.common import ListView
from agentdocs.api.schema import RETRY_AFTER, errors
from agentdocs.api.serializers import StrictSerializer
from agentdocs.models import Scope
from agentdocs.selectors import tokens as token_selectors
from agentdocs.services import tokens as token_service
from agentdocs.validation import tokens as token_checks

TAGS = ["tokens"]


class TokenOutputSerializer(serializers.Serializer):
    """A token as lists show it: never the key, only its prefix."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="The first characters after `adt_`.")
    user = serializers.CharField(source="user.username")
    tenant = serializers.CharField(source="tenant.slug", allow_null=True, default=None)
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.values))
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked = serializers.BooleanField()
    revoked_at = serializers.DateTimeField(allow_null=True)


class TokenList(ListView):
    class InputSerializer(StrictSerializer):
        name = serializers.CharField(max_length=token_checks.MAX_NAME_LENGTH)
        tenant = serializers.CharField(required=False, allow_null=True, default=None)
        scopes = serializers.ListField(
            child=serializers.ChoiceField(choices=Scope.values), allow_empty=False
        )
        expires_in_days = serializers.IntegerField(
            required=False,
            allow_null=True,
            default=None,
            min_value=1,
            max_value=token_checks.MAX_EXPIRES_IN_DAYS,
        )
        reason = serializers.CharField(required=False, allow_blank=True, default="")

    class CreatedSerializer(TokenOutputSerializer):
        # The answer that made a token: the token, and its key (`NewToken`) this once.

        token = serializers.CharField(help_text="The key. Shown this once: store it now.")

        def to_representation(self, instance: token_service.NewToken) -> dict[str, Any]:
            shown = TokenOutputSerializer(instance.token, context=self.context).data
            return {**shown, "token": instance.key}

    OutputSerializer = TokenOutputSerializer

    @extend_schema(
        tags=TAGS,
        summary="List your API tokens",
        description="Your tokens, revoked ones included, paged; never their keys. A token "
        "bound to a tenant lists only your tokens bound to that tenant.",
        responses={200: TokenOutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request) -> Response:
        tokens = token_selectors.token_list_for(
            user=permissions.signed_in(request.user), reach=token_tenant_id(request)
        ).select_related("user")
        return self.paginate(request, tokens)

    @extend_schema(
        tags=TAGS,
        summary="Create an API token",
        description="The response holds the key (`adt_<prefix>_<secret>`) once; only its "
        "sha256 is stored. A token with a `tenant` works only in that tenant. Its rights "
        "are always the smaller of its scopes and your current role. Sent with an API "
        "token, this needs the `admin` scope, and the new token must be within the calling "
        "one: scopes among its own, bound to its tenant when it is bound, expiring no later "
        "(403 `insufficient_scope` naming `scopes`, `tenant` or `expires_in_days`). At most "
        "`AGENTDOCS_MAX_TOKENS_PER_USER` active tokens per person (409 `too_many_tokens`); "
        "creations are rate-limited per person (429 with Retry-After).",
        request=InputSerializer,
        responses={201: CreatedSerializer, **errors(400, 403, 404, 409, 413, 429)},
        parameters=[RETRY_AFTER],
    )
    def post(self, request: Request) -> Response:
        user = permissions.signed_in(request.user)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        ratelimit.check("token_create", ratelimit.user_key(user.pk))
        now = timezone.now()
        minter = calling_token(request)
        if minter is not None:
            permissions.token_mint_check(
                minter=minter,
                scopes=data["scopes"],
                tenant_slug=data["tenant"],
                expires_in_days=data["expires_in_days"],
                now=now,
            )
        tenant = None
        if data["tenant"] is not None:
            tenant = request_tenant_access(request, data["tenant"]).tenant
        new = token_service.token_create(
            user=user,
            name=data["name"],
            scopes=data["scopes"],
            tenant=tenant,
            expires_in_days=data["expires_in_days"],
            reason=data["reason"],
            now=now,
        )
        return Response(self.CreatedSerializer(new).data, status=status.HTTP_201_CREATED)


class TokenDetail(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Show one of your API tokens",
        description="404 if it is not yours, or (sent with a token bound to a tenant) "
        "not bound to that tenant.",
        responses={200: TokenOutputSerializer, **errors(404)},
    )
    def get(self, request: Request, token_id: str) -> Response:
        token = token_selectors.token_get_for(
            user=permissions.signed_in(request.user),
            token_id=token_id,
            reach=token_tenant_id(request),
        )
        return Response(TokenOutputSerializer(token).data)

    @extend_schema(
        tags=TAGS,
        summary="Revoke one of your API tokens",
        description="The next request that sends the token is refused with 401. 404 if it "
        "is not yours, or (sent with a token bound to a tenant) not bound to that tenant.",
        request=None,
        responses={204: None, **errors(404)},
    )
    def delete(self, request: Request, token_id: str) -> Response:
        token = token_selectors.token_get_for(
            user=permissions.signed_in(request.user),
            token_id=token_id,
            reach=token_tenant_id(request),
        )
        token_service.token_revoke(
            token=token, actor=permissions.signed_in(request.user), reason="Revoked by its owner"
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class TenantTokenList(ListView):
    OutputSerializer = TokenOutputSerializer

    @extend_schema(
        tags=TAGS,
        summary="List the API tokens scoped to a tenant (tenant admins)",
        description="Every member's tokens that work only in this tenant, paged. Tenant "
        "admins (403 otherwise).",
        responses={200: TokenOutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        tokens = token_selectors.token_list_in(tenant=access.tenant)
        return self.paginate(request, tokens)


class TenantTokenDetail(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Revoke a token scoped to a tenant (tenant admins)",
        description="The next request that sends the token is refused with 401. Tenant "
        "admins (403 otherwise); 404 if no such token is scoped to this tenant.",
        request=None,
        responses={204: None, **errors(404)},
    )
    def delete(self, request: Request, tenant: str, token_id: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        token = token_selectors.token_get_in(tenant=access.tenant, token_id=token_id)
        token_service.token_revoke(
            token=token, actor=access.user, reason=f"Revoked by a tenant admin of {tenant}"
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

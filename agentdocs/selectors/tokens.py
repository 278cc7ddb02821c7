"""Reads of API tokens: a user's own, and those scoped to a tenant."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet

from agentdocs.core.errors import NotFound
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.models import ApiToken, Tenant


def token_list_for(*, user: User, reach: int | None = None) -> QuerySet[ApiToken]:
    """The user's tokens; with ``reach`` (the tenant a tenant-bound API token works in,
    `agentdocs.api.access.token_tenant_id`) only those bound to that tenant, so such a
    token cannot see, nor revoke, a broader one."""
    tokens = ApiToken.objects.filter(user=user).select_related("tenant")
    return tokens if reach is None else tokens.filter(tenant_id=reach)


def token_list_in(*, tenant: Tenant) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(tenant=tenant).select_related("user", "tenant")


def _token_id(token_id: object) -> int:
    number = positive_int(token_id, maximum=MAX_ID)
    if number is None:
        raise NotFound("No such token.", field="id")
    return number


def token_get_for(*, user: User, token_id: object, reach: int | None = None) -> ApiToken:
    """One of the user's own tokens within ``reach`` (`token_list_for`); another user's,
    or one out of reach, is as missing as one that never was."""
    token = token_list_for(user=user, reach=reach).filter(pk=_token_id(token_id)).first()
    if token is None:
        raise NotFound("No such token.", field="id")
    return token


def token_get_in(*, tenant: Tenant, token_id: object) -> ApiToken:
    token = token_list_in(tenant=tenant).filter(pk=_token_id(token_id)).first()
    if token is None:
        raise NotFound("No such token in this tenant.", field="id")
    return token


def token_tenant_choices(*, user: User) -> list[str]:
    """The tenants a token of this user may be bound to: those they are a member of."""
    return list(
        Tenant.objects.filter(memberships__user=user)
        .order_by("slug")
        .values_list("slug", flat=True)
    )


def active_tokens(*, user: User, now: datetime) -> int:
    """How many of the user's tokens still work: neither revoked nor expired."""
    return (
        ApiToken.objects.filter(user=user, revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .count()
    )

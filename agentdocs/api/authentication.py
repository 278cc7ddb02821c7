"""API token authentication that also reads the caller's access, in the same query.

`Authorization: Token <key>` and `Authorization: Bearer <key>` both carry an API
token (`agentdocs.models.ApiToken`); only its sha256 is stored, so the lookup is
by hash. Nearly every API request names a tenant (and often a project) in its URL,
and its view first asks `agentdocs.permissions` for the caller's access there:
the token, its user and that access row come back from one statement
(`agentdocs.permissions.token_with_access`), so a token-authenticated request to a tenant or project
pays one database round trip before its own work, as `GET /api/v1/ping` does.

The access row and the token's limits (the tenant it is bound to, the role its
scopes reach) travel as ``request.auth``, a `TokenAuth`, and reach the permission
module explicitly: a view resolves its tenant, project or document through
`agentdocs.api.access` (`request_project_access` and its siblings). The row serves
the first check of the same tenant and project only; the limits apply to every check.
Nothing is cached between requests: a revoked or expired token, a removed member or a
demoted writer is refused on the very next request.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from agentdocs.core.storable import NUL
from agentdocs.models import ApiToken
from agentdocs.permissions import PrefetchedAccess, TokenLimits, token_limits, token_with_access
from agentdocs.services import tokens as token_service

KEYWORDS = (b"token", b"bearer")
MAX_KEY_LENGTH = 200


@dataclass
class TokenAuth:
    """``request.auth`` of a token-authenticated request: the token, its limits and,
    when the URL names a tenant, the access row read with it, to be taken once."""

    token: ApiToken
    limits: TokenLimits
    _prefetched: PrefetchedAccess | None = field(default=None, repr=False)

    def take_prefetched_access(self, *, keep: bool = False) -> PrefetchedAccess:
        """The access row read with the token, the first time only (a later check in
        the same request, after a write say, reads afresh), with the token's limits.
        ``keep``: left for the next check too (a check made before the request's own
        work, such as `/mcp/`'s before it reads the JSON-RPC message)."""
        prefetched = self._prefetched
        if not keep:
            self._prefetched = None
        if prefetched is not None:
            return prefetched
        return PrefetchedAccess(tenant_slug="", project_slug=None, row=None, limits=self.limits)


def _scope_of(request: Request) -> tuple[str, str | None] | None:
    """The access the view will check first: (tenant, project), (tenant, None),
    or None for a URL that names no tenant."""
    kwargs = (getattr(request, "parser_context", None) or {}).get("kwargs") or {}
    tenant, project = kwargs.get("tenant"), kwargs.get("project")
    if not isinstance(tenant, str):
        return None
    return tenant, project if isinstance(project, str) else None


def _invalid(detail: str = "Invalid token.") -> exceptions.AuthenticationFailed:
    return exceptions.AuthenticationFailed(detail)


def _key_of(request: Request) -> str | None:
    """The key from `Authorization: Token|Bearer <key>`, None for another scheme."""
    parts = get_authorization_header(request).split()
    if not parts or parts[0].lower() not in KEYWORDS:
        return None
    if len(parts) != 2:
        raise _invalid("Invalid token header: send `Authorization: Bearer <token>`.")
    try:
        key = parts[1].decode("ascii")
    except UnicodeError:
        raise _invalid() from None
    if NUL in key or len(key) > MAX_KEY_LENGTH:  # no token holds one, nor is that long
        raise _invalid()
    return key


def _check_usable(token: ApiToken | None, user: AbstractBaseUser | None) -> None:
    if token is None or user is None:
        raise _invalid()
    if token.revoked_at is not None:
        raise _invalid("This token was revoked.")
    if token.is_expired():
        raise _invalid(f"This token expired at {token.expires_at:%Y-%m-%d %H:%M} UTC.")
    if not user.is_active:
        raise _invalid("User inactive or deleted.")


class TokenAccessAuthentication(BaseAuthentication):
    """API tokens, with the caller's access read alongside."""

    def authenticate_header(self, request: Request) -> str:
        return "Token"

    def authenticate(self, request: Request) -> tuple[AbstractBaseUser, TokenAuth] | None:
        key = _key_of(request)
        if key is None:
            return None
        key_hash = token_service.hash_key(key)
        scope = _scope_of(request)
        prefetched = None
        if scope is None:
            token = ApiToken.objects.select_related("user").filter(key_hash=key_hash).first()
        else:
            found = token_with_access(
                key_hash=key_hash, tenant_slug=scope[0], project_slug=scope[1]
            )
            token, prefetched = found if found is not None else (None, None)
        user = token.user if token is not None else None
        _check_usable(token, user)
        assert token is not None and user is not None
        now = timezone.now()
        token_service.token_used(token_id=token.pk, last_used_at=token.last_used_at, now=now)
        return user, TokenAuth(token=token, limits=token_limits(token), _prefetched=prefetched)


class TokenAccessAuthenticationScheme(OpenApiAuthenticationExtension):
    """The OpenAPI description of the token scheme: a Bearer token (`Token` works too)."""

    target_class = "agentdocs.api.authentication.TokenAccessAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token `adt_<prefix>_<secret>` from the API tokens page or "
            "`manage.py token_create`, as `Authorization: Bearer <token>` (or `Token <token>`).",
        }

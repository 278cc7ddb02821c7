"""API token authentication that also reads the caller's access, in the same query.

Nearly every API request names a tenant (and often a project) in its URL, and
its view first asks `agentdocs.permissions` for the caller's access there. DRF's
`TokenAuthentication` reads the token and its user in one query; the access
check would read the tenant, the role and the project in a second. Here both
come back from one statement (`agentdocs.sql.access`), so a token-authenticated
request to a tenant or project pays one database round trip before its own
work, as `GET /api/v1/ping` does.

The access row travels as ``request.auth``, a `TokenAuth`, and reaches the
permission module explicitly: a view passes
``prefetched=prefetched_access(request)`` (`agentdocs.api.access`), and the
permission module applies the same rules to it as to a row it reads itself. It
serves the first check of the same tenant and project only: a later check in the
request reads afresh.

A request whose URL names no tenant is authenticated by DRF's own
`TokenAuthentication`, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.request import Request

from agentdocs.api.parsers import NUL
from agentdocs.permissions import PrefetchedAccess
from agentdocs.sql import access as access_sql


@dataclass
class TokenAuth:
    """``request.auth`` of a token-authenticated request: the token and, when the URL
    names a tenant, the access row read with it, to be taken once."""

    token: Any
    _prefetched: PrefetchedAccess | None = field(default=None, repr=False)

    def take_prefetched_access(self) -> PrefetchedAccess | None:
        """The access row read with the token, the first time only: a later check
        in the same request (after a write, say) reads afresh."""
        prefetched, self._prefetched = self._prefetched, None
        return prefetched


def _scope_of(request: Request) -> tuple[str, str | None] | None:
    """The access the view will check first: (tenant, project), (tenant, None),
    or None for a URL that names no tenant."""
    kwargs = (getattr(request, "parser_context", None) or {}).get("kwargs") or {}
    tenant, project = kwargs.get("tenant"), kwargs.get("project")
    if not isinstance(tenant, str):
        return None
    return tenant, project if isinstance(project, str) else None


class TokenAccessAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`, as DRF's, with the access read alongside."""

    scope: tuple[str, str | None] | None = None

    def authenticate(self, request: Request) -> tuple[Any, TokenAuth] | None:
        self.scope = _scope_of(request)
        return super().authenticate(request)

    def authenticate_credentials(self, key: str) -> tuple[Any, TokenAuth]:
        if NUL in key:  # no token holds one, and PostgreSQL text cannot
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if self.scope is None:
            user, token = super().authenticate_credentials(key)
            return user, TokenAuth(token=token)
        tenant_slug, project_slug = self.scope
        row = access_sql.token_and_access_row(
            token_model=self.get_model(),
            key=key,
            tenant_slug=tenant_slug,
            project_slug=project_slug,
        )
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user = row.token.user
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        prefetched = PrefetchedAccess(
            tenant_slug=tenant_slug, project_slug=project_slug, row=row.access
        )
        return user, TokenAuth(token=row.token, _prefetched=prefetched)

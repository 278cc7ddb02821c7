"""API token authentication that also reads the caller's access, in the same query.

Nearly every API request names a tenant (and often a project) in its URL, and
its view first asks `agentdocs.permissions` for the caller's access there. DRF's
`TokenAuthentication` reads the token and its user in one query; the access
check would read the tenant, the role and the project in a second. Here both
come back from one statement, so a token-authenticated request to a tenant or
project pays one database round trip before its own work, as `GET /api/v1/ping`
does. The access row is handed to the permission module
(`permissions.remember_access`), which applies the same rules to it as to a row
it reads itself, and uses it for the first check of the same tenant and project
only: a later check in the request reads afresh.

A request whose URL names no tenant is authenticated by DRF's own
`TokenAuthentication`, unchanged.
"""

from __future__ import annotations

import functools
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.request import Request

from agentdocs import permissions
from agentdocs.api.parsers import NUL
from agentdocs.models import Tenant


def _scope_of(request: Request) -> tuple[str, tuple[str, ...]] | None:
    """The access the view will check first: ("project", (tenant, project)),
    ("tenant", (tenant,)), or None for a URL that names no tenant."""
    kwargs = (getattr(request, "parser_context", None) or {}).get("kwargs") or {}
    tenant, project = kwargs.get("tenant"), kwargs.get("project")
    if not isinstance(tenant, str):
        return None
    if isinstance(project, str):
        return "project", (tenant, project)
    return "tenant", (tenant,)


class TokenAccessAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`, as DRF's, with the access read alongside."""

    scope: tuple[str, tuple[str, ...]] | None = None

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        self.scope = _scope_of(request)
        return super().authenticate(request)

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        if NUL in key:  # no token holds one, and PostgreSQL text cannot
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if self.scope is None:
            return super().authenticate_credentials(key)
        kind, slugs = self.scope
        token_reader, user_reader = _readers(self.get_model())
        tenant_slug, *project_slug = slugs
        with connection.cursor() as cursor:
            sql = _token_and_access_sql(self.get_model(), kind)
            cursor.execute(sql, [tenant_slug, *project_slug, key])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token_end = len(token_reader.fields)
        user_end = token_end + len(user_reader.fields)
        token = token_reader.instance(row[:token_end])
        user = user_reader.instance(row[token_end:user_end])
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        token.user = user
        permissions.remember_access(
            user, permissions.PrefetchedAccess(kind=kind, slugs=slugs, row=row[user_end:])
        )
        return user, token


@functools.cache
def _readers(token_model) -> tuple[permissions.RowReader, permissions.RowReader]:
    return permissions.RowReader(token_model, "k"), permissions.RowReader(get_user_model(), "u")


@functools.cache
def _token_and_access_sql(token_model, kind: str) -> str:
    token_reader, user_reader = _readers(token_model)
    user_model = get_user_model()
    quote = connection.ops.quote_name
    user_id = f"u.{quote(user_model._meta.pk.column)}"
    token_user = f"k.{quote(token_model._meta.get_field('user').column)}"
    return (
        f"SELECT {token_reader.select}, {user_reader.select}, "
        f"{permissions.access_columns(kind, user=user_id)} "
        f"FROM {token_model._meta.db_table} k "
        f"JOIN {user_model._meta.db_table} u ON {user_id} = {token_user} "
        f"LEFT JOIN {Tenant._meta.db_table} t ON t.slug = %s {permissions.project_join(kind)} "
        f"WHERE k.{quote(token_model._meta.pk.column)} = %s"
    )

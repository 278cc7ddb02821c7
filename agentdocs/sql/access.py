"""The access row: a tenant, the user's membership role there and, for a project,
the project, in one statement; and the same row read together with an API token
and its user.

Every API request and page resolves access first, so this is the hottest query
in the product. The columns come from the models' metadata, so a new field is
picked up without touching this.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, models

from agentdocs.models import ApiToken, Membership, Project, Tenant
from agentdocs.sql import prepared


@dataclass(frozen=True)
class _RowReader:
    """Selects a model's concrete columns and turns them back into an instance,
    converting each value as the ORM does (SQLite, for one, returns datetimes as text)."""

    model: type[models.Model]
    alias: str

    @functools.cached_property
    def fields(self) -> list[models.Field]:
        return list(self.model._meta.concrete_fields)

    @functools.cached_property
    def select(self) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{self.alias}.{quote(field.column)}" for field in self.fields)

    @functools.cached_property
    def _pk_index(self) -> int:
        return self.fields.index(self.model._meta.pk)

    @functools.cached_property
    def _converters(self) -> list[tuple[Any, list[Any]]]:
        result = []
        for field in self.fields:
            column = field.get_col(self.model._meta.db_table)
            converters = connection.ops.get_db_converters(column) + field.get_db_converters(  # type: ignore[attr-defined]  # a Field method django-stubs does not declare
                connection
            )
            result.append((column, converters))
        return result

    def instance(self, values: tuple) -> Any:
        """The instance these column values load, or None for a LEFT JOIN that found no row."""
        if values[self._pk_index] is None:
            return None
        converted = []
        for value, (column, converters) in zip(values, self._converters, strict=True):
            for convert in converters:
                value = convert(value, column, connection)
            converted.append(value)
        names = [field.attname for field in self.fields]
        return self.model.from_db(connection.alias, names, converted)


_TENANT = _RowReader(Tenant, "t")
_PROJECT = _RowReader(Project, "p")


@dataclass(frozen=True)
class AccessRow:
    """What the access rules need: the tenant (None when no tenant has the slug), the
    user's membership role there (None for a non-member) and, when a project was
    asked for, the project (None when the tenant has no project of that slug)."""

    tenant: Tenant | None
    membership_role: str | None
    project: Project | None = None


def _access_columns(*, with_project: bool, user_id_sql: str = "%s") -> str:
    role = (
        f"(SELECT m.role FROM {Membership._meta.db_table} m "
        f"WHERE m.tenant_id = t.id AND m.user_id = {user_id_sql})"
    )
    columns = f"{_TENANT.select}, {role}"
    return f"{columns}, {_PROJECT.select}" if with_project else columns


def _project_join(*, with_project: bool) -> str:
    # A LEFT JOIN, so one query also tells a member that the tenant exists but the
    # project does not.
    if not with_project:
        return ""
    return f"LEFT JOIN {Project._meta.db_table} p ON p.tenant_id = t.id AND p.slug = %s"


def _access_row_of(values: tuple, *, with_project: bool) -> AccessRow:
    count = len(_TENANT.fields)
    tenant = _TENANT.instance(values[:count])
    project = _PROJECT.instance(values[count + 1 :]) if with_project else None
    if project is not None:
        project.tenant = tenant  # the tenant is already loaded: no second query for it
    return AccessRow(tenant=tenant, membership_role=values[count], project=project)


@functools.cache
def _access_sql(with_project: bool) -> str:
    return (
        f"SELECT {_access_columns(with_project=with_project)} FROM {Tenant._meta.db_table} t "
        f"{_project_join(with_project=with_project)} WHERE t.slug = %s"
    )


def access_row(*, user_id: int, tenant_slug: str, project_slug: str | None = None) -> AccessRow:
    """The access row of a user for a tenant or, with ``project_slug``, a project: one query."""
    with_project = project_slug is not None
    project_params = [project_slug] if with_project else []
    with prepared.cursor() as cursor:
        cursor.execute(_access_sql(with_project), [user_id, *project_params, tenant_slug])
        values = cursor.fetchone()
    if values is None:
        return AccessRow(tenant=None, membership_role=None)
    return _access_row_of(values, with_project=with_project)


@dataclass(frozen=True)
class TokenAccessRow:
    """An API token with its user (``token.user``) and that user's access row."""

    token: ApiToken
    access: AccessRow


@functools.cache
def _readers() -> tuple[_RowReader, _RowReader]:
    return _RowReader(ApiToken, "k"), _RowReader(get_user_model(), "u")


@functools.cache
def _token_and_access_sql(with_project: bool) -> str:
    token_model = ApiToken
    token_reader, user_reader = _readers()
    user_model = get_user_model()
    quote = connection.ops.quote_name
    user_id = f"u.{quote(user_model._meta.pk.column)}"
    token_user = f"k.{quote(token_model._meta.get_field('user').column)}"
    return (
        f"SELECT {token_reader.select}, {user_reader.select}, "
        f"{_access_columns(with_project=with_project, user_id_sql=user_id)} "
        f"FROM {token_model._meta.db_table} k "
        f"JOIN {user_model._meta.db_table} u ON {user_id} = {token_user} "
        f"LEFT JOIN {Tenant._meta.db_table} t ON t.slug = %s "
        f"{_project_join(with_project=with_project)} "
        f"WHERE k.{quote(token_model._meta.get_field('key_hash').column)} = %s"
    )


def token_and_access_row(
    *,
    key_hash: str,
    tenant_slug: str,
    project_slug: str | None = None,
) -> TokenAccessRow | None:
    """The API token whose key hashes to ``key_hash``, its user and the user's access
    row for the tenant or project, in one query; None for an unknown key."""
    with_project = project_slug is not None
    project_params = [project_slug] if with_project else []
    with prepared.cursor() as cursor:
        cursor.execute(
            _token_and_access_sql(with_project),
            [tenant_slug, *project_params, key_hash],
        )
        values = cursor.fetchone()
    if values is None:
        return None
    token_reader, user_reader = _readers()
    token_end = len(token_reader.fields)
    user_end = token_end + len(user_reader.fields)
    token = token_reader.instance(values[:token_end])
    token.user = user_reader.instance(values[token_end:user_end])
    return TokenAccessRow(
        token=token, access=_access_row_of(values[user_end:], with_project=with_project)
    )

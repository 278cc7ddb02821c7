"""The one place that decides who may read and write what.

Every API view and page resolves the tenant or project through this module,
then asks it before reading or writing. Outsiders (no membership in the tenant)
get NotFound for everything, so tenant and project names do not leak; members
without the right get Forbidden.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import connection, models

from agentdocs.core.errors import Forbidden, NotFound
from agentdocs.core.paths import is_reserved_path
from agentdocs.models import Membership, Project, Role, Tenant

AnyUser = AbstractBaseUser | AnonymousUser

_WRITERS = {Role.WRITER, Role.ADMIN}


@dataclass(frozen=True)
class Access:
    """What one user may do in one tenant (and, when given, one project)."""

    user: AnyUser
    tenant: Tenant
    role: Role
    project: Project | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == Role.ADMIN

    def is_reserved(self, path: str | None = None) -> bool:
        """The tenant's `_vance` project and any `_vance/` path are admin-only to write."""
        in_reserved_project = self.project is not None and self.project.is_reserved
        return in_reserved_project or (path is not None and is_reserved_path(path))

    def may_read(self, path: str | None = None) -> bool:
        return True  # every member reads everything in the tenant, `_vance` included

    def may_write(self, path: str | None = None) -> bool:
        if self.is_reserved(path):
            return self.is_admin
        return self.role in _WRITERS

    def require_write(self, path: str | None = None) -> None:
        if self.may_write(path):
            return
        if self.is_reserved(path):
            raise Forbidden(
                "The reserved `_vance` space is written by tenant admins only.", field="path"
            )
        raise Forbidden(f"Your role in this tenant is {self.role}; writing needs writer or admin.")

    def require_admin(self) -> None:
        if not self.is_admin:
            raise Forbidden("Only tenant admins may do this.")


def _effective_role(user: AnyUser, membership_role: str | None) -> Role | None:
    if getattr(user, "is_superuser", False):
        return Role.ADMIN
    return Role(membership_role) if membership_role else None


# Every API request and page resolves access first, so this is the hottest query in
# the product. It is written by hand once: the ORM took ten times longer to compile
# the same join and subquery than PostgreSQL took to run it. The columns come from
# the models' metadata, so a new field is picked up without touching this.


@dataclass(frozen=True)
class RowReader:
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
    def _converters(self) -> list[tuple[Any, list[Any]]]:
        result = []
        for field in self.fields:
            column = field.get_col(self.model._meta.db_table)
            converters = connection.ops.get_db_converters(column) + field.get_db_converters(
                connection
            )
            result.append((column, converters))
        return result

    def instance(self, values: tuple) -> Any:
        converted = []
        for value, (column, converters) in zip(values, self._converters, strict=True):
            for convert in converters:
                value = convert(value, column, connection)
            converted.append(value)
        names = [field.attname for field in self.fields]
        return self.model.from_db(connection.alias, names, converted)


_TENANT = RowReader(Tenant, "t")
_PROJECT = RowReader(Project, "p")
_TENANT_PK = _TENANT.fields.index(Tenant._meta.pk)
_PROJECT_PK = _PROJECT.fields.index(Project._meta.pk)


@functools.cache
def access_columns(kind: str, user: str = "%s") -> str:
    """The columns of an access row: the tenant, the user's role (``user`` is the SQL
    for the user's id) and, for a project, the project."""
    role = (
        f"(SELECT m.role FROM {Membership._meta.db_table} m "
        f"WHERE m.tenant_id = t.id AND m.user_id = {user})"
    )
    columns = f"{_TENANT.select}, {role}"
    return f"{columns}, {_PROJECT.select}" if kind == "project" else columns


def project_join(kind: str) -> str:
    # A LEFT JOIN, so one query also tells a member that the tenant exists but the
    # project does not.
    if kind != "project":
        return ""
    return f"LEFT JOIN {Project._meta.db_table} p ON p.tenant_id = t.id AND p.slug = %s"


@functools.cache
def _access_sql(kind: str) -> str:
    return (
        f"SELECT {access_columns(kind)} FROM {Tenant._meta.db_table} t {project_join(kind)} "
        "WHERE t.slug = %s"
    )


@dataclass(frozen=True)
class PrefetchedAccess:
    """An access row read together with the user, in the request's authentication
    (`agentdocs.api.authentication`): the first check for the same slugs uses it
    instead of asking the database again."""

    kind: str
    slugs: tuple[str, ...]
    row: tuple


_PREFETCHED = "_agentdocs_prefetched_access"


def remember_access(user: AnyUser, access: PrefetchedAccess) -> None:
    setattr(user, _PREFETCHED, access)


def _access_row(user: AnyUser, kind: str, slugs: tuple[str, ...]) -> tuple | None:
    if not user.is_authenticated:
        raise NotFound("No such tenant.", field="tenant")
    # Used once: a later check in the same request (after a write, say) reads afresh.
    prefetched = getattr(user, _PREFETCHED, None)
    if prefetched is not None:
        delattr(user, _PREFETCHED)
        if prefetched.kind == kind and prefetched.slugs == slugs:
            return prefetched.row
    tenant_slug, *project_slug = slugs
    with connection.cursor() as cursor:
        cursor.execute(_access_sql(kind), [user.pk, *project_slug, tenant_slug])
        return cursor.fetchone()


def _tenant_and_role(user: AnyUser, row: tuple | None) -> tuple[Tenant, Role]:
    """The tenant and the user's role, or NotFound alike for unknown and foreign tenants."""
    if row is None or row[_TENANT_PK] is None:
        raise NotFound("No such tenant.", field="tenant")
    count = len(_TENANT.fields)
    role = _effective_role(user, row[count])
    if role is None:
        raise NotFound("No such tenant.", field="tenant")
    return _TENANT.instance(row[:count]), role


def tenant_access(user: AnyUser, tenant_slug: str) -> Access:
    """The user's access to a tenant, in one query; NotFound for outsiders."""
    tenant, role = _tenant_and_role(user, _access_row(user, "tenant", (tenant_slug,)))
    return Access(user=user, tenant=tenant, role=role)


def project_access(user: AnyUser, tenant_slug: str, project_slug: str) -> Access:
    """The user's access to a project, in one query; NotFound for outsiders.

    An outsider cannot tell an unknown tenant from a known one: both are
    "No such tenant". Only a member learns that a project does not exist.
    """
    row = _access_row(user, "project", (tenant_slug, project_slug))
    tenant, role = _tenant_and_role(user, row)
    project_values = row[len(_TENANT.fields) + 1 :]
    if project_values[_PROJECT_PK] is None:
        raise NotFound("No such project.", field="project")
    project = _PROJECT.instance(project_values)
    project.tenant = tenant  # the tenant is already loaded: no second query for it
    return Access(user=user, tenant=tenant, role=role, project=project)


def may_create_tenants(user: AnyUser) -> bool:
    if not user.is_authenticated:
        return False
    if settings.AGENTDOCS_TENANT_CREATORS == "authenticated":
        return True
    return bool(getattr(user, "is_superuser", False))

"""The one place that decides who may read and write what.

Every API view and page resolves the tenant or project through this module,
then asks it before reading or writing. Outsiders (no membership in the tenant)
get NotFound for everything, so tenant and project names do not leak; members
without the right get Forbidden.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import OuterRef, Subquery

from agentdocs.errors import Forbidden, NotFound
from agentdocs.models import Membership, Project, Role, Tenant
from agentdocs.paths import is_reserved_path

AnyUser = AbstractBaseUser | AnonymousUser

_WRITERS = {Role.WRITER, Role.ADMIN}


def _role_subquery(user: AnyUser, tenant_ref: str) -> Subquery:
    return Subquery(
        Membership.objects.filter(user_id=user.pk, tenant_id=OuterRef(tenant_ref)).values("role")[
            :1
        ]
    )


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


def tenant_access(user: AnyUser, tenant_slug: str) -> Access:
    """The user's access to a tenant, in one query; NotFound for outsiders."""
    if not user.is_authenticated:
        raise NotFound("No such tenant.", field="tenant")
    tenant = (
        Tenant.objects.filter(slug=tenant_slug)
        .annotate(member_role=_role_subquery(user, "pk"))
        .first()
    )
    role = _effective_role(user, tenant.member_role) if tenant else None
    if tenant is None or role is None:
        raise NotFound("No such tenant.", field="tenant")
    return Access(user=user, tenant=tenant, role=role)


def project_access(user: AnyUser, tenant_slug: str, project_slug: str) -> Access:
    """The user's access to a project, in one query; NotFound for outsiders.

    An outsider cannot tell an unknown tenant from a known one: both are
    "No such tenant".
    """
    if not user.is_authenticated:
        raise NotFound("No such tenant.", field="tenant")
    project = (
        Project.objects.select_related("tenant")
        .filter(tenant__slug=tenant_slug, slug=project_slug)
        .annotate(member_role=_role_subquery(user, "tenant_id"))
        .first()
    )
    if project is None:
        # Only a member may learn that the tenant exists but the project does not.
        tenant_access(user, tenant_slug)
        raise NotFound("No such project.", field="project")
    role = _effective_role(user, project.member_role)
    if role is None:
        raise NotFound("No such tenant.", field="tenant")
    return Access(user=user, tenant=project.tenant, role=role, project=project)


def may_create_tenants(user: AnyUser) -> bool:
    if not user.is_authenticated:
        return False
    if settings.AGENTDOCS_TENANT_CREATORS == "authenticated":
        return True
    return bool(getattr(user, "is_superuser", False))

"""Tenants, projects and memberships."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from agentdocs.core.errors import AlreadyExists, InvalidInput, NotFound, Unprocessable
from agentdocs.core.paths import looks_reserved
from agentdocs.models import RESERVED_PROJECT, ChangeType, Membership, Project, Role, Tenant
from agentdocs.models.history import mark_change

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")


def _validate_slug(slug: object, *, field: str = "slug", allow_reserved: bool = False) -> str:
    if not isinstance(slug, str):
        raise InvalidInput("The slug must be a string.", field=field)
    if slug != RESERVED_PROJECT and looks_reserved(slug) and not allow_reserved:
        raise InvalidInput(
            f"The slug {slug!r} looks like the reserved `_vance` project, which is "
            "created with the tenant; choose one that cannot be mistaken for it.",
            field=field,
        )
    if slug.startswith("_") and not allow_reserved:
        raise InvalidInput(
            "Slugs starting with '_' are reserved (the tenant-wide `_vance` project "
            "is created with the tenant).",
            field=field,
        )
    if not _SLUG.match(slug):
        raise InvalidInput(
            "A slug is 1-64 characters of lowercase letters, digits and '-', "
            "starting with a letter or digit.",
            field=field,
        )
    return slug


def _validate_name(name: object, *, field: str = "name") -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("The name must be a non-empty string.", field=field)
    if len(name) > 200:
        raise InvalidInput("The name is longer than 200 characters.", field=field)
    return name.strip()


@transaction.atomic
def tenant_create(*, slug: str, name: str, user: User | None) -> Tenant:
    """Create a tenant with its reserved `_vance` project; the creator becomes its admin."""
    _validate_slug(slug)
    name = _validate_name(name)
    if Tenant.objects.filter(slug=slug).exists():
        raise AlreadyExists(f"A tenant {slug!r} already exists.", field="slug")
    try:
        with transaction.atomic():
            tenant = mark_change(
                Tenant(slug=slug, name=name),
                user=user,
                reason="Tenant created",
                change_type=ChangeType.CREATED,
            )
            tenant.save()
    except IntegrityError:
        raise AlreadyExists(f"A tenant {slug!r} already exists.", field="slug") from None
    mark_change(
        Project(tenant=tenant, slug=RESERVED_PROJECT, name="Tenant-wide (_vance)"),
        user=user,
        reason="Reserved project created with the tenant",
        change_type=ChangeType.CREATED,
    ).save()
    if user is not None:
        mark_change(
            Membership(user=user, tenant=tenant, role=Role.ADMIN),
            user=user,
            reason="Tenant creator",
            change_type=ChangeType.CREATED,
        ).save()
    return tenant


def project_create(*, tenant: Tenant, slug: str, name: str, user: User | None) -> Project:
    _validate_slug(slug)
    name = _validate_name(name)
    try:
        with transaction.atomic():
            project = mark_change(
                Project(tenant=tenant, slug=slug, name=name),
                user=user,
                reason="Project created",
                change_type=ChangeType.CREATED,
            )
            project.save()
    except IntegrityError:
        raise AlreadyExists(
            f"A project {slug!r} already exists in this tenant.", field="slug"
        ) from None
    return project


def _validate_role(role: object) -> Role:
    if not isinstance(role, str) or role not in Role.values:
        raise InvalidInput(f"The role must be one of {', '.join(Role.values)}.", field="role")
    return Role(role)


def _other_admins_exist(tenant: Tenant, user_id: int) -> bool:
    return (
        Membership.objects.filter(tenant=tenant, role=Role.ADMIN).exclude(user_id=user_id).exists()
    )


@transaction.atomic
def membership_set(
    *, tenant: Tenant, username: str, role: str, actor: User, reason: str = ""
) -> tuple[Membership, bool]:
    """Give ``username`` ``role`` in the tenant. Returns (membership, created)."""
    role = _validate_role(role)
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"No user {username!r}.", field="username")
    # Lock the tenant's admin rows so two demotions cannot both pass the last-admin check.
    list(Membership.objects.select_for_update().filter(tenant=tenant, role=Role.ADMIN))
    membership = Membership.objects.filter(tenant=tenant, user=user).first()
    if membership is None:
        membership = mark_change(
            Membership(tenant=tenant, user=user, role=role),
            user=actor,
            reason=reason or f"Added as {role}",
            change_type=ChangeType.CREATED,
        )
        membership.save()
        return membership, True
    if membership.role == role:
        return membership, False
    if membership.role == Role.ADMIN and not _other_admins_exist(tenant, user.pk):
        raise Unprocessable(
            "This is the tenant's last admin; make someone else admin first.", field="role"
        )
    membership.role = role
    mark_change(
        membership,
        user=actor,
        reason=reason or f"Role changed to {role}",
        change_type=ChangeType.UPDATED,
    ).save()
    return membership, False


@transaction.atomic
def membership_remove(*, tenant: Tenant, username: str, actor: User, reason: str = "") -> None:
    list(Membership.objects.select_for_update().filter(tenant=tenant, role=Role.ADMIN))
    membership = (
        Membership.objects.select_related("user")
        .filter(tenant=tenant, user__username=username)
        .first()
    )
    if membership is None:
        raise NotFound(f"{username!r} is not a member of this tenant.", field="username")
    if membership.role == Role.ADMIN and not _other_admins_exist(tenant, membership.user_id):
        raise Unprocessable(
            "This is the tenant's last admin and cannot be removed.", field="username"
        )
    mark_change(membership, user=actor, reason=reason or "Removed", change_type=ChangeType.DELETED)
    membership.delete()

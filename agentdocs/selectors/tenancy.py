"""Reads of tenants, projects, memberships and invitations."""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, Subquery

from agentdocs.core.errors import NotFound
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.models import (
    RESERVED_PROJECT,
    Document,
    Invitation,
    InvitationState,
    Membership,
    Project,
    Tenant,
)


def tenant_list_for(*, user) -> QuerySet[Tenant]:
    if user.is_superuser:
        return Tenant.objects.order_by("slug")
    return Tenant.objects.filter(memberships__user=user).order_by("slug")


def tenant_overview_for(*, user, projects_shown: int = 12) -> QuerySet[Tenant]:
    """The user's tenants with their role (`member_role`), their number of projects
    (`project_count`) and the first ``projects_shown`` of them (`shown_projects`), each
    carrying its count of live documents (`document_count`): a tenant of a thousand
    projects costs the home page what a small one does."""
    projects = Project.objects.annotate(
        document_count=Count("documents", filter=Q(documents__is_deleted=False))
    ).order_by("slug")
    role = Membership.objects.filter(user_id=user.pk, tenant_id=OuterRef("pk")).values("role")[:1]
    count = (
        Project.objects.filter(tenant_id=OuterRef("pk"))
        .order_by()
        .values("tenant_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        tenant_list_for(user=user)
        .annotate(member_role=Subquery(role), project_count=Subquery(count))
        .prefetch_related(
            Prefetch("projects", queryset=projects[:projects_shown], to_attr="shown_projects")
        )
    )


def project_list(*, tenant: Tenant) -> QuerySet[Project]:
    return Project.objects.filter(tenant=tenant).order_by("slug")


def project_list_with_document(*, tenant: Tenant, path: str) -> QuerySet[Project]:
    """The tenant's projects other than `_vance`, each marked `has_document` when it holds
    a live document at ``path``: the reach of the tenant-wide `_vance` document there."""
    own = Document.objects.filter(project=OuterRef("pk"), path=path, is_deleted=False)
    return (
        Project.objects.filter(tenant=tenant)
        .exclude(slug=RESERVED_PROJECT)
        .annotate(has_document=Exists(own))
        .order_by("slug")
    )


def member_list(*, tenant: Tenant) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(tenant=tenant).select_related("user").order_by("user__username")
    )


def member_roles(*, tenant_id: int, user_ids: Collection[int]) -> dict[int, str]:
    """The role in the tenant of each of ``user_ids`` that is a member: one query."""
    if not user_ids:
        return {}
    rows = Membership.objects.filter(tenant_id=tenant_id, user_id__in=set(user_ids))
    return dict(rows.values_list("user_id", "role"))


def _invitation_id(invitation_id: object) -> int:
    number = positive_int(invitation_id, maximum=MAX_ID)
    if number is None:
        raise NotFound("No such invitation.", field="id")
    return number


def invitation_list_in(*, tenant: Tenant) -> QuerySet[Invitation]:
    """The tenant's pending invitations, newest first."""
    return (
        Invitation.objects.filter(tenant=tenant, state=InvitationState.PENDING)
        .select_related("tenant", "invited_by")
        .order_by("-created_at", "-id")
    )


def invitation_get_in(*, tenant: Tenant, invitation_id: object) -> Invitation:
    """One of the tenant's invitations, whatever its state; another tenant's is missing."""
    invitation = (
        Invitation.objects.filter(tenant=tenant, pk=_invitation_id(invitation_id))
        .select_related("tenant", "invited_by")
        .first()
    )
    if invitation is None:
        raise NotFound("No such invitation in this tenant.", field="id")
    return invitation


def _invitations_for(user) -> QuerySet[Invitation]:
    """Every invitation meant for ``user``, whatever its state: by their username, or by
    their email (case-insensitively) as it is now."""
    meant_for = Q(username=user.get_username())
    if user.email:
        meant_for |= Q(email__iexact=user.email)
    return Invitation.objects.filter(meant_for).select_related("tenant", "invited_by")


def invitation_list_for(*, user, tenant_id: int | None = None) -> QuerySet[Invitation]:
    """The user's pending invitations, newest first (only those to ``tenant_id``
    when given: a tenant-bound token sees its own tenant's)."""
    invitations = _invitations_for(user).filter(state=InvitationState.PENDING)
    if tenant_id is not None:
        invitations = invitations.filter(tenant_id=tenant_id)
    return invitations.order_by("-created_at", "-id")


def invitation_get_for(*, user, invitation_id: object, tenant_id: int | None = None) -> Invitation:
    """One invitation meant for the user, whatever its state; someone else's is as
    missing as one that never was."""
    invitations = _invitations_for(user).filter(pk=_invitation_id(invitation_id))
    if tenant_id is not None:
        invitations = invitations.filter(tenant_id=tenant_id)
    invitation = invitations.first()
    if invitation is None:
        raise NotFound("No such invitation.", field="id")
    return invitation


def tenant_ids() -> list[int]:
    """Every tenant's id, in order (the daily walk of every audit chain)."""
    return list(Tenant.objects.order_by("pk").values_list("pk", flat=True))

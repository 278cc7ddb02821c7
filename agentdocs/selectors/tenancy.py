"""Reads of tenants, projects and memberships."""

from __future__ import annotations

from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, Subquery

from agentdocs.models import RESERVED_PROJECT, Document, Membership, Project, Tenant


def tenant_list_for(*, user) -> QuerySet[Tenant]:
    if user.is_superuser:
        return Tenant.objects.order_by("slug")
    return Tenant.objects.filter(memberships__user=user).order_by("slug")


def tenant_overview_for(*, user) -> QuerySet[Tenant]:
    """The user's tenants with their role (`member_role`) and projects, each project
    carrying its count of live documents (`document_count`)."""
    projects = Project.objects.annotate(
        document_count=Count("documents", filter=Q(documents__is_deleted=False))
    ).order_by("slug")
    role = Membership.objects.filter(user_id=user.pk, tenant_id=OuterRef("pk")).values("role")[:1]
    return (
        tenant_list_for(user=user)
        .annotate(member_role=Subquery(role))
        .prefetch_related(Prefetch("projects", queryset=projects))
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

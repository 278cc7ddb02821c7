"""Reads that cross relations. Callers have already resolved access through
`agentdocs.permissions`, so these take the project or tenant it returned."""

from __future__ import annotations

from django.db.models import QuerySet

from agentdocs.models import Document, Membership, Project, Recipe, Setting, Tenant


def document_list(*, project: Project, prefix: str = "") -> QuerySet[Document]:
    documents = (
        Document.objects.filter(project=project, is_deleted=False)
        .select_related("updated_by")
        .defer("body")
        .order_by("path")
    )
    if prefix:
        documents = documents.filter(path__startswith=prefix)
    return documents


def document_history(*, document: Document) -> QuerySet:
    """Every version of a document, newest first, without the bodies."""
    return (
        document.history.select_related("history_user")
        .defer("body")
        .order_by("-version", "-history_id")
    )


def tenant_list_for(*, user) -> QuerySet[Tenant]:
    if user.is_superuser:
        return Tenant.objects.order_by("slug")
    return Tenant.objects.filter(memberships__user=user).order_by("slug")


def project_list(*, tenant: Tenant) -> QuerySet[Project]:
    return Project.objects.filter(tenant=tenant).order_by("slug")


def member_list(*, tenant: Tenant) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(tenant=tenant).select_related("user").order_by("user__username")
    )


def setting_list(*, tenant: Tenant, project: Project | None) -> QuerySet[Setting]:
    return (
        Setting.objects.filter(tenant=tenant, project=project)
        .select_related("updated_by")
        .order_by("key")
    )


def recipe_list(*, tenant: Tenant) -> QuerySet[Recipe]:
    return Recipe.objects.filter(tenant=tenant).select_related("updated_by").order_by("name")

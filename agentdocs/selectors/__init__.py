"""Reads that cross relations. Callers have already resolved access through
`agentdocs.permissions`, so these take the project or tenant it returned."""

from __future__ import annotations

from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, Subquery

from agentdocs.core.errors import NotFound
from agentdocs.models import (
    RESERVED_PROJECT,
    BindingRecord,
    Document,
    Membership,
    Project,
    ProviderMapping,
    Recipe,
    Setting,
    Tenant,
)


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


def deleted_document_list(*, project: Project) -> QuerySet[Document]:
    """Deleted documents, kept with their history so they can be restored."""
    return (
        Document.objects.filter(project=project, is_deleted=True)
        .select_related("updated_by")
        .defer("body")
        .order_by("path")
    )


def tenant_wide_document(*, tenant: Tenant, path: str) -> Document | None:
    """The live document at ``path`` in the tenant's `_vance` project, without its body."""
    return (
        Document.objects.filter(
            project__tenant=tenant, project__slug=RESERVED_PROJECT, path=path, is_deleted=False
        )
        .select_related("updated_by")
        .defer("body")
        .first()
    )


def cascade_documents(*, project: Project, path: str) -> list[Document]:
    """The live documents at ``path`` in the project and in its tenant's `_vance` project,
    the project's first: the two database levels of the cascade, in one query."""
    documents = (
        Document.objects.filter(
            project__tenant_id=project.tenant_id,
            project__slug__in={project.slug, RESERVED_PROJECT},
            path=path,
            is_deleted=False,
        )
        .select_related("project", "updated_by")
        .order_by("project__slug")
    )
    return sorted(documents, key=lambda document: document.project_id != project.pk)


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


def setting_list(*, tenant: Tenant, project: Project | None) -> QuerySet[Setting]:
    return (
        Setting.objects.filter(tenant=tenant, project=project)
        .select_related("updated_by")
        .order_by("key")
    )


def recipe_list(*, tenant: Tenant) -> QuerySet[Recipe]:
    return Recipe.objects.filter(tenant=tenant).select_related("updated_by").order_by("name")


def provider_list(*, tenant: Tenant) -> QuerySet[ProviderMapping]:
    return (
        ProviderMapping.objects.filter(tenant=tenant)
        .select_related("project", "updated_by")
        .order_by("name")
    )


def binding_record_list(
    *, project: Project, process: str | None = None, problems: bool | None = None
) -> QuerySet[BindingRecord]:
    """A project's binding records, newest first, without their record JSON."""
    records = (
        BindingRecord.objects.filter(project=project)
        .select_related("created_by")
        .defer("record")
        .order_by("-created_at", "-id")
    )
    if process is not None:
        records = records.filter(process=process)
    if problems is True:
        records = records.filter(problem_count__gt=0)
    elif problems is False:
        records = records.filter(problem_count=0)
    return records


def binding_record_get(*, project: Project, record_id: int) -> BindingRecord:
    record = (
        BindingRecord.objects.select_related("created_by")
        .filter(project=project, pk=record_id)
        .first()
    )
    if record is None:
        raise NotFound(f"This project has no binding record {record_id}.", field="record")
    return record

"""Reads of repositories and their checks, scoped to the project (or tenant)
`agentdocs/permissions.py` returned. Their state against the export now is the
service's (`agentdocs.services.repositories`): it needs the render's reads."""

from __future__ import annotations

from django.db.models import QuerySet
from django.db.models.fields.json import KeyTextTransform, KeyTransform

from agentdocs.core.errors import NotFound
from agentdocs.models import Project, Repository, RepositoryCheck, Tenant

MAX_CHECKS = 100
MAX_RUNS = 100


def repository_list(*, project: Project) -> QuerySet[Repository]:
    """A project's repositories, by remote (or name) and branch, with their last run."""
    return (
        Repository.objects.filter(project=project)
        .select_related("last_run")
        .defer("last_run__record")
        .order_by("remote", "name", "branch", "id")
    )


def repository_list_for_tenant(*, tenant: Tenant) -> QuerySet[Repository]:
    """Every repository of the tenant's projects (the tenant page counts them)."""
    return (
        Repository.objects.filter(project__tenant=tenant)
        .select_related("project")
        .order_by("project_id", "id")
    )


def repository_get(*, project: Project, repository_id: int) -> Repository:
    repository = repository_list(project=project).filter(pk=repository_id).first()
    if repository is None:
        raise NotFound(f"This project has no repository {repository_id}.", field="repository")
    return repository


def repository_checks(*, repository: Repository, limit: int = MAX_CHECKS) -> list[RepositoryCheck]:
    """Its reports, newest first (the newest ``limit``)."""
    return list(
        RepositoryCheck.objects.filter(repository=repository)
        .select_related("reported_by")
        .order_by("-reported_at", "-id")[:limit]
    )


def repository_runs(*, repository: Repository, limit: int = MAX_RUNS) -> list[RepositoryCheck]:
    """Its bound runs (the reports of `bind --repo`, with their record but not its
    JSON: `run_tool` is the tool the record names), newest first."""
    return list(
        RepositoryCheck.objects.filter(repository=repository, binding__isnull=False)
        .select_related("binding")
        .defer("binding__record")
        .annotate(run_tool=KeyTextTransform("tool", KeyTransform("repository", "binding__record")))
        .order_by("-reported_at", "-id")[:limit]
    )

"""Reads of repositories and their checks, scoped to the project (or tenant)
`agentdocs/permissions.py` returned. Their state against the export now is the
service's (`agentdocs.services.repositories`): it needs the render's reads."""

from __future__ import annotations

from typing import TypedDict

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.fields.json import KeyTextTransform, KeyTransform

from agentdocs.core.errors import NotFound
from agentdocs.models import (
    RESERVED_PROJECT,
    Document,
    DocumentLabel,
    Project,
    Repository,
    RepositoryCheck,
    Setting,
    Tenant,
)

# A page of a repository's checks, in the API (its detail shows the first): each check
# holds up to AGENTDOCS_REPOSITORY_MAX_FILES file states, so a page holds few and stays
# under 1 MB (docs/repositories.md#bounds). A page of runs is the API's usual page.
CHECKS_PER_PAGE = 8
RUNS_PER_PAGE = 50


def repository_list(*, project: Project) -> QuerySet[Repository]:
    """A project's repositories, by remote (or name) and branch, with their last run."""
    return (
        Repository.objects.filter(project=project)
        .select_related("last_run")
        .defer("last_run__record")
        .order_by("remote", "name", "branch", "id")
    )


class RepositoryCounts(TypedDict):
    total: int
    in_sync: int
    behind: int
    edited_locally: int
    never_checked: int


def repository_counts(*, tenant: Tenant) -> RepositoryCounts:
    """How many repositories report to the tenant's projects, by state, in one query
    whatever their number (the tenant page).

    The state is the one each repository's last report gave, except that one reported
    in sync counts as behind once its project's rules changed on the server since
    (a document of the project or of `_vance`, a label of one, or a setting of the
    tenant or the project). Exactly whether that changed its export is the project's
    Repositories page's to say: it builds the export now, which costs a render's reads
    per project, too much for a page that counts every project's repositories."""
    since = OuterRef("last_seen")

    def in_its_project(via: str = "") -> Q:
        """The repository's project or the tenant's `_vance`, reached through ``via``."""
        return Q(**{f"{via}project_id": OuterRef("project_id")}) | Q(
            **{f"{via}project__tenant_id": tenant.pk, f"{via}project__slug": RESERVED_PROJECT}
        )

    changed = (
        Exists(Document.objects.filter(in_its_project(), updated_at__gt=since))
        | Exists(DocumentLabel.objects.filter(in_its_project("document__"), moved_at__gt=since))
        | Exists(
            Setting.objects.filter(
                Q(project_id=OuterRef("project_id")) | Q(project__isnull=True),
                tenant_id=tenant.pk,
                updated_at__gt=since,
            )
        )
    )
    rows = (
        Repository.objects.filter(project__tenant=tenant)
        .annotate(changed=changed)
        .values("state", "changed")
        .annotate(n=Count("id"))
        .order_by()
    )
    counts: RepositoryCounts = {
        "total": 0,
        "in_sync": 0,
        "behind": 0,
        "edited_locally": 0,
        "never_checked": 0,
    }
    for row in rows:
        state = "behind" if row["state"] == "in-sync" and row["changed"] else row["state"]
        counts["total"] += row["n"]
        key = state.replace("-", "_")
        if key in counts:
            counts[key] += row["n"]  # type: ignore[literal-required]
    return counts


def repository_get(*, project: Project, repository_id: int) -> Repository:
    repository = repository_list(project=project).filter(pk=repository_id).first()
    if repository is None:
        raise NotFound(f"This project has no repository {repository_id}.", field="repository")
    return repository


def repository_checks(*, repository: Repository) -> QuerySet[RepositoryCheck]:
    """Its reports, newest first (a page of them is the caller's to take)."""
    return (
        RepositoryCheck.objects.filter(repository=repository)
        .select_related("reported_by")
        .order_by("-reported_at", "-id")
    )


def repository_runs(*, repository: Repository) -> QuerySet[RepositoryCheck]:
    """Its bound runs (the reports of `bind --repo`, with their record but not its
    JSON: `run_tool` is the tool the record names), newest first."""
    return (
        RepositoryCheck.objects.filter(repository=repository, binding__isnull=False)
        .select_related("binding")
        .defer("binding__record")
        .annotate(run_tool=KeyTextTransform("tool", KeyTransform("repository", "binding__record")))
        .order_by("-reported_at", "-id")
    )

"""Reads of repositories and their checks, scoped to the project (or tenant)
`agentdocs/permissions.py` returned, and each repository's state against the server's
export now.

The state is computed on read: the export of each distinct set of formats (and recipe
and profile) is built once per request from the render's reads (one query, or none
while the shared cache is current), whatever the number of repositories, and at most
`AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST` sets per request: a repository past them is
`not-computed` in that answer. Formats are kept sorted, so an order is never a set of
its own."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from django.conf import settings
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.fields.json import KeyTextTransform, KeyTransform

from agentdocs.core import repositories as core
from agentdocs.core.errors import AgentdocsError, NotFound
from agentdocs.core.export import build_export
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
from agentdocs.selectors.export import export_skills
from agentdocs.selectors.memory_block import memory_block_inputs

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


# The state against the export now


ExportKey = tuple[str, str, str]  # formats, recipe, profile


@dataclass(frozen=True)
class RepositoryStatus:
    """A repository with its state against the server's export now."""

    repository: Repository
    current_export_sha256: str | None
    state: str
    behind_by: dict[str, int] = field(default_factory=dict)
    created: bool = False  # by this report: its first


def _key(repository: Repository) -> ExportKey:
    # Normalized again: a repository reported before formats were kept sorted.
    formats = core.normal_formats(repository.formats.split(","))
    return (formats, repository.recipe, repository.profile)


def exports_per_request() -> int:
    return settings.AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST


def current_exports(
    *, project: Project, keys: Iterable[ExportKey], limit: int | None = None
) -> dict[ExportKey, core.CurrentExport | None]:
    """The server's export now of each (formats, recipe, profile): the render's reads
    once per recipe and profile, the export once per key; None where it cannot be made
    (a recipe since deleted). With ``limit``, only the first ``limit`` distinct keys
    are built; the others are missing from the answer (not computed)."""
    inputs: dict[tuple[str, str], Any] = {}
    found: dict[ExportKey, core.CurrentExport | None] = {}
    distinct = list(dict.fromkeys(keys))
    for key in distinct if limit is None else distinct[:limit]:
        formats, recipe, profile = key
        if (recipe, profile) not in inputs:
            try:
                inputs[(recipe, profile)] = memory_block_inputs(
                    project=project, recipe_name=recipe or None, profile_name=profile or None
                )
            except AgentdocsError:
                inputs[(recipe, profile)] = None
        read = inputs[(recipe, profile)]
        if read is None:
            found[key] = None
            continue
        skills = export_skills(tenant_id=project.tenant_id, inputs=read)
        exports = [
            build_export(
                read,
                tenant=project.tenant.slug,
                project=project.slug,
                format=name,
                skills=skills,
            )
            for name in formats.split(",")
        ]
        found[key] = core.current_export(exports)
    return found


def repository_status_of(
    repository: Repository, now: core.CurrentExport | None
) -> RepositoryStatus:
    """``repository``'s state against ``now``, the server's export of its formats now
    (`current_exports`; None: it cannot be made)."""
    current = now.sha256 if now is not None else None
    state = core.repository_state(
        files=repository.files,
        export_sha256=repository.export_sha256,
        current_sha256=current,
    )
    behind: dict[str, int] = {}
    if state == core.BEHIND and now is not None and repository.baseline:
        behind = core.behind_by(baseline=repository.baseline, now=now.sources)
    return RepositoryStatus(
        repository=repository, current_export_sha256=current, state=state, behind_by=behind
    )


def _not_computed(repository: Repository) -> RepositoryStatus:
    return RepositoryStatus(
        repository=repository, current_export_sha256=None, state=core.NOT_COMPUTED
    )


def repository_statuses(
    *, project: Project, repositories: Iterable[Repository]
) -> list[RepositoryStatus]:
    """Each repository with its state now, in order; past the request's budget of
    exports (`exports_per_request`), a repository whose export is not among those built
    is `not-computed`."""
    rows = list(repositories)
    exports = current_exports(
        project=project, keys=(_key(row) for row in rows), limit=exports_per_request()
    )
    return [
        repository_status_of(row, exports[_key(row)])
        if _key(row) in exports
        else _not_computed(row)
        for row in rows
    ]


def repository_list_status(*, project: Project) -> list[RepositoryStatus]:
    """A project's repositories with their state now: a constant number of queries."""
    return repository_statuses(project=project, repositories=repository_list(project=project))


def repository_status(*, project: Project, repository_id: int) -> RepositoryStatus:
    repository = repository_get(project=project, repository_id=repository_id)
    return repository_statuses(project=project, repositories=[repository])[0]

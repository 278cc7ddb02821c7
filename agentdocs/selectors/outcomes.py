"""Reading run outcomes: a run's or a project's, each with whether it is current (no
later outcome supersedes it), and the binding record a process's report goes to."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, F, QuerySet

from agentdocs.core.cohorts import CohortSums, Comparison, compare_cohorts
from agentdocs.core.errors import NotFound
from agentdocs.models import BindingRecord, Outcome, Project
from agentdocs.sql import cohorts as cohort_sql

CohortBy = cohort_sql.CohortBy
COHORTS_BY: tuple[CohortBy, ...] = ("label", "version", "recipe")


def outcome_list(
    *,
    project: Project,
    binding: BindingRecord | None = None,
    process: str | None = None,
    name: str | None = None,
) -> QuerySet[Outcome]:
    """The project's outcomes, oldest first, each with ``superseded_by_id`` (None while
    current); only those of ``binding``'s run, of ``process``, or named ``name``."""
    outcomes = Outcome.objects.filter(project=project)
    if binding is not None:
        outcomes = outcomes.filter(process=binding.process)
    if process is not None:
        outcomes = outcomes.filter(process=process)
    if name is not None:
        outcomes = outcomes.filter(name=name)
    return (
        outcomes.select_related("reported_by", "reported_with")
        .annotate(superseded_by_id=F("superseded_by__id"))
        .order_by("reported_at", "id")
    )


def binding_record_of_process(*, project: Project, process: str) -> BindingRecord:
    """The newest binding record of ``process`` in the project: where its outcomes go."""
    record = (
        BindingRecord.objects.filter(project=project, process=process)
        .select_related("tenant", "project")
        .order_by("-created_at", "-id")
        .first()
    )
    if record is None:
        raise NotFound(
            f"This project has no binding record of process {process!r}: bind the run first.",
            field="process",
        )
    return record


def _key(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def outcome_cohorts(
    *,
    project: Project,
    metric: str,
    by: CohortBy,
    document: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> tuple[list[CohortSums], bool | None]:
    """The project's runs (binding records made in [since, until)) grouped by what they
    saw, each cohort with its count of runs (processes) and the count, sum and sum of
    squares of its runs' current ``metric`` outcomes; and whether the metric is a yes/no
    (None: no run reported it). Two queries, whatever the number of runs
    (`agentdocs.sql.cohorts`)."""
    cohorts = [
        CohortSums(
            key=_key(row.key),
            runs=row.runs,
            with_metric=row.with_metric or 0,
            total=float(row.total or 0.0),
            squares=float(row.squares or 0.0),
        )
        for row in cohort_sql.cohort_rows(
            project_id=project.pk,
            metric=metric,
            by=by,
            document=document,
            since=since,
            until=until,
        )
    ]
    # Versions in their order (v9 before v10), others by name; the runs that saw none last.
    cohorts.sort(
        key=lambda c: (c.key is None, len(c.key or "") if by == "version" else 0, c.key or "")
    )
    kind = (
        Outcome.objects.filter(project=project, name=metric)
        .values_list("is_bool", flat=True)
        .first()
    )
    return cohorts, kind


class OutcomeComparison(Comparison):
    metric: str
    by: str
    document: str | None
    lower_is_better: bool


def outcome_comparison(
    *,
    project: Project,
    metric: str,
    by: CohortBy,
    document: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    baseline: str | None = None,
    lower_is_better: bool = False,
    effect: float | None = None,
) -> OutcomeComparison:
    """The project's runs grouped by what they saw and compared on ``metric``
    (`outcome_cohorts`, `agentdocs.core.cohorts.compare_cohorts`)."""
    cohorts, is_bool = outcome_cohorts(
        project=project, metric=metric, by=by, document=document, since=since, until=until
    )
    comparison = compare_cohorts(
        cohorts,
        is_bool=is_bool,
        baseline=baseline,
        lower_is_better=lower_is_better,
        effect=effect,
    )
    return {
        **comparison,
        "metric": metric,
        "by": by,
        "document": document,
        "lower_is_better": lower_is_better,
    }


CANARY, PRODUCTION = "canary", "production"


def top_metrics(*, project: Project, limit: int = 3) -> list[str]:
    """The project's most reported outcome names (current outcomes), most first."""
    return list(
        Outcome.objects.filter(project=project, superseded_by__isnull=True)
        .values("name")
        .annotate(reported=Count("id"))
        .order_by("-reported", "name")
        .values_list("name", flat=True)[:limit]
    )


def canary_comparisons(*, project: Project, limit: int = 3) -> list[OutcomeComparison]:
    """`canary` against `production` (by label) on the project's top metrics, each
    with those two cohorts only; none when no run reported an outcome."""
    found: list[OutcomeComparison] = []
    for metric in top_metrics(project=project, limit=limit):
        comparison = outcome_comparison(project=project, metric=metric, by="label")
        if comparison["baseline"] != PRODUCTION:
            continue
        cohorts = [c for c in comparison["cohorts"] if c["cohort"] in (CANARY, PRODUCTION)]
        if any(c["cohort"] == CANARY for c in cohorts):
            comparison["cohorts"] = cohorts
            found.append(comparison)
    return found

"""Runs for the outcome tests: binding records as the binding service stores them (the
parts a cohort reads: the block's label, recipe and layers), and outcomes reported on
them through the service."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from agentdocs.core.cohorts import run_cohorts
from agentdocs.core.outcomes import OutcomeReport, outcome_value
from agentdocs.models import BindingRecord, Outcome, Project
from agentdocs.services import outcomes as outcome_service


def bound_run(
    project: Project,
    process: str,
    *,
    label: str | None = None,
    recipe: str | None = None,
    versions: dict[str, int] | None = None,
    at: datetime | None = None,
    user=None,
) -> BindingRecord:
    block: dict[str, object] = {
        "recipe": recipe,
        "layers": [
            {"kind": "agent", "path": path, "version": version}
            for path, version in (versions or {}).items()
        ],
    }
    if label is not None:
        block["label"] = label
    record = {"process": process, "context": [], "memory_block": block}
    return BindingRecord.objects.create(
        tenant=project.tenant,
        project=project,
        process=process,
        created_by=user,
        created_at=at or timezone.now(),
        schema="context-binding/v1",
        record=record,
        problem_count=0,
        **run_cohorts(record),
    )


def report(binding: BindingRecord, user, supersedes: int | None = None, **values) -> list[Outcome]:
    return outcome_service.outcome_report(
        binding=binding,
        user=user,
        token=None,
        reports=[
            OutcomeReport(
                name=name, value=outcome_value(value, field="value"), supersedes=supersedes
            )
            for name, value in values.items()
        ],
    )


def cohort_of(
    project: Project,
    user,
    *,
    label: str | None = None,
    recipe: str | None = None,
    versions: dict[str, int] | None = None,
    values: list[object],
    prefix: str,
) -> None:
    """One run per value, each reporting `task_success` (a bool) or `cost_usd`."""
    for index, value in enumerate(values):
        run = bound_run(project, f"{prefix}-{index}", label=label, recipe=recipe, versions=versions)
        if value is not None:
            name = "task_success" if isinstance(value, bool) else "cost_usd"
            report(run, user, **{name: value})

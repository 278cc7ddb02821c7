"""A change request's eval results, each with its comparison of base and proposed, and
what `review.requireEvals` makes of the latest (`agentdocs.core.evals`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agentdocs.core import evals as eval_rules
from agentdocs.core.evals import EvalCase, EvalSummary, Gate
from agentdocs.models import ChangeEvals, ChangeRequest


@dataclass(frozen=True)
class EvalsRun:
    id: int
    harness: str
    submitted_by: str | None
    submitted_at: datetime
    cases: list[EvalCase]
    summary: EvalSummary


def evals_run(row: ChangeEvals) -> EvalsRun:
    """``row`` (with its submitter at hand) with its comparison."""
    return EvalsRun(
        id=row.pk,
        harness=row.harness,
        submitted_by=row.submitted_by.get_username() if row.submitted_by else None,
        submitted_at=row.submitted_at,
        cases=row.cases,
        summary=eval_rules.summarize(row.cases),
    )


def change_evals(change: ChangeRequest) -> list[EvalsRun]:
    """The change's eval results, oldest first (the last is the one that counts): one
    query."""
    rows = ChangeEvals.objects.filter(change_request=change).select_related("submitted_by")
    return [evals_run(row) for row in rows.order_by("submitted_at", "id")]


def evals_gate(
    change: ChangeRequest, *, required: bool, max_regression: float, runs: list[EvalsRun]
) -> Gate:
    """What `review.requireEvals` and `review.maxRegression` say of the latest run."""
    return eval_rules.gate(
        required=required,
        max_regression=max_regression,
        latest=runs[-1].summary if runs else None,
        change=change.pk,
    )

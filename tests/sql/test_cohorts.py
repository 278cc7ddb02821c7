"""`agentdocs.sql.cohorts.cohort_rows` against its ORM twin: a project's runs grouped by
what they saw (the columns the binding service fills), each cohort's distinct processes
and the count, sum and sum of squares of their current outcomes of the metric."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Count, F, FilteredRelation, Q, Sum
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from agentdocs.models import BindingRecord
from agentdocs.sql.cohorts import cohort_rows
from tests.outcome_runs import bound_run, report

pytestmark = pytest.mark.django_db


def orm_twin(project, *, metric, by, document=None, since=None, until=None) -> set[tuple]:
    records = BindingRecord.objects.filter(project=project)
    if since is not None:
        records = records.filter(created_at__gte=since)
    if until is not None:
        records = records.filter(created_at__lt=until)
    key = {"label": F("label"), "recipe": F("recipe")}.get(by) or KeyTextTransform(
        document, "document_versions"
    )
    current = Q(measured__isnull=False, measured__superseded_by__isnull=True)
    rows = (
        records.annotate(
            cohort=key,
            measured=FilteredRelation("outcomes", condition=Q(outcomes__name=metric)),
        )
        .values("cohort")
        .annotate(
            runs=Count("process", distinct=True),
            with_metric=Count("measured", filter=current),
            total=Sum("measured__value", filter=current),
            squares=Sum(F("measured__value") * F("measured__value"), filter=current),
        )
        .order_by()
    )
    return {(r["cohort"], r["runs"], r["with_metric"], r["total"], r["squares"]) for r in rows}


def sql_rows(project, **question) -> set[tuple]:
    return {
        (row.key, row.runs, row.with_metric, row.total, row.squares)
        for row in cohort_rows(project_id=project.pk, **question)
    }


def test_the_sql_counts_what_the_orm_counts(project, vance, reader):
    earlier = timezone.now() - timedelta(days=3)
    a = bound_run(project, "a", label="canary", recipe="lean", versions={"agent.md": 3})
    report(a, reader, task_success=True, cost_usd=0.5)
    # A second record of the same process: one run, counted once per cohort.
    again = bound_run(project, "a", label="canary", recipe="lean", versions={"agent.md": 3})
    report(again, reader, cost_usd=0.25, supersedes=a.outcomes.get(name="cost_usd").pk)
    b = bound_run(project, "b", label="production", versions={"agent.md": 12, "x.md": 1})
    (wrong,) = report(b, reader, task_success=False)
    report(b, reader, task_success=True, supersedes=wrong.pk)
    bound_run(project, "c", recipe="lean", at=earlier)
    d = bound_run(project, "d", versions={".AGENTS/x.md": 1}, at=earlier)
    report(d, reader, task_success=False, cost_usd=2)
    # Another project's runs are none of these cohorts.
    e = bound_run(vance, "e", label="canary", versions={"agent.md": 3})
    report(e, reader, task_success=True)
    questions = [
        {"metric": metric, "by": by, "document": document}
        for metric in ("task_success", "cost_usd", "missing")
        for by, document in (
            ("label", None),
            ("recipe", None),
            ("version", "agent.md"),
            ("version", ".AGENTS/x.md"),
        )
    ]
    questions += [
        {"metric": "task_success", "by": "label", "since": earlier + timedelta(days=1)},
        {"metric": "cost_usd", "by": "recipe", "until": earlier + timedelta(days=1)},
    ]
    for question in questions:
        found = sql_rows(project, **question)
        assert found == orm_twin(project, **question), question
    assert sql_rows(project, metric="task_success", by="label") == {
        ("canary", 1, 1, 1.0, 1.0),
        ("production", 1, 1, 1.0, 1.0),
        ("", 2, 1, 0.0, 0.0),
    }

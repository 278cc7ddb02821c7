"""A project's runs grouped by what they saw, with the sums a comparison of one outcome
needs, in one statement.

Each binding record keeps what its run saw beside it (`label`, `recipe`,
`document_versions`: `agentdocs.core.cohorts.run_cohorts`), so the grouping reads those
columns and not the record's JSON. A cohort's runs are its distinct processes, counted
apart from the sums (`runs`: by label or recipe an index-only scan of the record's
(project, cohort, process) index, already in order), and the sums over the metric's
outcomes joined to their records (`sums`): summing per (cohort, process) first costs
about two and a half times as much at 100,000 runs (bench/README.md). A run's outcome
of the metric counts while no later outcome supersedes it (the anti-join on
``supersedes_id``, only among the corrections of the metric, the only outcomes that can
supersede one: few, read through the index on ``supersedes_id``). The ORM twin is in
tests/sql/test_cohorts.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from django.db import connection

CohortBy = Literal["label", "version", "recipe"]


@dataclass(frozen=True)
class CohortRow:
    key: object
    runs: int
    with_metric: int
    total: float | None
    squares: float | None


def _key(by: CohortBy, document: str | None) -> tuple[str, list[str]]:
    if by == "label":
        return "r.label", []
    if by == "recipe":
        return "r.recipe", []
    assert document is not None
    if connection.vendor == "postgresql":
        return "r.document_versions ->> %s", [document]
    return "json_extract(r.document_versions, %s)", ["$." + json.dumps(document)]


def cohort_rows(
    *,
    project_id: int,
    metric: str,
    by: CohortBy,
    document: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[CohortRow]:
    """Per cohort of the project's runs (records made in [since, until)): its distinct
    processes, and the count, sum and sum of squares of their current ``metric``
    outcomes. One query, whatever the number of runs."""
    key, key_params = _key(by, document)
    window, window_params = "", list[datetime]()
    if since is not None:
        window += " AND r.created_at >= %s"
        window_params.append(since)
    if until is not None:
        window += " AND r.created_at < %s"
        window_params.append(until)
    current = (
        "NOT EXISTS (SELECT 1 FROM agentdocs_outcome s WHERE s.supersedes_id = o.id "
        "AND s.supersedes_id IS NOT NULL AND s.project_id = %s AND s.name = %s)"
    )
    sql = f"""
        WITH runs AS (
            SELECT cohort, COUNT(*) AS runs FROM (
                SELECT DISTINCT {key} AS cohort, r.process FROM agentdocs_bindingrecord r
                WHERE r.project_id = %s{window}
            ) seen
            GROUP BY cohort
        ), sums AS (
            SELECT {key} AS cohort, COUNT(*) AS n, SUM(o.value) AS t,
                   SUM(o.value * o.value) AS sq
            FROM agentdocs_outcome o
            JOIN agentdocs_bindingrecord r ON r.id = o.binding_id
            WHERE o.project_id = %s AND o.name = %s AND {current}
              AND r.project_id = %s{window}
            GROUP BY 1
        )
        SELECT runs.cohort, runs.runs, sums.n, sums.t, sums.sq
        FROM runs LEFT JOIN sums ON runs.cohort IS NOT DISTINCT FROM sums.cohort
    """
    params: list[str | int | datetime] = [
        *key_params,
        project_id,
        *window_params,
        *key_params,
        project_id,
        metric,
        project_id,
        metric,
        project_id,
        *window_params,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    # PostgreSQL sums counts as NUMERIC (Decimal): plain numbers here.
    return [
        CohortRow(
            key=key,
            runs=int(runs),
            with_metric=int(with_metric or 0),
            total=None if total is None else float(total),
            squares=None if squares is None else float(squares),
        )
        for key, runs, with_metric, total, squares in rows
    ]

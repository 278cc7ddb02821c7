"""The geometry of the cohort comparison's chart, drawn as SVG by
`agentdocs/outcomes.html`: one row per cohort, its 95% interval as a line with ends,
the rate or mean as a dot, and the baseline's value as a dashed line down the plot.
Plain numbers and strings: the template escapes every text it draws, and the page
lists the same figures in a table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentdocs.core.cohorts import CohortResult
from agentdocs.selectors.outcomes import OutcomeComparison

LABEL_WIDTH = 170
PLOT_WIDTH = 560
WIDTH = LABEL_WIDTH + PLOT_WIDTH + 20
ROW_HEIGHT = 30
TOP = 26
TICKS = 5


@dataclass(frozen=True)
class CohortRow:
    label: str
    y: float
    x: float | None
    low: float | None
    high: float | None
    css: str
    title: str


@dataclass(frozen=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True)
class CohortChart:
    width: int
    height: int
    plot_left: int
    plot_right: int
    rows: list[CohortRow]
    ticks: list[Tick]
    baseline_x: float | None


def cohort_name(cohort: str | None, by: str) -> str:
    if cohort is None:
        return {"label": "no label", "recipe": "no recipe"}.get(by, "not seen")
    return f"v{cohort}" if by == "version" else cohort


def _figure(value: float, kind: str | None) -> str:
    return f"{value:.0%}" if kind == "rate" else f"{value:.4g}"


def cohort_chart(
    cohorts: Sequence[CohortResult], *, kind: str | None, by: str, baseline: str | None
) -> CohortChart:
    values = [
        v
        for c in cohorts
        for v in (c["interval"] or [])
        + [x for x in (c["rate"] if kind == "rate" else c["mean"],) if x is not None]
    ]
    if kind == "rate":
        low, high = 0.0, 1.0
    elif values:
        low, high = min(values), max(values)
        if low == high:
            low, high = low - 1, high + 1
        pad = (high - low) * 0.05
        low, high = low - pad, high + pad
    else:
        low, high = 0.0, 1.0

    def at(value: float) -> float:
        return round(LABEL_WIDTH + (value - low) / (high - low) * PLOT_WIDTH, 1)

    rows = []
    baseline_x = None
    for index, cohort in enumerate(cohorts):
        value = cohort["rate"] if kind == "rate" else cohort["mean"]
        interval = cohort["interval"]
        name = cohort_name(cohort["cohort"], by)
        described = (
            f"{name}: {_figure(value, kind)} of {cohort['runs_with_metric']} runs"
            if value is not None
            else f"{name}: no run reported it"
        )
        if interval is not None:
            described += (
                f", 95% interval {_figure(interval[0], kind)} to {_figure(interval[1], kind)}"
            )
        described += f"; {cohort['verdict']}"
        is_base = cohort["cohort"] == baseline and cohort["verdict"] == "baseline"
        if is_base and value is not None:
            baseline_x = at(value)
        rows.append(
            CohortRow(
                label=name,
                y=TOP + index * ROW_HEIGHT + ROW_HEIGHT // 2,
                x=None if value is None else at(value),
                low=None if interval is None else at(interval[0]),
                high=None if interval is None else at(interval[1]),
                css="oc-" + cohort["verdict"].replace(" ", "-"),
                title=described,
            )
        )
    ticks = [
        Tick(
            x=at(low + (high - low) * step / (TICKS - 1)),
            label=_figure(low + (high - low) * step / (TICKS - 1), kind),
        )
        for step in range(TICKS)
    ]
    return CohortChart(
        width=WIDTH,
        height=TOP + len(rows) * ROW_HEIGHT + 10,
        plot_left=LABEL_WIDTH,
        plot_right=LABEL_WIDTH + PLOT_WIDTH,
        rows=rows,
        ticks=ticks,
        baseline_x=baseline_x,
    )


def comparison_context(comparison: OutcomeComparison) -> dict[str, Any]:
    """What `agentdocs/partials/outcome_comparison.html` draws of a comparison."""
    by = comparison["by"]
    return {
        "comparison": comparison,
        "rows": [
            {**cohort, "name": cohort_name(cohort["cohort"], by)}
            for cohort in comparison["cohorts"]
        ],
        "chart": cohort_chart(
            comparison["cohorts"],
            kind=comparison["kind"],
            by=by,
            baseline=comparison["baseline"],
        ),
    }

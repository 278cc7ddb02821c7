"""Cohorts of runs compared on one outcome, from the sums SQL gives per cohort.

Each cohort is what its runs saw (a label, a version of a document, a recipe) with how
many runs it has, how many reported the metric, and the sum and sum of squares of their
values. A yes/no metric is a rate with its Wilson interval; a number a mean with its
t interval. Each cohort is compared with the baseline: the difference, its interval
(Newcombe's hybrid score interval for rates, Welch's t for means) and a plain verdict,
and how many more runs with the metric it needs for a difference of ``effect`` to be
found at 95% confidence with 80% power. statsmodels and SciPy compute the intervals and
the power; they are imported when first used (a second of start-up, and only the
comparison needs them).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from agentdocs.core.errors import InvalidInput

ALPHA = 0.05
POWER = 0.8
DEFAULT_RATE_EFFECT = 0.05
# For a number with no `effect` given: a fifth of a standard deviation (Cohen's "small").
DEFAULT_STANDARDISED_EFFECT = 0.2
# The label a canary is compared with when no baseline is named.
PREFERRED_BASELINE = "production"

Verdict = Literal["baseline", "better", "worse", "no difference yet"]


class RunCohorts(TypedDict):
    """What a run saw, as cohorts group runs: a binding record's `label`, `recipe` and
    `document_versions` columns, derived from its record when it is stored (they are
    not evidence: the record's signed bytes stay what they were)."""

    label: str  # "" for none
    recipe: str  # "" for none
    # Each document's path to the version the run saw, as text.
    document_versions: dict[str, str]


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def run_cohorts(record: Mapping[str, Any]) -> RunCohorts:
    """What a binding record's run saw: the Memory Block's label and recipe, and the
    version of each document, from the block's layers first, then the manifest's
    entries (`context[*].document`); the first that names a path wins."""
    block = record.get("memory_block")
    block = block if isinstance(block, Mapping) else {}
    versions: dict[str, str] = {}
    layers = block.get("layers")
    for layer in layers if isinstance(layers, list) else []:
        if isinstance(layer, Mapping) and isinstance(layer.get("path"), str):
            version = _text(layer.get("version"))
            if version is not None:
                versions.setdefault(layer["path"], version)
    entries = record.get("context")
    seen: set[str] = set()
    for entry in entries if isinstance(entries, list) else []:
        document = entry.get("document") if isinstance(entry, Mapping) else None
        if not isinstance(document, Mapping) or not isinstance(document.get("path"), str):
            continue
        path = document["path"]
        if path in seen:
            continue
        seen.add(path)
        version = _text(document.get("version"))
        if version is not None:
            versions.setdefault(path, version)
    return {
        "label": _text(block.get("label")) or "",
        "recipe": _text(block.get("recipe")) or "",
        "document_versions": versions,
    }


@dataclass(frozen=True)
class CohortSums:
    """One cohort as SQL counts it; ``key`` None for the runs that saw none (no label,
    no recipe, not that document)."""

    key: str | None
    runs: int
    with_metric: int = 0
    total: float = 0.0
    squares: float = 0.0

    @property
    def average(self) -> float | None:
        return self.total / self.with_metric if self.with_metric else None

    @property
    def variance(self) -> float | None:
        """The sample variance; None under two values."""
        if self.with_metric < 2:
            return None
        n, mean = self.with_metric, self.total / self.with_metric
        return max(0.0, (self.squares - n * mean * mean) / (n - 1))


class CohortResult(TypedDict):
    cohort: str | None
    runs: int
    runs_with_metric: int
    rate: float | None
    mean: float | None
    interval: list[float] | None
    difference: float | None
    difference_interval: list[float] | None
    verdict: Verdict
    runs_needed: int | None


class Comparison(TypedDict):
    kind: Literal["rate", "mean"] | None
    baseline: str | None
    effect: float | None
    runs_per_cohort_needed: int | None
    cohorts: list[CohortResult]


def _pair(low: float, high: float) -> list[float]:
    return [float(low), float(high)]


def rate_interval(successes: int, n: int, alpha: float = ALPHA) -> list[float]:
    """The Wilson score interval of ``successes`` out of ``n``."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return _pair(low, high)


def rate_difference_interval(
    successes: int, n: int, base_successes: int, base_n: int, alpha: float = ALPHA
) -> list[float]:
    """Newcombe's hybrid score interval of the difference of two rates (this − base)."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    low, high = confint_proportions_2indep(
        successes, n, base_successes, base_n, method="newcomb", compare="diff", alpha=alpha
    )
    return _pair(low, high)


def mean_interval(cohort: CohortSums, alpha: float = ALPHA) -> list[float] | None:
    """Student's t interval of the cohort's mean; None under two values."""
    from scipy import stats

    mean, variance = cohort.average, cohort.variance
    if mean is None or variance is None:
        return None
    scale = math.sqrt(variance / cohort.with_metric)
    if scale == 0:
        return [mean, mean]
    low, high = stats.t.interval(1 - alpha, cohort.with_metric - 1, loc=mean, scale=scale)
    return _pair(low, high)


def mean_difference_interval(
    cohort: CohortSums, base: CohortSums, alpha: float = ALPHA
) -> list[float] | None:
    """Welch's t interval of the difference of two means (this − base)."""
    from scipy import stats

    if cohort.variance is None or base.variance is None:
        return None
    assert cohort.average is not None and base.average is not None
    difference = cohort.average - base.average
    part, base_part = cohort.variance / cohort.with_metric, base.variance / base.with_metric
    scale = math.sqrt(part + base_part)
    if scale == 0:
        return [difference, difference]
    freedom = (part + base_part) ** 2 / (
        part**2 / (cohort.with_metric - 1) + base_part**2 / (base.with_metric - 1)
    )
    low, high = stats.t.interval(1 - alpha, freedom, loc=difference, scale=scale)
    return _pair(low, high)


def runs_needed_for_rate(base_rate: float | None, effect: float) -> int | None:
    """Runs per cohort for a difference of ``effect`` from ``base_rate`` (0.5, the most
    demanding, when unknown) to be found: Cohen's h, the normal power equation."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    base = 0.5 if base_rate is None else base_rate
    if base + effect <= 1:
        other = base + effect
    elif base - effect >= 0:
        other = base - effect
    else:  # an effect wider than the room on either side: the farther end
        other = 0.0 if base >= 0.5 else 1.0
    size = abs(float(proportion_effectsize(other, base)))
    if size == 0:
        return 0
    with warnings.catch_warnings():  # no convergence is an answer: None
        warnings.simplefilter("ignore")
        runs = NormalIndPower().solve_power(effect_size=size, alpha=ALPHA, power=POWER, ratio=1.0)
    return _whole(runs)


def _whole(runs: object) -> int | None:
    """A power equation's answer as whole runs; None when it found none."""
    try:
        value = float(runs)  # type: ignore[arg-type]  # a NumPy scalar or array of one
    except (TypeError, ValueError):
        return None
    return math.ceil(value) if math.isfinite(value) else None


def runs_needed_for_mean(deviation: float | None, effect: float) -> int | None:
    """Runs per cohort for a difference of ``effect`` (in the metric's units) to be found
    where values spread by ``deviation``: the two-sample t test's power; None when the
    spread is unknown."""
    from statsmodels.stats.power import TTestIndPower

    if not deviation:
        return None
    with warnings.catch_warnings():  # no convergence is an answer: None
        warnings.simplefilter("ignore")
        runs = TTestIndPower().solve_power(
            effect_size=effect / deviation, alpha=ALPHA, power=POWER, ratio=1.0
        )
    return _whole(runs)


def _verdict(interval: list[float] | None, *, lower_is_better: bool) -> Verdict:
    if interval is None or interval[0] <= 0 <= interval[1]:
        return "no difference yet"
    higher = interval[0] > 0
    return "better" if higher != lower_is_better else "worse"


def baseline_of(cohorts: Sequence[CohortSums], named: str | None) -> CohortSums | None:
    """The cohort named (InvalidInput naming `baseline` when there is none), else
    `production`, else the one with the most runs with the metric."""
    if named is not None:
        for cohort in cohorts:
            if cohort.key == named:
                return cohort
        known = ", ".join(str(cohort.key) for cohort in cohorts if cohort.key is not None)
        raise InvalidInput(
            f"No cohort is named {named!r}; the cohorts are: {known or 'none'}.",
            field="baseline",
        )
    for cohort in cohorts:
        if cohort.key == PREFERRED_BASELINE:
            return cohort
    ranked = sorted(cohorts, key=lambda c: (-c.with_metric, -c.runs, c.key is None, c.key or ""))
    return ranked[0] if ranked else None


def compare_cohorts(
    cohorts: Sequence[CohortSums],
    *,
    is_bool: bool | None,
    baseline: str | None = None,
    lower_is_better: bool = False,
    effect: float | None = None,
) -> Comparison:
    """Each cohort against the baseline; ``is_bool`` None when no run has the metric."""
    base = baseline_of(cohorts, baseline)
    kind: Literal["rate", "mean"] | None = (
        None if is_bool is None else ("rate" if is_bool else "mean")
    )
    needed: int | None = None
    used_effect = effect
    if kind == "rate":
        used_effect = DEFAULT_RATE_EFFECT if effect is None else effect
        if not 0 < used_effect < 1:
            raise InvalidInput(
                "`effect` of a rate is a difference between 0 and 1 (0.05: 5 points).",
                field="effect",
            )
        needed = runs_needed_for_rate(base.average if base else None, used_effect)
    elif kind == "mean" and base is not None:
        deviation = math.sqrt(base.variance) if base.variance is not None else None
        if effect is None and deviation:
            used_effect = DEFAULT_STANDARDISED_EFFECT * deviation
        if used_effect is not None:
            needed = runs_needed_for_mean(deviation, used_effect)
    results = [
        _result(cohort, base, kind=kind, lower_is_better=lower_is_better, needed=needed)
        for cohort in cohorts
    ]
    return {
        "kind": kind,
        "baseline": None if base is None else base.key,
        "effect": used_effect,
        "runs_per_cohort_needed": needed,
        "cohorts": results,
    }


def _result(
    cohort: CohortSums,
    base: CohortSums | None,
    *,
    kind: Literal["rate", "mean"] | None,
    lower_is_better: bool,
    needed: int | None,
) -> CohortResult:
    n = cohort.with_metric
    interval = difference_interval = None
    difference = None
    if kind == "rate" and n:
        interval = rate_interval(round(cohort.total), n)
    elif kind == "mean" and n:
        interval = mean_interval(cohort)
    is_base = base is not None and cohort.key == base.key
    if not is_base and base is not None and n and base.with_metric:
        assert cohort.average is not None and base.average is not None
        difference = cohort.average - base.average
        if kind == "rate":
            difference_interval = rate_difference_interval(
                round(cohort.total), n, round(base.total), base.with_metric
            )
        else:
            difference_interval = mean_difference_interval(cohort, base)
    verdict: Verdict = (
        "baseline" if is_base else _verdict(difference_interval, lower_is_better=lower_is_better)
    )
    return {
        "cohort": cohort.key,
        "runs": cohort.runs,
        "runs_with_metric": n,
        "rate": cohort.average if kind == "rate" else None,
        "mean": cohort.average if kind == "mean" else None,
        "interval": interval,
        "difference": difference,
        "difference_interval": difference_interval,
        "verdict": verdict,
        "runs_needed": None if needed is None else max(0, needed - n),
    }

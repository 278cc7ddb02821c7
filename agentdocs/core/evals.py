"""Eval results of a change request: the cases a harness ran against the base text and
the proposed text, and whether the proposal is worse.

A submission is ``{harness, cases: [{name, base, proposed}]}``. Each case's ``base``
and ``proposed`` are its outcome with the document's text at the change's base version
and with the proposed text: both booleans (pass or fail) or both numbers from 0 to 1 (a
score). Compared, a pass counts 1 and a fail 0, so over cases that are all pass/fail the
mean is the pass rate; the proposal regresses by how much its mean is below the base's.
`review.maxRegression` (a number from 0 to 1, default 0) is how much it may.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TypedDict

from agentdocs.core.errors import InvalidInput

MAX_HARNESS_LENGTH = 200
MAX_CASE_NAME_LENGTH = 200
MAX_CASES = 1000
# Regressions this close to the allowed one are equal to it (0.8 - 0.6 is 0.2000...07).
TOLERANCE = 1e-9

PASS_RATE = "pass_rate"
MEAN_SCORE = "mean_score"

Outcome = bool | float


class EvalCase(TypedDict):
    name: str
    base: Outcome
    proposed: Outcome


class EvalSummary(TypedDict):
    """Base against proposed over all cases."""

    cases: int
    measure: str  # `pass_rate` when every case is pass/fail, else `mean_score`
    base: float
    proposed: float
    difference: float  # proposed less base
    regression: float  # how much the proposal is worse (0 when it is not)
    worse_cases: int
    better_cases: int


def _one_line(value: object, *, field: str, limit: int, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"`{field}` is required: {what}.", field=field)
    if len(value) > limit or any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise InvalidInput(f"`{field}` is one line of at most {limit} characters.", field=field)
    return value.strip()


def _outcome(value: object, *, field: str) -> Outcome:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1:
        return float(value)
    raise InvalidInput(
        f"`{field}` is true or false (pass or fail), or a score from 0 to 1.", field=field
    )


def parse_cases(value: object) -> list[EvalCase]:
    """The cases of a submission, checked; InvalidInput naming the first bad one."""
    if not isinstance(value, list) or not value:
        raise InvalidInput(
            "`cases` is a list of {name, base, proposed}, at least one.", field="cases"
        )
    if len(value) > MAX_CASES:
        raise InvalidInput(f"`cases` holds at most {MAX_CASES} cases.", field="cases")
    cases: list[EvalCase] = []
    seen: set[str] = set()
    for index, case in enumerate(value):
        at = f"cases[{index}]"
        if not isinstance(case, dict):
            raise InvalidInput(f"`{at}` is an object: {{name, base, proposed}}.", field=at)
        unknown = sorted(set(case) - {"name", "base", "proposed"})
        if unknown:
            raise InvalidInput(
                f"`{at}` has unknown field(s): {', '.join(unknown)}.", field=f"{at}.{unknown[0]}"
            )
        name = _one_line(
            case.get("name"),
            field=f"{at}.name",
            limit=MAX_CASE_NAME_LENGTH,
            what="the case's name",
        )
        if name in seen:
            raise InvalidInput(f"`{at}.name`: {name!r} names two cases.", field=f"{at}.name")
        seen.add(name)
        base = _outcome(case.get("base"), field=f"{at}.base")
        proposed = _outcome(case.get("proposed"), field=f"{at}.proposed")
        if isinstance(base, bool) != isinstance(proposed, bool):
            raise InvalidInput(
                f"`{at}.proposed` is a {'boolean' if isinstance(base, bool) else 'score'} "
                "like `base`: a case is pass/fail on both sides or scored on both.",
                field=f"{at}.proposed",
            )
        cases.append({"name": name, "base": base, "proposed": proposed})
    return cases


def parse_harness(value: object) -> str:
    return _one_line(
        value,
        field="harness",
        limit=MAX_HARNESS_LENGTH,
        what="what ran the cases (its name and version)",
    )


def _score(outcome: Outcome) -> float:
    return 1.0 if outcome is True else 0.0 if outcome is False else float(outcome)


def summarize(cases: list[EvalCase]) -> EvalSummary:
    count = len(cases)
    base = sum(_score(case["base"]) for case in cases) / count
    proposed = sum(_score(case["proposed"]) for case in cases) / count
    every_pass_fail = all(isinstance(case["base"], bool) for case in cases)
    return {
        "cases": count,
        "measure": PASS_RATE if every_pass_fail else MEAN_SCORE,
        "base": round(base, 6),
        "proposed": round(proposed, 6),
        "difference": round(proposed - base, 6),
        "regression": round(max(0.0, base - proposed), 6),
        "worse_cases": sum(_score(c["proposed"]) < _score(c["base"]) for c in cases),
        "better_cases": sum(_score(c["proposed"]) > _score(c["base"]) for c in cases),
    }


def within(summary: EvalSummary, *, max_regression: float) -> bool:
    """Whether the proposal is not worse than the base beyond ``max_regression``."""
    return summary["regression"] <= max_regression + TOLERANCE


# The `review.*` settings of the gate (`agentdocs.core.review` lists them with the others).
REQUIRE_EVALS_KEY = "review.requireEvals"
MAX_REGRESSION_KEY = "review.maxRegression"
DEFAULT_MAX_REGRESSION = 0.0


def parse_require_evals(value: str, *, field: str = "value") -> bool:
    """A `review.requireEvals` value: JSON `true` or `false`."""
    try:
        loaded = json.loads(value)
    except ValueError:
        loaded = None
    if not isinstance(loaded, bool):
        raise InvalidInput(f"`{REQUIRE_EVALS_KEY}` is `true` or `false`.", field=field)
    return loaded


def parse_max_regression(value: str, *, field: str = "value") -> float:
    """A `review.maxRegression` value: a JSON number from 0 to 1 (0.05: the pass rate or
    mean score may drop by at most five points)."""
    try:
        loaded = json.loads(value)
    except ValueError:
        loaded = None
    if (
        isinstance(loaded, bool)
        or not isinstance(loaded, int | float)
        or not math.isfinite(loaded)
        or not 0 <= loaded <= 1
    ):
        raise InvalidInput(f"`{MAX_REGRESSION_KEY}` is a number from 0 to 1.", field=field)
    return float(loaded)


@dataclass(frozen=True)
class Gate:
    """What `review.requireEvals` says of a change's latest evals: ``satisfied`` when
    not required, or when attached and within `review.maxRegression`; ``why`` otherwise."""

    required: bool
    max_regression: float
    satisfied: bool
    why: str
    code: str = ""


EVALS_MISSING = "evals_missing"
EVALS_REGRESSED = "evals_regressed"


def gate(*, required: bool, max_regression: float, latest: EvalSummary | None, change: int) -> Gate:
    if not required:
        return Gate(required, max_regression, True, "")
    if latest is None:
        return Gate(
            required,
            max_regression,
            False,
            f"Change #{change} needs eval results before it merges (`{REQUIRE_EVALS_KEY}`): "
            "attach them with POST .../evals.",
            EVALS_MISSING,
        )
    if not within(latest, max_regression=max_regression):
        measure = "pass rate" if latest["measure"] == PASS_RATE else "mean score"
        return Gate(
            required,
            max_regression,
            False,
            f"Change #{change}'s latest evals: the proposed text's {measure} is "
            f"{latest['proposed']:g} against the base's {latest['base']:g}, worse by "
            f"{latest['regression']:g}, beyond `{MAX_REGRESSION_KEY}` ({max_regression:g}).",
            EVALS_REGRESSED,
        )
    return Gate(required, max_regression, True, "")

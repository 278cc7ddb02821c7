"""`core.evals`: cases checked, base against proposed, and the gate."""

from __future__ import annotations

import pytest

from agentdocs.core.errors import InvalidInput
from agentdocs.core.evals import (
    EVALS_MISSING,
    EVALS_REGRESSED,
    gate,
    parse_cases,
    parse_max_regression,
    parse_require_evals,
    summarize,
)


def test_pass_fail_cases_compare_pass_rates_and_scores_mean_scores():
    rates = summarize(
        parse_cases(
            [
                {"name": "a", "base": True, "proposed": False},
                {"name": "b", "base": True, "proposed": True},
                {"name": "c", "base": False, "proposed": False},
                {"name": "d", "base": True, "proposed": True},
            ]
        )
    )
    assert (rates["measure"], rates["base"], rates["proposed"]) == ("pass_rate", 0.75, 0.5)
    assert rates["regression"] == 0.25 and rates["worse_cases"] == 1
    scores = summarize(parse_cases([{"name": "a", "base": 0, "proposed": 1}]))
    assert scores["measure"] == "mean_score" and scores["difference"] == 1.0
    assert scores["regression"] == 0.0 and scores["better_cases"] == 1


def test_the_gate_holds_exactly_at_max_regression_despite_floats():
    # 0.8 - 0.6 is 0.20000000000000007 in binary floating point.
    worse = summarize(
        parse_cases([{"name": str(n), "base": n < 4, "proposed": n < 3} for n in range(5)])
    )
    assert gate(required=True, max_regression=0.2, latest=worse, change=1).satisfied
    refused = gate(required=True, max_regression=0.19, latest=worse, change=1)
    assert not refused.satisfied and refused.code == EVALS_REGRESSED
    assert gate(required=True, max_regression=0, latest=None, change=1).code == EVALS_MISSING
    assert gate(required=False, max_regression=0, latest=None, change=1).satisfied


@pytest.mark.parametrize("value", ["yes", "1", "null", "", "[true]"])
def test_require_evals_is_a_json_boolean(value):
    with pytest.raises(InvalidInput):
        parse_require_evals(value)


@pytest.mark.parametrize("value", ["-0.01", "1.01", "true", "NaN", "Infinity", '"0.1"'])
def test_max_regression_is_a_number_from_0_to_1(value):
    with pytest.raises(InvalidInput):
        parse_max_regression(value)
    assert parse_max_regression("0") == 0.0 and parse_max_regression("1") == 1.0

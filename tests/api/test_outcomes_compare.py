"""Cohorts of runs compared on an outcome (`GET .../outcomes/compare`), against values
computed here from the textbook formulas (Wilson 1927, Newcombe 1998, Welch 1947),
not by the library calls the server makes."""

from __future__ import annotations

import math

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.outcome_runs import bound_run, cohort_of, report

pytestmark = pytest.mark.django_db

URL = "/api/v1/tenants/acme/projects/web/outcomes/compare"
Z = 1.959963984540054  # the normal distribution's 97.5% point


def wilson(successes: int, n: int) -> tuple[float, float]:
    p = successes / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def newcombe(k1: int, n1: int, k0: int, n0: int) -> tuple[float, float]:
    """Newcombe's method 10: the hybrid score interval of p1 − p0."""
    p1, p0 = k1 / n1, k0 / n0
    l1, u1 = wilson(k1, n1)
    l0, u0 = wilson(k0, n0)
    d = p1 - p0
    return d - math.sqrt((p1 - l1) ** 2 + (u0 - p0) ** 2), d + math.sqrt(
        (u1 - p1) ** 2 + (p0 - l0) ** 2
    )


def by_cohort(answer: dict) -> dict:
    return {cohort["cohort"]: cohort for cohort in answer["cohorts"]}


@pytest.fixture
def canary_split(project, reader):
    """40 of 50 canary runs succeeded, 30 of 50 production ones; 5 production runs
    reported nothing."""
    cohort_of(project, reader, label="canary", values=[True] * 40 + [False] * 10, prefix="c")
    cohort_of(
        project,
        reader,
        label="production",
        values=[True] * 30 + [False] * 20 + [None] * 5,
        prefix="p",
    )


def test_a_40_of_50_canary_against_30_of_50_production(api, reader, canary_split):
    response = api(reader).get(f"{URL}?metric=task_success&by=label")
    assert response.status_code == 200, response.content
    answer = response.json()
    assert (answer["kind"], answer["baseline"]) == ("rate", "production")
    cohorts = by_cohort(answer)
    canary, production = cohorts["canary"], cohorts["production"]
    assert (canary["runs"], canary["runs_with_metric"], canary["rate"]) == (50, 50, 0.8)
    assert (production["runs"], production["runs_with_metric"]) == (55, 50)
    # The textbook interval: 0.8 of 50 is [0.670, 0.888].
    assert canary["interval"] == pytest.approx(wilson(40, 50), abs=1e-9)
    assert canary["interval"] == pytest.approx([0.6696, 0.8876], abs=5e-5)
    assert production["interval"] == pytest.approx(wilson(30, 50), abs=1e-9)
    assert canary["difference"] == pytest.approx(0.2)
    assert canary["difference_interval"] == pytest.approx(newcombe(40, 50, 30, 50), abs=1e-9)
    assert canary["verdict"] == "better"
    assert production["verdict"] == "baseline" and production["difference"] is None


def test_lower_is_better_turns_the_verdict_and_a_named_baseline_is_used(api, reader, canary_split):
    answer = (
        api(reader)
        .get(f"{URL}?metric=task_success&by=label&lower_is_better=true&baseline=canary")
        .json()
    )
    cohorts = by_cohort(answer)
    assert answer["baseline"] == "canary"
    assert cohorts["production"]["difference"] == pytest.approx(-0.2)
    assert cohorts["production"]["verdict"] == "better"
    unknown = api(reader).get(f"{URL}?metric=task_success&by=label&baseline=beta")
    assert unknown.status_code == 400 and unknown.json()["field"] == "baseline"


def test_a_small_difference_is_no_difference_yet_with_the_runs_it_needs(api, reader, project):
    cohort_of(project, reader, label="canary", values=[True] * 7 + [False] * 3, prefix="c")
    cohort_of(project, reader, label="production", values=[True] * 6 + [False] * 4, prefix="p")
    answer = api(reader).get(f"{URL}?metric=task_success&by=label&effect=0.1").json()
    canary = by_cohort(answer)["canary"]
    assert canary["verdict"] == "no difference yet"
    # Cohen's h between 0.7 and 0.6, then n = 2 ((z_a/2 + z_b) / h)^2 per group.
    h = abs(2 * math.asin(math.sqrt(0.7)) - 2 * math.asin(math.sqrt(0.6)))
    z_power = 0.8416212335729143
    needed = math.ceil(2 * ((Z + z_power) / h) ** 2)
    assert answer["runs_per_cohort_needed"] == pytest.approx(needed, abs=1)
    assert canary["runs_needed"] == answer["runs_per_cohort_needed"] - 10


def test_only_the_current_outcome_of_a_run_counts(api, reader, project):
    run = bound_run(project, "r1", label="canary")
    first = report(run, reader, task_success=False)[0]
    report(run, reader, supersedes=first.pk, task_success=True)
    answer = api(reader).get(f"{URL}?metric=task_success&by=label").json()
    canary = by_cohort(answer)["canary"]
    assert (canary["runs_with_metric"], canary["rate"]) == (1, 1.0)


def test_means_by_version_with_t_and_welch_intervals(api, reader, project):
    low = [0.20, 0.25, 0.30, 0.35, 0.40]
    high = [0.40, 0.45, 0.50, 0.55, 0.60, 0.65]
    cohort_of(project, reader, versions={"agent.md": 3}, values=low, prefix="v3")
    cohort_of(project, reader, versions={"agent.md": 10}, values=high, prefix="v10")
    bound_run(project, "none", versions={"other.md": 1})
    answer = (
        api(reader)
        .get(f"{URL}?metric=cost_usd&by=version&document=agent.md&baseline=3&lower_is_better=true")
        .json()
    )
    assert answer["kind"] == "mean"
    assert [c["cohort"] for c in answer["cohorts"]] == ["3", "10", None]
    v3, v10 = by_cohort(answer)["3"], by_cohort(answer)["10"]
    assert v3["mean"] == pytest.approx(0.30)
    # Student's t interval: t(0.975, 4) = 2.7764451051977987; the sample sd of `low`.
    sd3 = math.sqrt(sum((x - 0.3) ** 2 for x in low) / 4)
    half = 2.7764451051977987 * sd3 / math.sqrt(5)
    assert v3["interval"] == pytest.approx([0.3 - half, 0.3 + half], abs=1e-9)
    # Welch: 0.525 − 0.30, its degrees of freedom, t from published tables bracketing it.
    sd10 = math.sqrt(sum((x - 0.525) ** 2 for x in high) / 5)
    a, b = sd10**2 / 6, sd3**2 / 5
    df = (a + b) ** 2 / (a * a / 5 + b * b / 4)
    assert 8 < df < 9
    scale = math.sqrt(a + b)
    low_t, high_t = 2.262157162740992, 2.306004135204166  # t(0.975, 9), t(0.975, 8)
    assert v10["difference"] == pytest.approx(0.225)
    width = v10["difference_interval"][1] - 0.225
    assert low_t * scale < width < high_t * scale
    assert v10["verdict"] == "worse"


def test_by_recipe_and_a_window(api, reader, project):
    cohort_of(project, reader, recipe="lean", values=[True, True], prefix="l")
    cohort_of(project, reader, recipe="full", values=[False], prefix="f")
    answer = api(reader).get(f"{URL}?metric=task_success&by=recipe").json()
    assert {c["cohort"]: c["rate"] for c in answer["cohorts"]} == {"full": 0.0, "lean": 1.0}
    later = api(reader).get(f"{URL}?metric=task_success&by=recipe&since=2999-01-01").json()
    assert later["cohorts"] == [] and later["baseline"] is None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("by=label", "metric"),
        ("metric=task_success", "by"),
        ("metric=task_success&by=colour", "by"),
        ("metric=Task&by=label", "metric"),
        ("metric=task_success&by=version", "document"),
        ("metric=task_success&by=label&effect=-1", "effect"),
        ("metric=task_success&by=label&since=soon", "since"),
    ],
)
def test_a_bad_query_is_400_naming_its_field(api, reader, project, query, field):
    response = api(reader).get(f"{URL}?{query}")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field


def test_the_query_count_does_not_grow_with_the_runs(api, reader, project):
    client = api(reader)
    cohort_of(project, reader, label="canary", values=[True, False], prefix="a")
    client.get(f"{URL}?metric=task_success&by=label")
    with CaptureQueriesContext(connection) as few:
        client.get(f"{URL}?metric=task_success&by=version&document=agent.md")
    cohort_of(project, reader, label="canary", values=[True] * 30, prefix="b")
    cohort_of(project, reader, label="production", values=[False] * 30, prefix="c")
    with CaptureQueriesContext(connection) as many:
        client.get(f"{URL}?metric=task_success&by=version&document=agent.md")
    assert len(many) == len(few) <= 6


@pytest.mark.parametrize("effect", ["1e-9", "0.5", "0.99"])
def test_any_effect_of_a_rate_gets_an_answer(api, reader, canary_split, effect):
    response = api(reader).get(f"{URL}?metric=task_success&by=label&effect={effect}")
    assert response.status_code == 200, response.content
    needed = response.json()["runs_per_cohort_needed"]
    assert needed is None or needed >= 0


def test_an_effect_of_a_whole_rate_or_more_is_refused(api, reader, canary_split):
    response = api(reader).get(f"{URL}?metric=task_success&by=label&effect=1.5")
    assert response.status_code == 400 and response.json()["field"] == "effect"


def test_a_huge_or_tiny_effect_on_a_mean_gets_an_answer(api, reader, project):
    cohort_of(project, reader, label="production", values=[0.1, 0.2, 0.4], prefix="p")
    cohort_of(project, reader, label="canary", values=[0.3, 0.5], prefix="c")
    for effect in ("1e-9", "1000"):
        response = api(reader).get(f"{URL}?metric=cost_usd&by=label&effect={effect}")
        assert response.status_code == 200, response.content

"""Evidence before merge: eval results on a change request (`POST .../changes/{id}/evals`),
`review.requireEvals` and `review.maxRegression` gating the merge, and the agent
process a change came from."""

from __future__ import annotations

import pytest

from agentdocs.models import BindingRecord, ChangeEvals
from agentdocs.services import policy as policy_service
from tests.api.test_changes import BASE, TEXT, propose, review
from tests.api.test_documents import assert_error

pytestmark = pytest.mark.django_db


def cases(base: list, proposed: list) -> list[dict]:
    return [
        {"name": f"case {n}", "base": b, "proposed": p}
        for n, (b, p) in enumerate(zip(base, proposed, strict=True))
    ]


# 4 of 5 pass with the base, 3 of 5 with the proposal: worse by 0.2.
WORSE_BY_A_FIFTH = cases([True, True, True, True, False], [True, True, True, False, False])
AS_GOOD = cases([True, True, False], [True, True, True])


def attach(api, user, change_id, evals_cases, harness="rules-harness 1.2"):
    return api(user).post(
        f"{BASE}/changes/{change_id}/evals",
        {"harness": harness, "cases": evals_cases},
        format="json",
    )


def require_evals(tenant, admin, *, max_regression: str | None = None) -> None:
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.requireEvals", value="true", user=admin
    )
    if max_regression is not None:
        policy_service.setting_set(
            tenant=tenant,
            project=None,
            key="review.maxRegression",
            value=max_regression,
            user=admin,
        )


@pytest.fixture
def agent_md(project, writer, make_document):
    return make_document(project, "agent.md", TEXT, user=writer)


@pytest.fixture
def approved(api, agent_md, reader, writer) -> int:
    change_id = propose(api, reader).json()["id"]
    assert review(api, writer, change_id).json()["state"] == "approved"
    return change_id


def test_evals_are_stored_with_who_and_listed_with_their_comparison(api, approved, reader):
    response = attach(api, reader, approved, WORSE_BY_A_FIFTH)
    assert response.status_code == 201, response.content
    (run,) = response.json()["evals"]
    assert run["harness"] == "rules-harness 1.2" and run["submitted_by"] == "carol"
    assert run["cases"][3] == {"name": "case 3", "base": True, "proposed": False}
    assert run["summary"] == {
        "cases": 5,
        "measure": "pass_rate",
        "base": 0.8,
        "proposed": 0.6,
        "difference": -0.2,
        "regression": 0.2,
        "worse_cases": 1,
        "better_cases": 0,
    }
    assert response.json()["evals_gate"] == {
        "required": False,
        "max_regression": 0.0,
        "satisfied": True,
        "why": "",
    }
    stored = ChangeEvals.objects.get()
    (row,) = stored.history.all()
    assert row.history_user.username == "carol" and row.change_type == "created"
    assert "evals by rules-harness 1.2: 5 cases, base 0.8, proposed 0.6" in (
        row.history_change_reason
    )
    # The detail lists them too, and scores are a mean score.
    attach(api, reader, approved, cases([0.5, 0.9], [0.75, 0.9]), harness="judge")
    detail = api(reader).get(f"{BASE}/changes/{approved}").json()
    assert [run["harness"] for run in detail["evals"]] == ["rules-harness 1.2", "judge"]
    assert detail["evals"][1]["summary"]["measure"] == "mean_score"
    assert detail["evals"][1]["summary"]["difference"] == 0.125


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"cases": AS_GOOD}, "harness"),
        ({"harness": " ", "cases": AS_GOOD}, "harness"),
        ({"harness": "h\nx", "cases": AS_GOOD}, "harness"),
        ({"harness": "h"}, "cases"),
        ({"harness": "h", "cases": []}, "cases"),
        ({"harness": "h", "cases": "all good"}, "cases"),
        ({"harness": "h", "cases": [7]}, "cases[0]"),
        ({"harness": "h", "cases": [{"base": True, "proposed": True}]}, "cases[0].name"),
        ({"harness": "h", "cases": cases([1.5], [0.5])}, "cases[0].base"),
        ({"harness": "h", "cases": cases([0.5], [-0.1])}, "cases[0].proposed"),
        ({"harness": "h", "cases": cases([0.5], ["pass"])}, "cases[0].proposed"),
        ({"harness": "h", "cases": cases([True], [0.5])}, "cases[0].proposed"),
        ({"harness": "h", "cases": cases([True, True], [True, False])[:1] * 2}, "cases[1].name"),
        (
            {"harness": "h", "cases": [{"name": "a", "base": 1, "proposed": 1, "x": 1}]},
            "cases[0].x",
        ),
        ({"harness": "h", "cases": AS_GOOD, "verdict": "ship"}, "verdict"),
    ],
)
def test_a_bad_submission_is_400_naming_the_field_and_stores_nothing(
    api, approved, reader, payload, field
):
    response = api(reader).post(f"{BASE}/changes/{approved}/evals", payload, format="json")
    assert_error(response, 400, "invalid", field)
    assert not ChangeEvals.objects.exists()


def test_another_tenants_user_gets_404(api, approved, outsider, other_tenant):
    assert_error(attach(api, outsider, approved, AS_GOOD), 404, "not_found")
    assert api(outsider).get(f"{BASE}/changes/{approved}").status_code == 404
    assert not ChangeEvals.objects.exists()


def test_a_closed_change_takes_no_evals(api, approved, admin, reader):
    assert api(admin).post(f"{BASE}/changes/{approved}/merge").status_code == 200
    assert_error(attach(api, reader, approved, AS_GOOD), 409, "change_closed")


def test_merge_is_refused_until_evals_show_the_proposal_is_not_worse(
    api, approved, tenant, admin, reader
):
    require_evals(tenant, admin)
    missing = api(admin).post(f"{BASE}/changes/{approved}/merge")
    body = assert_error(missing, 409, "evals_missing")
    assert body["regression"] is None and body["max_regression"] == 0
    assert "review.requireEvals" in body["detail"]

    attach(api, reader, approved, WORSE_BY_A_FIFTH)
    regressed = api(admin).post(f"{BASE}/changes/{approved}/merge")
    body = assert_error(regressed, 409, "evals_regressed")
    assert body["regression"] == 0.2 and body["max_regression"] == 0
    detail = api(reader).get(f"{BASE}/changes/{approved}").json()
    assert detail["state"] == "approved"
    assert detail["evals_gate"]["required"] and not detail["evals_gate"]["satisfied"]

    # Results run again are attached again; the latest counts.
    attach(api, reader, approved, AS_GOOD)
    merged = api(admin).post(f"{BASE}/changes/{approved}/merge")
    assert merged.status_code == 200, merged.content
    assert merged.json()["state"] == "merged"


@pytest.mark.parametrize(("allowed", "merges"), [("0.2", True), ("0.19", False)])
def test_max_regression_is_the_most_the_proposal_may_be_worse(
    api, approved, tenant, admin, reader, allowed, merges
):
    require_evals(tenant, admin, max_regression=allowed)
    attach(api, reader, approved, WORSE_BY_A_FIFTH)  # 0.8 - 0.6: 0.2000...07 in floats
    response = api(admin).post(f"{BASE}/changes/{approved}/merge")
    if merges:
        assert response.status_code == 200, response.content
    else:
        assert_error(response, 409, "evals_regressed")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("review.requireEvals", "yes"),
        ("review.requireEvals", "1"),
        ("review.maxRegression", "1.5"),
        ("review.maxRegression", "-0.1"),
        ("review.maxRegression", "true"),
        ("review.maxRegression", "five"),
    ],
)
def test_the_eval_settings_refuse_a_bad_value(api, tenant, admin, key, value):
    response = api(admin).put(
        f"/api/v1/tenants/acme/settings/{key}", {"value": value}, format="json"
    )
    assert_error(response, 400, "invalid", "value")


def test_the_eval_settings_take_good_values(api, tenant, admin):
    for key, value in (("review.requireEvals", "true"), ("review.maxRegression", "0.05")):
        response = api(admin).put(
            f"/api/v1/tenants/acme/settings/{key}", {"value": value}, format="json"
        )
        assert response.status_code == 201, response.content


def test_a_change_an_agent_proposed_names_its_process_and_binding_record(
    api, agent_md, project, reader
):
    record = api(reader).post(
        f"{BASE}/bindings/", {"process": "agent-7", "manifest": {}}, format="json"
    )
    assert record.status_code == 201, record.content
    response = api(reader).post(
        f"{BASE}/changes/",
        {
            "path": "agent.md",
            "body": "# Web rules\n\n- Use spaces.\n",
            "base_version": 1,
            "reason": "from a run",
            "process": "agent-7",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["process"] == "agent-7"
    assert response.json()["binding_record"] == record.json()["id"]
    assert BindingRecord.objects.filter(pk=response.json()["binding_record"]).exists()
    # A person's proposal names none.
    plain = propose(api, reader, body="# Web rules\n\n- Use tabs, always.\n").json()
    assert plain["process"] is None and plain["binding_record"] is None


def test_a_bad_process_is_400_naming_it(api, agent_md, reader):
    response = api(reader).post(
        f"{BASE}/changes/",
        {"path": "agent.md", "body": "x\n", "base_version": 1, "process": "a\nb"},
        format="json",
    )
    assert_error(response, 400, "invalid", "process")

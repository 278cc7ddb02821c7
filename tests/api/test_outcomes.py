"""Run outcomes over the API: reported on a record and by process, listed with which
is current, corrected by superseding, refused with the field named, chained in the
tenant's history, and kept to the tenant and the token's project."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agentdocs.models import Outcome, Scope
from agentdocs.services import audit_chain
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service
from tests.outcome_runs import bound_run

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"


@pytest.fixture
def run(project, reader):
    return bound_run(project, "run-1", label="canary", user=reader)


def token_client(user, scopes, **extra) -> APIClient:
    key = token_service.token_create(user=user, name="ci", scopes=scopes, **extra).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def test_a_reader_reports_outcomes_on_a_record_with_who_and_when(api, reader, run):
    response = api(reader).post(
        f"{BASE}/bindings/{run.pk}/outcomes",
        {
            "outcomes": [
                {"name": "task_success", "value": True},
                {"name": "cost_usd", "value": 0.31, "unit": "USD", "comment": "one retry"},
                {"name": "tokens_in", "value": 48211},
            ]
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    outcomes = response.json()["outcomes"]
    assert [(o["name"], o["value"], o["unit"]) for o in outcomes] == [
        ("task_success", True, ""),
        ("cost_usd", 0.31, "USD"),
        ("tokens_in", 48211, ""),
    ]
    first = outcomes[0]
    assert first["binding"] == run.pk and first["process"] == "run-1"
    assert first["reported_by"] == "carol" and first["token"] is not None
    assert first["current"] is True and first["supersedes"] is None
    assert first["reported_at"]
    assert Outcome.objects.count() == 3


def test_a_body_of_one_outcome_is_taken_too(api, reader, run):
    response = api(reader).post(
        f"{BASE}/bindings/{run.pk}/outcomes", {"name": "review_rounds", "value": 2}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["outcomes"][0]["value"] == 2


def test_reporting_by_process_goes_to_its_newest_record(api, reader, project, run):
    newer = bound_run(project, "run-1", label="canary")
    response = api(reader).post(
        f"{BASE}/outcomes",
        {"process": "run-1", "outcomes": [{"name": "task_success", "value": False}]},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["outcomes"][0]["binding"] == newer.pk
    unknown = api(reader).post(
        f"{BASE}/outcomes", {"process": "nobody", "name": "x", "value": 1}, format="json"
    )
    assert unknown.status_code == 404 and unknown.json()["field"] == "process"


def test_a_correction_supersedes_and_both_are_listed(api, reader, writer, run):
    client = api(reader)
    url = f"{BASE}/bindings/{run.pk}/outcomes"
    first = client.post(url, {"name": "task_success", "value": False}, format="json").json()
    again = client.post(url, {"name": "task_success", "value": True}, format="json")
    assert again.status_code == 409 and again.json()["field"] == "supersedes"
    assert str(first["outcomes"][0]["id"]) in again.json()["detail"]
    original = first["outcomes"][0]["id"]
    corrected = api(writer).post(
        url, {"name": "task_success", "value": True, "supersedes": original}, format="json"
    )
    assert corrected.status_code == 201, corrected.content
    correction = corrected.json()["outcomes"][0]
    assert correction["supersedes"] == original and correction["reported_by"] == "bob"
    # Superseding the superseded one again is refused: only the current one may be.
    stale = client.post(
        url, {"name": "task_success", "value": False, "supersedes": original}, format="json"
    )
    assert stale.status_code == 409 and stale.json()["field"] == "supersedes"

    listed = client.get(url).json()["results"]
    assert [(o["id"], o["value"], o["current"], o["superseded_by"]) for o in listed] == [
        (original, False, False, correction["id"]),
        (correction["id"], True, True, None),
    ]
    by_project = client.get(f"{BASE}/outcomes?process=run-1&name=task_success").json()
    assert [o["id"] for o in by_project["results"]] == [original, correction["id"]]


@pytest.mark.parametrize(
    ("body", "field", "status"),
    [
        ({"name": "Task Success", "value": True}, "name", 400),
        ({"name": "x" * 65, "value": True}, "name", 400),
        ({"name": "ok", "value": "yes"}, "value", 400),
        ({"name": "ok", "value": None}, "value", 400),
        ('{"name": "ok", "value": 1e400}', "value", 400),
        ({"name": "ok"}, "value", 400),
        (
            {"outcomes": [{"name": "ok", "value": 1}, {"name": "-bad", "value": 1}]},
            "outcomes.1.name",
            400,
        ),
        ({"outcomes": []}, "outcomes", 400),
        (
            {"outcomes": [{"name": "a", "value": 1}, {"name": "a", "value": 2}]},
            "outcomes.1.name",
            400,
        ),
        ({"name": "ok", "value": 1, "unit": "u" * 33}, "unit", 400),
        ({"name": "ok", "value": 1, "colour": "red"}, "colour", 400),
        ({"name": "ok", "value": 1, "supersedes": 999999}, "supersedes", 400),
        (
            {"name": "ok", "value": 1, "comment": "key AKIAQ7RS2T9VWXY3Z4AB leaked"},
            "comment",
            422,
        ),
        ({"outcomes": [{"name": "ok", "value": 1, "unit": "US\u200bD"}]}, "outcomes.0.unit", 422),
    ],
)
def test_a_bad_outcome_is_refused_naming_its_field_and_nothing_is_stored(
    api, reader, run, body, field, status
):
    url = f"{BASE}/bindings/{run.pk}/outcomes"
    if isinstance(body, str):  # JSON Python cannot write (a number past a double)
        response = api(reader).post(url, body, content_type="application/json")
    else:
        response = api(reader).post(url, body, format="json")
    assert response.status_code == status, response.content
    assert response.json()["field"] == field
    assert Outcome.objects.count() == 0


def test_a_name_keeps_its_kind_in_a_project(api, reader, project, run):
    other = bound_run(project, "run-2")
    client = api(reader)
    client.post(
        f"{BASE}/bindings/{run.pk}/outcomes", {"name": "task_success", "value": True}, format="json"
    )
    response = client.post(
        f"{BASE}/bindings/{other.pk}/outcomes",
        {"name": "task_success", "value": 0.5},
        format="json",
    )
    assert response.status_code == 400 and response.json()["field"] == "value"


def test_a_render_token_reports_for_its_project_but_a_read_token_may_not(reader, run):
    render = token_client(reader, [Scope.RENDER], tenant=run.tenant)
    ok = render.post(f"{BASE}/bindings/{run.pk}/outcomes", {"name": "a", "value": 1}, format="json")
    assert ok.status_code == 201, ok.content
    read = token_client(reader, [Scope.READ])
    refused = read.post(
        f"{BASE}/bindings/{run.pk}/outcomes", {"name": "b", "value": 1}, format="json"
    )
    assert refused.status_code == 403
    assert read.get(f"{BASE}/bindings/{run.pk}/outcomes").status_code == 200


def test_a_render_token_cannot_report_on_another_projects_record(reader, admin, tenant, run):
    tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    render = token_client(reader, [Scope.RENDER], tenant=tenant)
    response = render.post(
        f"/api/v1/tenants/acme/projects/api/bindings/{run.pk}/outcomes",
        {"name": "a", "value": 1},
        format="json",
    )
    assert response.status_code == 404 and response.json()["field"] == "record"


def test_another_tenants_user_gets_404_everywhere(api, outsider, other_tenant, run):
    client = api(outsider)
    for response in (
        client.post(f"{BASE}/bindings/{run.pk}/outcomes", {"name": "a", "value": 1}, format="json"),
        client.get(f"{BASE}/bindings/{run.pk}/outcomes"),
        client.post(
            f"{BASE}/outcomes", {"process": "run-1", "name": "a", "value": 1}, format="json"
        ),
        client.get(f"{BASE}/outcomes"),
        client.get(f"{BASE}/outcomes/compare?metric=a&by=label"),
    ):
        assert response.status_code == 404
    assert Outcome.objects.count() == 0


def test_outcomes_join_the_hash_chain_and_it_still_verifies(api, reader, tenant, run):
    client = api(reader)
    url = f"{BASE}/bindings/{run.pk}/outcomes"
    first = client.post(url, {"name": "task_success", "value": False}, format="json").json()
    client.post(
        url,
        {"name": "task_success", "value": True, "supersedes": first["outcomes"][0]["id"]},
        format="json",
    )
    history = Outcome.history.model.objects.order_by("chain_seq")
    assert history.count() == 2
    assert all(row.chain_tenant == tenant.pk and row.chain_sha256 for row in history)
    assert history.first().history_user.username == "carol"
    report = audit_chain.audit_chain_report(tenant=tenant)
    assert report["ok"], report
    # Editing a chained outcome's history row breaks the chain at that row.
    Outcome.history.model.objects.filter(pk=history.first().pk).update(value=1.0)
    broken = audit_chain.audit_chain_report(tenant=tenant)
    assert not broken["ok"]
    assert broken["broken_at"]["model"] == "agentdocs.historicaloutcome"

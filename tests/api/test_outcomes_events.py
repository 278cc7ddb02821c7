"""Outcomes reported and eval results attached are events: in the tenant's activity
feed and delivered to the webhooks that subscribe to `outcome.reported` and
`change.evals_attached`; a refused report is none, and another tenant sees none."""

from __future__ import annotations

import pytest

from agentdocs import links
from agentdocs.models import Delivery, Event
from agentdocs.services import webhooks as webhook_service
from tests.api.test_changes import TEXT, propose
from tests.api.test_changes_evals import AS_GOOD, attach
from tests.outcome_runs import bound_run

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
FEED = "/api/v1/tenants/acme/activity/"


@pytest.fixture
def run(project, reader):
    return bound_run(project, "run-1", label="canary", user=reader)


def subscribe(tenant, admin, *events: str) -> None:
    webhook_service.webhook_create(
        tenant=tenant,
        url="https://hooks.example.com/outcomes",
        events=list(events),
        projects=None,
        user=admin,
    )


def test_a_report_is_one_outcome_event_in_the_feed_and_a_delivery(
    api, tenant, admin, reader, run, django_capture_on_commit_callbacks
):
    subscribe(tenant, admin, "outcome.reported")
    with django_capture_on_commit_callbacks(execute=True):
        response = api(reader).post(
            f"{BASE}/bindings/{run.pk}/outcomes",
            {"outcomes": [{"name": "task_success", "value": True}, {"name": "cost", "value": 2}]},
            format="json",
        )
    assert response.status_code == 201, response.content
    made = response.json()["outcomes"]
    event = Event.objects.get(type="outcome.reported")
    assert (event.kind, event.action, event.target) == ("outcome", "reported", "run-1")
    assert event.actor_name == "carol"
    assert event.data["binding"] == run.pk and event.data["process"] == "run-1"
    assert event.data["outcomes"] == [
        {
            "id": made[0]["id"],
            "name": "task_success",
            "value": True,
            "unit": "",
            "supersedes": None,
        },
        {"id": made[1]["id"], "name": "cost", "value": 2.0, "unit": "", "supersedes": None},
    ]
    assert "links" not in event.data  # ids only; the payload gets its links
    payload_links = links.event_data(event)["links"]
    assert payload_links["page"] == f"/t/acme/web/bindings/{run.pk}/"
    assert payload_links["api"] == f"{BASE}/bindings/{run.pk}/outcomes"
    assert Delivery.objects.filter(event_id=event.pk).count() == 1
    feed = api(reader).get(FEED + "?kind=outcome").json()["results"]
    assert [(item["type"], item["url"]) for item in feed] == [
        ("outcome.reported", f"/t/acme/web/bindings/{run.pk}/")
    ]


def test_a_correction_names_what_it_supersedes_and_a_refusal_is_no_event(api, reader, run):
    url = f"{BASE}/bindings/{run.pk}/outcomes"
    first = api(reader).post(url, {"name": "task_success", "value": False}, format="json")
    first_id = first.json()["outcomes"][0]["id"]
    assert (
        api(reader).post(url, {"name": "task_success", "value": True}, format="json").status_code
        == 409
    )
    fixed = api(reader).post(
        url, {"name": "task_success", "value": True, "supersedes": first_id}, format="json"
    )
    assert fixed.status_code == 201
    events = list(Event.objects.filter(type="outcome.reported").order_by("created_at"))
    assert [e.data["outcomes"][0]["supersedes"] for e in events] == [None, first_id]


def test_attached_evals_are_a_change_event_in_the_feed_and_a_delivery(
    api, tenant, admin, reader, writer, project, make_document, django_capture_on_commit_callbacks
):
    make_document(project, "agent.md", TEXT, user=writer)
    subscribe(tenant, admin, "change.evals_attached")
    change_id = propose(api, reader).json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        assert attach(api, reader, change_id, AS_GOOD).status_code == 201
    event = Event.objects.get(type="change.evals_attached")
    assert (event.kind, event.action, event.target) == ("change", "evals_attached", str(change_id))
    assert event.data["id"] == change_id and event.data["path"] == "agent.md"
    evals = event.data["evals"]
    assert evals["harness"] == "rules-harness 1.2" and evals["cases"] == 3
    assert (evals["base"], evals["proposed"]) == (pytest.approx(2 / 3), 1.0)
    assert Delivery.objects.filter(event_id=event.pk).count() == 1
    feed = api(reader).get(FEED + "?kind=change").json()["results"]
    assert "change.evals_attached" in {item["type"] for item in feed}


def test_the_new_types_are_webhook_event_types(api, tenant, admin):
    response = api(admin).post(
        "/api/v1/tenants/acme/webhooks/",
        {
            "url": "https://hooks.example.com/x",
            "events": ["outcome.reported", "change.evals_attached"],
        },
        format="json",
    )
    assert response.status_code == 201, response.content


def test_another_tenants_user_sees_no_feed_and_reports_nothing(api, outsider, reader, run):
    api(reader).post(f"{BASE}/bindings/{run.pk}/outcomes", {"name": "a", "value": 1}, format="json")
    client = api(outsider)
    assert client.get(FEED + "?kind=outcome").status_code == 404
    response = client.post(
        f"{BASE}/bindings/{run.pk}/outcomes", {"name": "b", "value": 1}, format="json"
    )
    assert response.status_code == 404
    assert Event.objects.filter(type="outcome.reported").count() == 1

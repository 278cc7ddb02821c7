"""GET /bindings/timeline: which version and sha256 of each bound source the runs saw,
as segments; a bounded window, constant queries, 400 naming a bad parameter."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agentdocs.models import BindingRecord, Document
from tests.timeline_runs import bind_fifty_runs, bind_runs

URL = "/api/v1/tenants/acme/projects/web/bindings/timeline"


@pytest.fixture
def fifty_runs(tenant, project, writer, make_document):
    return bind_fifty_runs(tenant, project, writer, make_document)


def _segments(body, source):
    return [
        (s["version"], s["first_run"], s["last_run"], s["runs"], s["problem_runs"])
        for s in body["segments"]
        if s["source"] == source
    ]


def test_the_agent_document_changing_at_run_41_is_two_segments_then_a_third(
    api, reader, fifty_runs
):
    response = api(reader).get(URL)
    assert response.status_code == 200, response.content
    body = response.json()
    ids = [record.pk for record in fifty_runs]
    assert body["runs"] == 50 and body["truncated"] is False and body["limit"] == 1000
    assert _segments(body, "agent:web/agent.md") == [
        (1, ids[0], ids[39], 40, 0),
        (2, ids[40], ids[44], 5, 2),
        (3, ids[45], ids[49], 5, 0),
    ]
    agent_shas = [s["sha256"] for s in body["segments"] if s["source"] == "agent:web/agent.md"]
    assert agent_shas[2] == Document.objects.get(path="agent.md").sha256
    # Unchanged sources are one segment each; the missing path is its own stretch.
    assert _segments(body, "local:AGENTS.md") == [(1, ids[0], ids[49], 50, 2)]
    assert _segments(body, "context-document:.AGENTS/overview.md") == [(1, ids[0], ids[49], 50, 2)]
    assert _segments(body, "local:missing.md") == [(None, ids[42], ids[43], 2, 2)]
    assert len(_segments(body, "memory-block")) == 3
    # Ordered by source, then time.
    sources = [s["source"] for s in body["segments"]]
    assert sources == sorted(sources)


def test_since_and_until_bound_the_runs(api, reader, fifty_runs):
    start = timezone.now() - timedelta(days=50)
    for day, record in enumerate(fifty_runs):
        BindingRecord.objects.filter(pk=record.pk).update(created_at=start + timedelta(days=day))
    since = (start + timedelta(days=38)).isoformat()
    until = (start + timedelta(days=42)).isoformat()
    body = api(reader).get(URL, {"since": since, "until": until}).json()
    ids = [record.pk for record in fifty_runs]
    assert body["runs"] == 4
    assert _segments(body, "agent:web/agent.md") == [
        (1, ids[38], ids[39], 2, 0),
        (2, ids[40], ids[41], 2, 0),
    ]


def test_the_window_is_the_newest_runs_and_says_when_it_is_cut(api, reader, fifty_runs):
    body = api(reader).get(URL, {"limit": 8}).json()
    ids = [record.pk for record in fifty_runs]
    assert body["runs"] == 8 and body["truncated"] is True and body["limit"] == 8
    assert _segments(body, "agent:web/agent.md") == [
        (2, ids[42], ids[44], 3, 2),
        (3, ids[45], ids[49], 5, 0),
    ]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-40"}, "until"),
        ({"since": "2026-05-02T00:00:00Z", "until": "2026-05-01T00:00:00Z"}, "until"),
        ({"limit": "0"}, "limit"),
        ({"limit": "10001"}, "limit"),
        ({"limit": "many"}, "limit"),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(api, reader, project, params, field):
    response = api(reader).get(URL, params)
    assert response.status_code == 400
    assert response.json()["field"] == field


def test_timeline_is_not_taken_for_a_record_id(api, reader, project):
    body = api(reader).get(URL).json()
    assert body == {
        "since": None,
        "until": None,
        "limit": 1000,
        "truncated": False,
        "runs": 0,
        "segments": [],
    }


def test_another_tenants_user_gets_404(api, outsider, other_tenant, fifty_runs):
    response = api(outsider).get(URL)
    assert response.status_code == 404
    assert response.json()["field"] == "tenant"


@pytest.mark.parametrize("count", [2, 30])
def test_the_timeline_runs_a_constant_number_of_queries(
    api, reader, tenant, project, writer, make_document, count, django_assert_num_queries
):
    make_document(project, "agent.md", "# Rules\n")
    make_document(project, "AGENTS.md", "# Agents\n")
    bind_runs(tenant, project, writer, count)
    client = api(reader)
    # token and access (1) + the window (1)
    with django_assert_num_queries(2):
        assert client.get(URL).status_code == 200


@pytest.mark.parametrize(
    "since", ["2026-01-31", "2026-01-31T09:00:00Z", "2026-01-31T11:00:00 02:00"]
)
def test_the_timeline_reads_since_as_the_activity_feed_does(api, reader, project, since):
    url = f"/api/v1/tenants/acme/projects/web/bindings/timeline?since={since}"
    assert api(reader).get(url).status_code == 200
    activity = api(reader).get(f"/api/v1/tenants/acme/activity/?since={since}")
    assert activity.status_code == 200


def test_an_unreadable_since_is_refused_alike(api, reader, project):
    timeline = api(reader).get("/api/v1/tenants/acme/projects/web/bindings/timeline?since=soon")
    activity = api(reader).get("/api/v1/tenants/acme/activity/?since=soon")
    assert timeline.status_code == activity.status_code == 400
    assert timeline.json()["field"] == activity.json()["field"] == "since"

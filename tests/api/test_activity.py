"""The tenant's activity feed and the history of settings, recipes, memberships and
providers, over the API."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agentdocs.models import Event, Role
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.services import tenancy as tenant_service

pytestmark = pytest.mark.django_db

T = "/api/v1/tenants/acme"
URL = f"{T}/activity/"


@pytest.fixture
def changes(tenant, project, admin, writer):
    """One change of each kind a member sees, and a membership change."""
    doc = document_service.document_create(
        project=project, path="agent.md", body="one\n", user=writer, reason="first rules"
    )
    document_service.document_write(
        document=doc, body="two\n", base_version=1, user=writer, reason="second"
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="terse", user=admin, reason="tone"
    )
    policy_service.recipe_create(
        tenant=tenant, name="review", params={}, profiles={}, user=admin, reason="new"
    )
    provider_service.provider_set(
        tenant=tenant, name="ws/base", project_slug="web", path="agent.md", user=admin
    )
    tenant_service.membership_set(tenant=tenant, username="carol", role="writer", actor=admin)
    tenant_service.membership_set(tenant=tenant, username="carol", role=Role.READER, actor=admin)


def _kinds(response) -> list[str]:
    return [entry["kind"] for entry in response.json()["results"]]


def test_the_feed_lists_every_change_newest_first_with_its_fields(api, admin, changes):
    response = api(admin).get(URL)
    assert response.status_code == 200
    results = response.json()["results"]
    assert [(e["kind"], e["action"], e["target"]) for e in results[:7]] == [
        ("membership", "updated", "carol"),
        ("membership", "updated", "carol"),
        ("provider", "created", "ws/base"),
        ("recipe", "created", "review"),
        ("setting", "created", "memory.tone"),
        ("document", "updated", "agent.md"),
        ("document", "created", "agent.md"),
    ]
    document = results[5]
    assert set(document) == {
        "id",
        "type",
        "at",
        "actor",
        "kind",
        "action",
        "target",
        "project",
        "reason",
        "version",
        "url",
    }
    assert document["id"].startswith("evt_")
    assert (document["type"], document["actor"], document["project"]) == (
        "document.updated",
        "bob",
        "web",
    )
    assert (document["reason"], document["version"]) == ("second", 2)
    assert document["url"] == "/t/acme/web/doc/agent.md"
    setting = results[4]
    assert (setting["project"], setting["version"], setting["url"]) == (
        None,
        None,
        "/t/acme/-/history/settings/memory.tone/",
    )


def test_readers_see_what_they_can_read_but_not_memberships(api, reader, admin, changes):
    kinds = _kinds(api(reader).get(URL))
    assert "membership" not in kinds
    assert {"document", "setting", "recipe", "provider"} <= set(kinds)
    assert "membership" in _kinds(api(admin).get(URL))
    assert api(reader).get(URL, {"kind": "membership"}).json()["results"] == []


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"kind": "document"}, ["document", "document"]),
        ({"project": "web"}, ["document", "document"]),
        ({"actor": "bob"}, ["document", "document"]),
        ({"kind": "setting", "actor": "alice"}, ["setting"]),
        ({"actor": "nobody"}, []),
    ],
)
def test_filters_narrow_the_feed(api, admin, changes, params, expected):
    assert _kinds(api(admin).get(URL, params)) == expected


def test_since_and_until_take_iso_8601(api, admin, changes):
    client = api(admin)
    first = Event.objects.filter(tenant__slug="acme", type="setting.changed").get()
    Event.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(days=3))
    past = (timezone.now() - timedelta(days=1)).isoformat()
    assert "setting" not in _kinds(client.get(URL, {"since": past}))
    assert _kinds(client.get(URL, {"until": past})) == ["setting"]
    day = (timezone.now() - timedelta(days=3)).date().isoformat()
    assert "setting" in _kinds(client.get(URL, {"since": day}))
    assert client.get(URL, {"since": "2026-01-01T00:00:00+02:00"}).status_code == 200
    # A "+" written unencoded in a query string arrives as a space.
    assert client.get(URL + "?since=2026-01-01T00:00:00+02:00").status_code == 200


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"kind": "documents"}, "kind"),
        ({"project": "nope"}, "project"),
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-45"}, "until"),
        ({"since": "2026-02-01", "until": "2026-01-01"}, "since"),
        ({"page": "99"}, "page"),
    ],
)
def test_bad_filters_are_400_naming_the_field(api, admin, changes, params, field):
    response = api(admin).get(URL, params)
    assert response.status_code == (404 if field == "page" else 400)
    assert response.json()["field"] == field


def test_a_foreign_tenant_sees_nothing(api, outsider, other_tenant, changes):
    response = api(outsider).get(URL)
    assert response.status_code == 404
    assert response.json()["field"] == "tenant"
    # Their own feed holds only their tenant's changes.
    own = api(outsider).get("/api/v1/tenants/globex/activity/").json()["results"]
    assert [e["target"] for e in own] == ["mallory"]


def test_the_feed_is_paged(api, admin, tenant):
    for i in range(7):
        policy_service.setting_set(
            tenant=tenant, project=None, key=f"memory.k{i}", value="v", user=admin
        )
    body = api(admin).get(URL, {"page_size": 3, "kind": "setting"}).json()
    assert body["count"] == 7 and len(body["results"]) == 3 and body["next"]
    assert body["results"][0]["target"] == "memory.k6"


def _fill(tenant, project, admin, start: int, stop: int) -> None:
    for i in range(start, stop):
        document_service.document_create(
            project=project, path=f"d{i}.md", body=f"{i}\n", user=admin, reason="fill"
        )
        policy_service.setting_set(
            tenant=tenant, project=project, key=f"memory.k{i}", value="v", user=admin
        )


@pytest.mark.parametrize("params", [{}, {"project": "web", "kind": "document"}])
def test_the_feed_runs_the_same_queries_for_few_and_many_events(
    api, admin, tenant, project, params
):
    client = api(admin)
    counts = []
    for start, stop in ((0, 2), (2, 40)):
        _fill(tenant, project, admin, start, stop)
        client.get(URL, params)  # the token's first use writes nothing afterwards
        with CaptureQueriesContext(connection) as queries:
            response = client.get(URL, params)
        assert response.status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 5


# History of settings, recipes, memberships and providers.


def test_a_setting_history_says_who_why_and_before_and_after(api, reader, admin, tenant, project):
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="terse", user=admin, reason="a"
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="warm", user=admin, reason="b"
    )
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.tone", value="cold", user=admin, reason="c"
    )
    body = api(reader).get(f"{T}/history/settings/memory.tone").json()
    assert body["count"] == 2
    newest = body["results"][0]
    assert newest["version"] == 2 and newest["actor"] == "alice" and newest["reason"] == "b"
    assert newest["action"] == "updated"
    assert newest["before"] == {"value": "terse", "enforced": False}
    assert newest["after"] == {"value": "warm", "enforced": False}
    assert body["results"][1]["before"] is None
    project_history = (
        api(reader).get(f"{T}/history/settings/memory.tone", {"project": "web"}).json()
    )
    assert [e["after"]["value"] for e in project_history["results"]] == ["cold"]


def test_a_deleted_and_recreated_setting_keeps_one_history(api, admin, tenant):
    for value in ("1", "2"):
        policy_service.setting_set(
            tenant=tenant, project=None, key="memory.x", value=value, user=admin
        )
        policy_service.setting_delete(tenant=tenant, project=None, key="memory.x", user=admin)
    results = api(admin).get(f"{T}/history/settings/memory.x").json()["results"]
    assert [(e["action"], e["before"], e["after"]) for e in results] == [
        ("deleted", {"value": "2", "enforced": False}, None),
        ("created", None, {"value": "2", "enforced": False}),
        ("deleted", {"value": "1", "enforced": False}, None),
        ("created", None, {"value": "1", "enforced": False}),
    ]


def test_a_recipe_history_carries_a_line_diff_of_its_json(api, reader, admin, tenant):
    recipe = policy_service.recipe_create(
        tenant=tenant, name="review", params={"agentDocument": "a.md"}, profiles={}, user=admin
    )
    policy_service.recipe_update(
        recipe=recipe, params={"agentDocument": "b.md"}, profiles={}, user=admin, reason="b"
    )
    newest = api(reader).get(f"{T}/history/recipes/review").json()["results"][0]
    assert '-    "agentDocument": "a.md"' in newest["diff"]
    assert '+    "agentDocument": "b.md"' in newest["diff"]
    assert newest["before"]["params"] == {"agentDocument": "a.md"}


def test_membership_history_is_for_tenant_admins(api, admin, writer, reader, tenant):
    tenant_service.membership_set(
        tenant=tenant, username="carol", role="writer", actor=admin, reason="promoted"
    )
    assert api(reader).get(f"{T}/history/members/carol").status_code == 403
    results = api(admin).get(f"{T}/history/members/carol").json()["results"]
    assert [(e["before"], e["after"], e["reason"]) for e in results] == [
        ({"role": "reader"}, {"role": "writer"}, "promoted"),
        (None, {"role": "reader"}, "Added as reader"),
    ]


def test_a_provider_history_follows_its_name(api, reader, admin, tenant, project):
    for path in ("a.md", "b.md"):
        provider_service.provider_set(
            tenant=tenant, name="ws/base", project_slug="web", path=path, user=admin
        )
    results = api(reader).get(f"{T}/history/providers/ws/base").json()["results"]
    assert results[0]["before"] == {"project": "web", "path": "a.md"}
    assert results[0]["after"] == {"project": "web", "path": "b.md"}


@pytest.mark.parametrize(
    ("path", "status", "field"),
    [
        ("history/settings/memory.never", 404, "key"),
        ("history/settings/not-a-key", 400, "key"),
        ("history/recipes/never", 404, "name"),
        ("history/members/nobody", 404, "username"),
        ("history/providers/never/set", 404, "name"),
        ("history/providers/bad name", 400, "name"),
    ],
)
def test_unknown_histories_are_404_and_bad_names_400(api, admin, tenant, path, status, field):
    response = api(admin).get(f"{T}/{path}")
    assert (response.status_code, response.json()["field"]) == (status, field)


def test_a_foreign_tenant_reads_no_history(api, outsider, other_tenant, admin, tenant):
    policy_service.setting_set(tenant=tenant, project=None, key="memory.x", value="1", user=admin)
    for path in ("history/settings/memory.x", "history/members/alice"):
        assert api(outsider).get(f"{T}/{path}").status_code == 404


def test_a_history_page_runs_the_same_queries_for_short_and_long_histories(
    api, reader, admin, tenant
):
    client = api(reader)
    counts = []
    for changes in (2, 40):
        for i in range(changes):
            policy_service.setting_set(
                tenant=tenant, project=None, key="memory.x", value=f"{changes}-{i}", user=admin
            )
        client.get(f"{T}/history/settings/memory.x")
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"{T}/history/settings/memory.x").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]

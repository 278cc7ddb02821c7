"""Every write service records its event in the write's transaction, with the data
webhooks deliver (`delivered`: the stored ids with their links, built from the URL
conf); a refused write records none."""

from __future__ import annotations

import json

import pytest

from agentdocs.core.errors import InvalidInput, SecretDetected, Unprocessable, VersionConflict
from agentdocs.links import event_data as delivered
from agentdocs.models import Event, Role
from agentdocs.services import bindings as binding_service
from agentdocs.services import changes as change_service
from agentdocs.services import documents as document_service
from agentdocs.services import events
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.services import tenancy as tenant_service

pytestmark = pytest.mark.django_db

GITHUB_TOKEN = "ghp_" + "".join(chr(ord("A") + (i * 7) % 26) for i in range(36))


@pytest.fixture
def since(tenant, project):
    """The events written from here on (the fixtures' own are left out)."""
    mark = set(Event.objects.values_list("pk", flat=True))

    def new() -> list[Event]:
        return list(Event.objects.exclude(pk__in=mark).order_by("created_at", "pk"))

    return new


def test_document_writes_emit_created_updated_deleted_and_restored(project, writer, since):
    doc = document_service.document_create(
        project=project, path="agent.md", body="one\n", user=writer, reason="start"
    )
    doc = document_service.document_write(
        document=doc, body="two\n", base_version=1, user=writer, reason="more"
    ).document
    doc = document_service.document_edit(
        document=doc, old="two", new="three", base_version=2, user=writer, reason="edit"
    )
    doc = document_service.document_delete(document=doc, base_version=3, user=writer, reason="gone")
    doc = document_service.document_revert(document=doc, version=2, user=writer, reason="back")
    got = since()
    assert [(e.type, e.kind, e.action, e.version) for e in got] == [
        ("document.created", "document", "created", 1),
        ("document.updated", "document", "updated", 2),
        ("document.updated", "document", "updated", 3),
        ("document.deleted", "document", "deleted", 4),
        ("document.restored", "document", "restored", 5),
    ]
    assert all(e.project_id == project.pk and e.target == "agent.md" for e in got)
    assert delivered(got[0]) == {
        "path": "agent.md",
        "version": 1,
        "sha256": document_service.sha256_of("one\n"),
        "actor": "bob",
        "reason": "start",
        "links": {
            "page": "/t/acme/web/doc/agent.md",
            "api": "/api/v1/tenants/acme/projects/web/documents/agent.md",
        },
    }
    assert got[-1].data["restored_from"] == 2
    assert got[-1].data["sha256"] == document_service.sha256_of("two\n")
    assert (got[-1].actor, got[-1].actor_name, got[-1].reason) == (writer, "bob", "back")


def test_reverting_a_live_document_is_a_restore_from_that_version(project, writer, since):
    doc = document_service.document_create(project=project, path="a.md", body="1\n", user=writer)
    doc = document_service.document_write(
        document=doc, body="2\n", base_version=1, user=writer
    ).document
    document_service.document_revert(document=doc, version=1, user=writer)
    last = since()[-1]
    assert (last.type, last.version, last.data["restored_from"]) == ("document.restored", 3, 1)
    assert last.reason == "Revert to version 1"


def test_refused_and_unchanged_document_writes_emit_nothing(project, writer, reader, since):
    doc = document_service.document_create(project=project, path="a.md", body="1\n", user=writer)
    before = len(since())
    with pytest.raises(VersionConflict):
        document_service.document_write(document=doc, body="x\n", base_version=7, user=writer)
    with pytest.raises(SecretDetected):
        document_service.document_write(
            document=doc, body=f"token {GITHUB_TOKEN}\n", base_version=1, user=writer
        )
    with pytest.raises(InvalidInput):
        document_service.document_edit(
            document=doc, old="absent", new="x", base_version=1, user=writer
        )
    document_service.document_write(document=doc, body="1\n", base_version=1, user=writer)
    assert len(since()) == before


def test_settings_emit_setting_changed_with_scope_value_and_previous(tenant, project, admin, since):
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="terse", user=admin, reason="a"
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="warm", enforced=True, user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="warm", enforced=True, user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.lang", value="en", user=admin, reason="b"
    )
    policy_service.setting_delete(
        tenant=tenant, project=None, key="memory.tone", user=admin, reason="c"
    )
    got = since()
    assert [(e.type, e.action, e.target, e.project_id) for e in got] == [
        ("setting.changed", "created", "memory.tone", None),
        ("setting.changed", "updated", "memory.tone", None),
        ("setting.changed", "created", "memory.lang", project.pk),
        ("setting.changed", "deleted", "memory.tone", None),
    ]
    assert delivered(got[1]) == {
        "key": "memory.tone",
        "scope": "tenant",
        "project": None,
        "action": "updated",
        "value": "warm",
        "enforced": True,
        "previous": {"value": "terse", "enforced": False},
        "actor": "alice",
        "reason": "",
        "links": {
            "page": "/t/acme/-/history/settings/memory.tone/",
            "api": "/api/v1/tenants/acme/settings/memory.tone",
        },
    }
    assert got[2].data["scope"] == "project" and got[2].data["project"] == "web"
    assert delivered(got[2])["links"] == {
        "page": "/t/acme/-/history/settings/memory.lang/?project=web",
        "api": "/api/v1/tenants/acme/projects/web/settings/memory.lang",
    }
    deleted = got[3].data
    assert (deleted["value"], deleted["enforced"], deleted["previous"], deleted["reason"]) == (
        None,
        None,
        {"value": "warm", "enforced": True},
        "c",
    )


def test_a_refused_setting_emits_nothing(tenant, project, admin, since):
    with pytest.raises(SecretDetected):
        policy_service.setting_set(
            tenant=tenant, project=None, key="memory.t", value=GITHUB_TOKEN, user=admin
        )
    with pytest.raises(InvalidInput):
        policy_service.setting_set(
            tenant=tenant, project=project, key="memory.t", value="x", enforced=True, user=admin
        )
    assert since() == []


def test_recipes_emit_recipe_changed(tenant, admin, since):
    recipe = policy_service.recipe_create(
        tenant=tenant, name="review", params={"agentDocument": "a.md"}, profiles={}, user=admin
    )
    policy_service.recipe_update(
        recipe=recipe, params={"agentDocument": "b.md"}, profiles={}, user=admin, reason="why"
    )
    with pytest.raises(InvalidInput):
        policy_service.recipe_update(recipe=recipe, params={"typo": 1}, profiles={}, user=admin)
    policy_service.recipe_delete(recipe=recipe, user=admin, reason="done")
    got = since()
    assert [(e.type, e.action, e.target) for e in got] == [
        ("recipe.changed", "created", "review"),
        ("recipe.changed", "updated", "review"),
        ("recipe.changed", "deleted", "review"),
    ]
    assert delivered(got[1]) == {
        "name": "review",
        "action": "updated",
        "params": {"agentDocument": "b.md"},
        "profiles": {},
        "previous": {"params": {"agentDocument": "a.md"}, "profiles": {}},
        "actor": "alice",
        "reason": "why",
        "links": {
            "page": "/t/acme/-/history/recipes/review/",
            "api": "/api/v1/tenants/acme/recipes/review",
        },
    }
    assert got[2].data["params"] is None and got[2].data["previous"]["params"] == {
        "agentDocument": "b.md"
    }


def test_memberships_emit_membership_changed_with_the_previous_role(tenant, admin, since):
    tenant_service.membership_set(
        tenant=tenant, username="carol", role=Role.WRITER, actor=admin, reason="promoted"
    )
    with pytest.raises(Unprocessable):
        tenant_service.membership_set(tenant=tenant, username="alice", role="reader", actor=admin)
    tenant_service.membership_remove(tenant=tenant, username="carol", actor=admin)
    got = since()
    assert [(e.type, e.action, e.target) for e in got] == [
        ("membership.changed", "updated", "carol"),
        ("membership.changed", "deleted", "carol"),
    ]
    assert delivered(got[0]) == {
        "username": "carol",
        "action": "updated",
        "role": "writer",
        "previous_role": "reader",
        "actor": "alice",
        "reason": "promoted",
        "links": {
            "page": "/t/acme/-/history/members/carol/",
            "api": "/api/v1/tenants/acme/members/carol",
        },
    }
    assert (got[1].data["role"], got[1].data["previous_role"]) == (None, "writer")


def test_an_accepted_invitation_emits_the_new_membership(tenant, admin, outsider, since):
    invitation = tenant_service.invitation_create(
        tenant=tenant, role="reader", invited_by=admin, username="mallory"
    )
    tenant_service.invitation_accept(invitation=invitation, user=outsider)
    (event,) = since()
    assert (event.type, event.action, event.target, event.actor) == (
        "membership.changed",
        "created",
        "mallory",
        outsider,
    )
    assert event.data["role"] == "reader" and event.reason.startswith("Invited by alice")


def test_providers_emit_provider_changed(tenant, project, admin, since):
    provider_service.provider_set(
        tenant=tenant, name="ws/base", project_slug="web", path="a.md", user=admin
    )
    provider_service.provider_set(
        tenant=tenant, name="ws/base", project_slug="web", path="b.md", user=admin, reason="moved"
    )
    with pytest.raises(InvalidInput):
        provider_service.provider_set(
            tenant=tenant, name="ws/base", project_slug="nope", path="b.md", user=admin
        )
    provider_service.provider_delete(tenant=tenant, name="ws/base", user=admin)
    got = since()
    assert [(e.type, e.action) for e in got] == [
        ("provider.changed", "created"),
        ("provider.changed", "updated"),
        ("provider.changed", "deleted"),
    ]
    assert delivered(got[1]) == {
        "name": "ws/base",
        "action": "updated",
        "project": "web",
        "path": "b.md",
        "previous": {"project": "web", "path": "a.md"},
        "actor": "alice",
        "reason": "moved",
        "links": {
            "page": "/t/acme/-/history/providers/ws/base/",
            "api": "/api/v1/tenants/acme/providers/ws/base",
        },
    }


def test_a_binding_record_emits_binding_created_with_its_problem_count(
    tenant, project, writer, since
):
    result = binding_service.binding_create(
        tenant=tenant, project=project, user=writer, process="ci", manifest={"local": ["x.md"]}
    )
    (event,) = since()
    record = result.record
    assert (event.type, event.kind, event.action, event.target, event.project_id) == (
        "binding.created",
        "binding",
        "created",
        str(record.pk),
        project.pk,
    )
    assert delivered(event) == {
        "id": record.pk,
        "process": "ci",
        "problem_count": record.problem_count,
        "actor": "bob",
        "links": {
            "page": f"/t/acme/web/bindings/{record.pk}/",
            "api": f"/api/v1/tenants/acme/projects/web/bindings/{record.pk}",
        },
    }
    assert record.problem_count >= 1  # x.md does not exist


def test_the_signal_is_sent_once_the_write_commits(
    project, writer, django_capture_on_commit_callbacks
):
    sent: list[Event] = []

    def receive(sender, event, **kwargs):
        sent.append(event)

    events.event_committed.connect(receive)
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            document_service.document_create(project=project, path="a.md", body="x", user=writer)
        assert sent == []
        for callback in callbacks:
            callback()
    finally:
        events.event_committed.disconnect(receive)
    assert [e.type for e in sent] == ["document.created"]


def test_an_event_stores_ids_and_its_payload_has_the_links_where_receivers_had_them(
    tenant, project, writer, since
):
    doc = document_service.document_create(
        project=project, path="agent.md", body="one\n", user=writer, reason="start"
    )
    doc = document_service.document_write(
        document=doc, body="two\n", base_version=1, user=writer, reason="more"
    ).document
    document_service.document_revert(document=doc, version=1, user=writer, reason="back")
    restored = since()[-1]
    assert restored.type == "document.restored"
    # Stored: no URL, only what the links are built from (the tenant, project and path).
    assert "links" not in restored.data
    assert "/" not in json.dumps(restored.data).replace("\\/", "")
    # Delivered: the links in their place, before a restore's `restored_from` (the
    # other keys in the stored order, which PostgreSQL's jsonb sorts its own way).
    stored = [key for key in restored.data if key != "restored_from"]
    assert list(delivered(restored)) == [*stored, "links", "restored_from"]
    assert delivered(restored)["links"] == {
        "page": "/t/acme/web/doc/agent.md",
        "api": "/api/v1/tenants/acme/projects/web/documents/agent.md",
    }


def test_an_event_stored_with_its_links_keeps_them(tenant, project, writer):
    stored = {"path": "a.md", "links": {"page": "/then/", "api": "/api/then"}}
    event = events.emit(
        type=events.DOCUMENT_UPDATED,
        tenant=tenant,
        project=project,
        actor=writer,
        target="a.md",
        data=stored,
    )
    assert delivered(event) == stored


def test_a_change_requests_payload_has_its_urls_after_its_label(project, writer, reader, since):
    document_service.document_create(
        project=project, path="agent.md", body="one\n", user=writer, reason="start"
    )
    change = change_service.change_propose(
        project=project, path="agent.md", body="two\n", base_version=1, reason="r", user=reader
    )
    (opened,) = [event for event in since() if event.type == "change.opened"]
    assert "url" not in opened.data and "api_url" not in opened.data
    data = delivered(opened)
    # Right after the label, the other keys in the stored order (jsonb's own on PostgreSQL).
    stored = list(opened.data)
    after = stored.index("label") + 1
    assert list(data) == [*stored[:after], "url", "api_url", *stored[after:]]
    assert (data["url"], data["api_url"]) == (
        f"/t/acme/web/changes/{change.pk}/",
        f"/api/v1/tenants/acme/projects/web/changes/{change.pk}",
    )

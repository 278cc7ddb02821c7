"""Labels of document versions (issue 29): list, move, remove; who may; the review
gate; history, events, webhooks and the hash chain; reading a document by label."""

from __future__ import annotations

import pytest

from agentdocs.models import ChangeRequest, Delivery, DocumentLabel, Event
from agentdocs.services import audit_chain as audit_chain_service
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import webhooks as webhook_service
from tests.api.test_documents import assert_error

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
VANCE = "/api/v1/tenants/acme/projects/_vance"
DOC = f"{BASE}/documents/agent.md"


@pytest.fixture
def agent_md(project, writer, make_document):
    """agent.md at version 3: "one", "two", "three"."""
    document = make_document(project, "agent.md", "one\n", user=writer)
    for version, body in ((1, "two\n"), (2, "three\n")):
        document = document_service.document_write(
            document=document, body=body, base_version=version, user=writer, reason="next"
        ).document
    return document


def move(api, user, label, version, *, doc=DOC, reason="ship it"):
    return api(user).put(
        f"{doc}/labels/{label}", {"version": version, "reason": reason}, format="json"
    )


def test_a_writer_creates_moves_lists_and_removes_a_label(api, agent_md, writer):
    created = move(api, writer, "canary", 2)
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["label"] == "canary" and body["version"] == 2
    assert body["moved_by"] == "bob" and body["reason"] == "ship it"
    assert body["path"] == body["document"] == "agent.md" and body["moved_at"]

    moved = move(api, writer, "canary", 3, reason="newer")
    assert moved.status_code == 200, moved.content
    assert moved.json()["version"] == 3

    listed = api(writer).get(f"{DOC}/labels/")
    assert listed.status_code == 200, listed.content
    data = listed.json()
    assert data["latest"]["label"] == "latest" and data["latest"]["version"] == 3
    assert [(item["label"], item["version"], item["moved_by"]) for item in data["labels"]] == [
        ("canary", 3, "bob")
    ]
    # The same entries as every other list answers them, latest first.
    assert data["count"] == 2
    assert [(item["name"], item["version"]) for item in data["results"]] == [
        ("latest", 3),
        ("canary", 3),
    ]
    one = api(writer).get(f"{DOC}/labels/canary")
    assert one.status_code == 200, one.content
    assert one.json() == data["labels"][0]
    assert api(writer).get(f"{DOC}/labels/latest").json()["version"] == 3

    removed = api(writer).delete(f"{DOC}/labels/canary", {"reason": "done"}, format="json")
    assert removed.status_code == 204, removed.content
    assert not DocumentLabel.objects.exists()
    assert api(writer).get(f"{DOC}/labels/").json()["labels"] == []
    assert_error(api(writer).delete(f"{DOC}/labels/canary"), 404, "not_found", "label")
    assert_error(api(writer).get(f"{DOC}/labels/canary"), 404, "not_found", "label")
    assert_error(api(writer).get(f"{DOC}/labels/Not-A-Slug"), 400, "invalid", "label")


def test_every_move_is_a_history_entry_with_writer_and_reason_and_the_chain_holds(
    api, agent_md, writer, tenant
):
    move(api, writer, "canary", 2, reason="try it")
    move(api, writer, "canary", 3, reason="again")
    api(writer).delete(f"{DOC}/labels/canary", {"reason": "gone"}, format="json")
    rows = list(DocumentLabel.history.order_by("history_id"))
    assert [(r.version, r.history_user.username, r.history_change_reason) for r in rows] == [
        (2, "bob", "try it"),
        (3, "bob", "again"),
        (3, "bob", "gone"),
    ]
    assert [r.change_type for r in rows] == ["created", "updated", "deleted"]
    assert all(r.chain_tenant == tenant.pk and r.chain_seq for r in rows)
    assert audit_chain_service.audit_chain_verify(tenant=tenant)["ok"]


def test_moves_are_events_in_the_feed_and_webhook_deliveries(
    api, agent_md, writer, admin, tenant, django_capture_on_commit_callbacks
):
    webhook_service.webhook_create(
        tenant=tenant,
        url="https://hooks.example.com/labels",
        events=["document.label_moved", "document.label_removed"],
        projects=None,
        user=admin,
    )
    with django_capture_on_commit_callbacks(execute=True):
        move(api, writer, "canary", 2)
        api(writer).delete(f"{DOC}/labels/canary", format="json")
    moved = Event.objects.get(type="document.label_moved")
    assert moved.kind == "document" and moved.version == 2
    assert moved.data["label"] == "canary" and moved.data["path"] == "agent.md"
    assert moved.data["previous_version"] is None and moved.data["actor"] == "bob"
    removed = Event.objects.get(type="document.label_removed")
    assert removed.data["version"] is None and removed.data["previous_version"] == 2
    assert Delivery.objects.count() == 2
    feed = api(writer).get("/api/v1/tenants/acme/activity/").json()["results"]
    assert {"document.label_moved", "document.label_removed"} <= {item["type"] for item in feed}


def test_a_reader_may_list_but_not_move(api, agent_md, reader):
    assert api(reader).get(f"{DOC}/labels/").status_code == 200
    assert_error(move(api, reader, "canary", 2), 403, "forbidden")
    assert api(reader).delete(f"{DOC}/labels/canary").status_code == 403


def test_a_writer_may_not_move_a_protected_label_a_reviewer_may(api, agent_md, writer, admin):
    assert_error(move(api, writer, "production", 2), 403, "forbidden", "label")
    assert move(api, admin, "production", 2).status_code == 201
    assert api(writer).delete(f"{DOC}/labels/production").status_code == 403
    assert api(admin).delete(f"{DOC}/labels/production").status_code == 204


def test_review_protected_labels_names_the_protected_labels(api, agent_md, writer, admin, tenant):
    policy_service.setting_set(
        tenant=tenant,
        project=None,
        key="review.protectedLabels",
        value='["staging"]',
        user=admin,
    )
    assert move(api, writer, "production", 2).status_code == 201
    assert_error(move(api, writer, "staging", 2), 403, "forbidden", "label")
    bad = api(admin).put(
        "/api/v1/tenants/acme/settings/review.protectedLabels",
        {"value": '["Not A Slug"]'},
        format="json",
    )
    assert bad.status_code == 400, bad.content


def test_vance_labels_are_moved_by_tenant_admins_only(api, vance, admin, writer, make_document):
    make_document(vance, "agent.md", "house\n", user=admin)
    doc = f"{VANCE}/documents/agent.md"
    assert_error(move(api, writer, "canary", 1, doc=doc), 403, "forbidden", "path")
    assert move(api, admin, "canary", 1, doc=doc).status_code == 201


def test_an_outsider_gets_404_on_every_label_endpoint(api, agent_md, admin, outsider, other_tenant):
    move(api, admin, "canary", 2)
    client = api(outsider)
    for response in (
        client.get(f"{DOC}/labels/"),
        client.get(f"{DOC}/labels/canary"),
        client.put(f"{DOC}/labels/canary", {"version": 1}, format="json"),
        client.delete(f"{DOC}/labels/canary"),
        client.get(f"{DOC}?label=canary"),
    ):
        assert response.status_code == 404, response.content
    assert DocumentLabel.objects.get().version == 2


@pytest.mark.parametrize("name", ["latest", "Production", "-x", "a_b", "x" * 65])
def test_latest_and_names_that_are_not_slugs_are_400_naming_label(api, agent_md, writer, name):
    response = move(api, writer, name, 2)
    assert_error(response, 400, "invalid", "label")
    assert not DocumentLabel.objects.exists()


def test_a_version_the_document_never_had_is_404_naming_version(api, agent_md, writer):
    assert_error(move(api, writer, "canary", 9), 404, "not_found", "version")
    assert move(api, writer, "canary", 0).status_code == 400
    response = api(writer).put(f"{DOC}/labels/canary", {"reason": "x"}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "version"
    assert not DocumentLabel.objects.exists()


def test_a_move_without_a_reason_is_allowed_as_a_write_is(api, agent_md, writer):
    response = api(writer).put(f"{DOC}/labels/canary", {"version": 1}, format="json")
    assert response.status_code == 201 and response.json()["reason"] == ""


def test_under_review_a_writer_s_move_opens_a_change_request_and_merging_moves_it(
    api, agent_md, writer, admin, reader, tenant
):
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["agent.md"]', user=admin
    )
    response = move(api, writer, "staging", 2, reason="stage v2")
    assert response.status_code == 202, response.content
    change = response.json()
    assert change["label"] == "staging" and change["base_version"] == 2
    assert change["state"] == "open" and change["proposer"] == "bob"
    assert not DocumentLabel.objects.exists()
    change_url = f"{BASE}/changes/{change['id']}"
    approved = api(admin).post(f"{change_url}/reviews", {"decision": "approve"}, format="json")
    assert approved.status_code == 201, approved.content
    merged = api(writer).post(f"{change_url}/merge")
    assert merged.status_code == 200, merged.content
    assert merged.json()["state"] == "merged" and merged.json()["merged_version"] == 2
    label = DocumentLabel.objects.get()
    assert (label.name, label.version, label.moved_by.username) == ("staging", 2, "bob")
    # No version was written.
    assert api(reader).get(DOC).json()["version"] == 3
    # A tenant admin moves directly.
    assert move(api, admin, "staging", 3).status_code == 200
    assert ChangeRequest.objects.count() == 1
    # The label is not a column of the change request's history: a new column there
    # would change the hash of every change request row already in the chain.
    history_columns = {f.attname for f in ChangeRequest.history.model._meta.concrete_fields}
    assert "label" not in history_columns
    assert audit_chain_service.audit_chain_verify(tenant=tenant)["ok"]


def test_reading_a_document_by_label(api, agent_md, writer, reader):
    move(api, writer, "canary", 2)
    response = api(reader).get(f"{DOC}?label=canary")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 2 and body["body"] == "two\n"
    assert body["sha256"] == document_service.sha256_of("two\n")
    assert response["ETag"].startswith('"v2-')
    assert api(reader).get(f"{DOC}?label=latest").json()["version"] == 3
    assert_error(api(reader).get(f"{DOC}?label=production"), 404, "not_found", "label")
    assert_error(api(reader).get(f"{DOC}?label=Bad!"), 400, "invalid", "label")


def test_a_document_named_under_labels_still_works(api, project, writer, make_document):
    make_document(project, "labels/x.md", "x\n", user=writer)
    make_document(project, "docs/labels/y.md", "y\n", user=writer)
    assert api(writer).get(f"{BASE}/documents/labels/x.md").json()["body"] == "x\n"
    assert api(writer).get(f"{BASE}/documents/docs/labels/y.md").json()["body"] == "y\n"
    assert move(api, writer, "canary", 1, doc=f"{BASE}/documents/labels/x.md").status_code == 201

"""Review everywhere for labels (issue 34, finding 5): removing a label passes the same
gate as moving it (a change request under `review.required`, whose merge removes the
label), and an approval counts only while its reviewer still may review the change,
checked again at the merge."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agentdocs.models import ChangeRequest, DocumentLabel, Role
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from agentdocs.services import policy as policy_service
from agentdocs.services import tenancy as tenant_service
from tests.api.test_documents import assert_error

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
VANCE = "/api/v1/tenants/acme/projects/_vance"
DOC = f"{BASE}/documents/agent.md"


@pytest.fixture
def agent_md(project, writer, admin, make_document):
    """agent.md at version 2, labelled canary at v1 and production at v2."""
    document = make_document(project, "agent.md", "one\n", user=writer)
    document = document_service.document_write(
        document=document, body="two\n", base_version=1, user=writer, reason="next"
    ).document
    label_service.label_move(document=document, name="canary", version=1, user=writer)
    label_service.label_move(document=document, name="production", version=2, user=admin)
    return document


@pytest.fixture
def reviewed(tenant, admin):
    """agent.md is under `review.required`."""
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["agent.md"]', user=admin
    )


@pytest.fixture
def erin(tenant, admin):
    """A second writer, to review what bob proposes."""
    get_user_model().objects.create_user(username="erin", password="erin-password")
    tenant_service.membership_set(tenant=tenant, username="erin", role=Role.WRITER, actor=admin)
    return get_user_model().objects.get(username="erin")


def remove(api, user, label, *, doc=DOC, reason="not any more"):
    return api(user).delete(f"{doc}/labels/{label}", {"reason": reason}, format="json")


def change_url(change_id: int) -> str:
    return f"{BASE}/changes/{change_id}"


def test_under_review_a_writer_s_removal_opens_a_change_request_and_merging_removes_it(
    api, agent_md, writer, admin, reader, reviewed
):
    response = remove(api, writer, "canary", reason="canary is over")
    assert response.status_code == 202, response.content
    change = response.json()
    assert change["label"] == "canary" and change["label_action"] == "remove"
    assert change["base_version"] == 1 and change["state"] == "open"
    assert change["proposer"] == "bob" and change["reason"] == "canary is over"
    # Nothing removed yet: readers of canary still read v1.
    assert DocumentLabel.objects.filter(name="canary").exists()
    assert api(reader).get(f"{DOC}?label=canary").json()["version"] == 1
    # A move proposed the same way says so.
    moved = api(writer).put(f"{DOC}/labels/staging", {"version": 2}, format="json")
    assert moved.status_code == 202 and moved.json()["label_action"] == "move"

    approved = api(admin).post(
        f"{change_url(change['id'])}/reviews", {"decision": "approve"}, format="json"
    )
    assert approved.status_code == 201, approved.content
    merged = api(writer).post(f"{change_url(change['id'])}/merge")
    assert merged.status_code == 200, merged.content
    body = merged.json()
    assert body["state"] == "merged" and body["label_action"] == "remove"
    assert body["merged_version"] is None
    assert not DocumentLabel.objects.filter(name="canary").exists()
    assert_error(api(reader).get(f"{DOC}?label=canary"), 404, "not_found", "label")
    # The removal is the label's history row, by the proposer; no version was written.
    row = DocumentLabel.history.filter(name="canary").latest("history_id")
    assert row.change_type == "deleted" and row.history_user == writer
    assert f"change #{change['id']}" in row.history_change_reason
    assert api(reader).get(DOC).json()["version"] == 2


def test_under_review_an_admin_removes_directly(api, agent_md, admin, reviewed):
    assert remove(api, admin, "canary").status_code == 204
    assert not DocumentLabel.objects.filter(name="canary").exists()
    assert not ChangeRequest.objects.exists()


def test_a_removal_is_refused_as_a_move_is_and_proposes_nothing(
    api, agent_md, writer, reader, outsider, other_tenant, admin, tenant, vance, make_document
):
    house = make_document(vance, "agent.md", "house\n", user=admin)
    label_service.label_move(document=house, name="canary", version=1, user=admin)
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["agent.md"]', user=admin
    )
    # A protected label is a reviewer's to remove, under review too.
    assert_error(remove(api, writer, "production"), 403, "forbidden", "label")
    assert_error(remove(api, reader, "canary"), 403, "forbidden")
    assert_error(remove(api, outsider, "canary"), 404, "not_found")
    # No such label: 404 naming it, and no change request for it.
    assert_error(remove(api, writer, "staging"), 404, "not_found", "label")
    assert_error(remove(api, writer, "latest"), 400, "invalid", "label")
    # `_vance` labels are the tenant admins'.
    vance_doc = f"{VANCE}/documents/agent.md"
    assert_error(remove(api, writer, "canary", doc=vance_doc), 403, "forbidden", "path")
    assert_error(remove(api, outsider, "canary", doc=vance_doc), 404, "not_found")
    assert not ChangeRequest.objects.exists()
    assert DocumentLabel.objects.count() == 3
    assert remove(api, admin, "canary", doc=vance_doc).status_code == 204


def test_the_removal_s_merge_is_a_reviewer_s_and_an_outsider_gets_404(
    api, agent_md, writer, admin, reader, outsider, other_tenant, erin, reviewed
):
    change_id = remove(api, writer, "canary").json()["id"]
    for client in (api(outsider),):
        assert_error(
            client.post(f"{change_url(change_id)}/reviews", {"decision": "approve"}, format="json"),
            404,
            "not_found",
        )
        assert_error(client.post(f"{change_url(change_id)}/merge"), 404, "not_found")
    assert_error(
        api(reader).post(f"{change_url(change_id)}/reviews", {"decision": "approve"}),
        403,
        "forbidden",
    )
    assert_error(api(erin).post(f"{change_url(change_id)}/merge"), 409, "not_approved")
    assert DocumentLabel.objects.filter(name="canary").exists()


def _approved_change(api, kind: str, *, writer, erin) -> int:
    """A change request bob proposed (a body, or a canary removal) that erin approved."""
    if kind == "label":
        response = remove(api, writer, "canary")
    else:
        response = api(writer).post(
            f"{BASE}/changes/",
            {"path": "agent.md", "body": "three\n", "base_version": 2, "reason": "next"},
            format="json",
        )
    assert response.status_code in (201, 202), response.content
    change_id = response.json()["id"]
    approved = api(erin).post(
        f"{change_url(change_id)}/reviews", {"decision": "approve"}, format="json"
    )
    assert approved.status_code == 201, approved.content
    assert approved.json()["state"] == "approved" and approved.json()["approvals"] == ["erin"]
    return change_id


@pytest.mark.parametrize("kind", ["body", "label"])
def test_an_approval_no_longer_counts_once_its_reviewer_is_demoted(
    api, agent_md, tenant, writer, admin, erin, reviewed, kind
):
    change_id = _approved_change(api, kind, writer=writer, erin=erin)
    tenant_service.membership_set(tenant=tenant, username="erin", role=Role.READER, actor=admin)

    detail = api(admin).get(change_url(change_id)).json()
    assert detail["approvals"] == [] and detail["approvals_not_counting"] == ["erin"]
    assert [(r["reviewer"], r["decision"], r["counts"]) for r in detail["reviews"]] == [
        ("erin", "approve", False)
    ]
    body = assert_error(api(admin).post(f"{change_url(change_id)}/merge"), 409, "not_approved")
    assert (body["approvals"], body["approvals_required"]) == (0, 1)
    assert DocumentLabel.objects.filter(name="canary").exists()
    assert api(admin).get(DOC).json()["version"] == 2

    # Promoted again, the approval counts again: the rule is the role at the merge.
    tenant_service.membership_set(tenant=tenant, username="erin", role=Role.WRITER, actor=admin)
    detail = api(admin).get(change_url(change_id)).json()
    assert detail["approvals"] == ["erin"] and detail["reviews"][0]["counts"] is True
    merged = api(admin).post(f"{change_url(change_id)}/merge")
    assert merged.status_code == 200, merged.content


def test_an_approval_no_longer_counts_once_its_reviewer_left_the_tenant(
    api, agent_md, tenant, writer, admin, erin, reviewed
):
    change_id = _approved_change(api, "label", writer=writer, erin=erin)
    tenant_service.membership_remove(tenant=tenant, username="erin", actor=admin)
    assert api(admin).get(change_url(change_id)).json()["approvals_not_counting"] == ["erin"]
    assert_error(api(admin).post(f"{change_url(change_id)}/merge"), 409, "not_approved")
    # Another reviewer's approval is what counts then.
    api(admin).post(f"{change_url(change_id)}/reviews", {"decision": "approve"}, format="json")
    detail = api(admin).get(change_url(change_id)).json()
    assert detail["approvals"] == ["alice"] and detail["approvals_not_counting"] == ["erin"]
    assert api(admin).post(f"{change_url(change_id)}/merge").status_code == 200
    assert not DocumentLabel.objects.filter(name="canary").exists()


def test_a_label_protected_since_the_proposal_is_reviewed_by_reviewers_only(
    api, agent_md, tenant, writer, admin, erin, reviewed
):
    """Who may review a label's change request is who may move that label: one rule
    (`Access.may_move_label`) for the API, the pages and the review."""
    change_id = _approved_change(api, "label", writer=writer, erin=erin)
    policy_service.setting_set(
        tenant=tenant,
        project=None,
        key="review.protectedLabels",
        value='["canary"]',
        user=admin,
    )
    detail = api(admin).get(change_url(change_id)).json()
    assert detail["approvals"] == [] and detail["approvals_not_counting"] == ["erin"]
    assert_error(api(erin).post(f"{change_url(change_id)}/merge"), 403, "forbidden", "label")
    assert_error(
        api(erin).post(f"{change_url(change_id)}/reviews", {"decision": "approve"}, format="json"),
        403,
        "forbidden",
        "label",
    )
    assert_error(api(admin).post(f"{change_url(change_id)}/merge"), 409, "not_approved")
    assert DocumentLabel.objects.filter(name="canary").exists()

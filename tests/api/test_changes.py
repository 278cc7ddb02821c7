"""The change requests API: propose, list, read, review, merge, withdraw, comment; and
protected documents (`review.required`) answering 409 review_required."""

from __future__ import annotations

import pytest

from agentdocs.models import ChangeRequest, Document, Event
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import tokens as token_service
from tests.api.test_documents import assert_error

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
VANCE = "/api/v1/tenants/acme/projects/_vance"
TEXT = "# Web rules\n\n- Use tabs.\n- Test first.\n- Ship small.\n"


@pytest.fixture
def agent_md(project, writer, make_document):
    return make_document(project, "agent.md", TEXT, user=writer)


def propose(api, user, *, body=None, base_version=1, path="agent.md", base=BASE, reason="tidy"):
    body = body if body is not None else TEXT.replace("Use tabs", "Use spaces")
    return api(user).post(
        f"{base}/changes/",
        {"path": path, "body": body, "base_version": base_version, "reason": reason},
        format="json",
    )


def review(api, user, change_id, decision="approve", base=BASE, comment=""):
    return api(user).post(
        f"{base}/changes/{change_id}/reviews",
        {"decision": decision, "comment": comment},
        format="json",
    )


def test_a_reader_proposes_and_gets_an_open_change(api, agent_md, reader):
    response = propose(api, reader)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["state"] == "open"
    assert body["path"] == "agent.md" and body["base_version"] == 1
    assert body["reason"] == "tidy" and body["proposer"] == "carol"
    assert body["created_at"] and isinstance(body["id"], int)
    assert body["url"].endswith(f"/t/acme/web/changes/{body['id']}/")
    assert body["api_url"].endswith(f"{BASE}/changes/{body['id']}")
    event = Event.objects.get(type="change.opened")
    assert event.target == str(body["id"]) and event.data["proposer"] == "carol"
    # Nothing was written to the document.
    assert Document.objects.get(pk=agent_md.pk).version == 1


def test_a_read_scoped_token_may_propose(client, agent_md, reader):
    key = token_service.token_create(user=reader, name="agent", scopes=["read"]).key
    response = client.post(
        f"{BASE}/changes/",
        {"path": "agent.md", "body": "x\n", "base_version": 1},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert response.status_code == 201, response.content


@pytest.mark.parametrize(
    ("payload", "field", "status"),
    [
        ({"body": "x\n", "base_version": 1}, "path", 400),
        ({"path": "agent.md", "base_version": 1}, "body", 400),
        ({"path": "agent.md", "body": "x\n"}, "base_version", 400),
        ({"path": "agent.md", "body": "x\n", "base_version": "one"}, "base_version", 400),
        ({"path": "agent.md", "body": "x\n", "base_version": 0}, "base_version", 400),
        ({"path": "agent.md", "body": "x\n", "base_version": 7}, "base_version", 404),
        ({"path": "nope.md", "body": "x\n", "base_version": 1}, "path", 404),
        ({"path": "../x", "body": "x\n", "base_version": 1}, "path", 400),
        ({"path": "agent.md", "body": TEXT, "base_version": 1}, "body", 400),
        ({"path": "agent.md", "body": "x", "base_version": 1, "extra": 1}, "extra", 400),
        ({"path": "agent.md", "body": "x", "base_version": 1, "reason": 5}, "reason", 400),
    ],
)
def test_bad_proposals_name_the_field_and_store_nothing(
    api, agent_md, reader, payload, field, status
):
    response = api(reader).post(f"{BASE}/changes/", payload, format="json")
    assert response.status_code == status, response.content
    assert response.json()["field"] == field
    assert not ChangeRequest.objects.exists()


def test_a_secret_is_refused_at_proposal_time(api, agent_md, reader):
    response = propose(api, reader, body=TEXT + "-----BEGIN RSA PRIVATE KEY-----\n")
    assert_error(response, 422, "secret_detected", "body")
    assert not ChangeRequest.objects.exists()


def test_writer_approves_then_merges_with_the_proposer_as_author(
    api, agent_md, reader, writer, admin
):
    change_id = propose(api, reader).json()["id"]
    approved = review(api, writer, change_id, comment="good")
    assert approved.status_code == 201, approved.content
    assert approved.json()["state"] == "approved"
    assert approved.json()["approvals"] == ["bob"]
    merged = api(admin).post(f"{BASE}/changes/{change_id}/merge")
    assert merged.status_code == 200, merged.content
    body = merged.json()
    assert (
        body["state"] == "merged" and body["merged_version"] == 2 and body["merged_by"] == "alice"
    )
    document = Document.objects.get(pk=agent_md.pk)
    assert document.version == 2 and "Use spaces" in document.body
    record = document.history.get(version=2)
    assert record.history_user.username == "carol"
    assert record.change_request_id == change_id
    assert f"change #{change_id}" in record.history_change_reason
    assert "approved by bob" in record.history_change_reason
    assert "merged by alice" in record.history_change_reason
    types = list(
        Event.objects.filter(kind="change").order_by("created_at").values_list("type", flat=True)
    )
    assert types == ["change.opened", "change.approved", "change.merged"]
    # The history API shows the link too.
    history = api(reader).get(f"{BASE}/history/agent.md").json()["results"][0]
    assert history["version"] == 2 and history["change_request"] == change_id
    assert history["user"] == "carol" and history["review_bypassed"] is False


def test_a_stale_change_merges_cleanly_onto_the_current_version(api, agent_md, reader, writer):
    change_id = propose(api, reader).json()["id"]
    document_service.document_write(
        document=agent_md,
        body=TEXT.replace("Ship small.", "Ship small and often."),
        base_version=1,
        user=writer,
        reason="theirs",
    )
    detail = api(reader).get(f"{BASE}/changes/{change_id}").json()
    assert detail["mergeable"] is True and detail["current_version"] == 2
    assert detail["diff_against_base"]["from_version"] == 1
    assert detail["diff_against_current"]["from_version"] == 2
    assert detail["diff_against_base"]["added"] == 1
    review(api, writer, change_id)
    merged = api(writer).post(f"{BASE}/changes/{change_id}/merge")
    assert merged.status_code == 200, merged.content
    body = Document.objects.get(pk=agent_md.pk).body
    assert "Use spaces" in body and "Ship small and often." in body


def test_a_conflicting_merge_is_409_and_the_request_stays(api, agent_md, reader, writer):
    change_id = propose(api, reader).json()["id"]
    document_service.document_write(
        document=agent_md,
        body=TEXT.replace("Use tabs", "Use tabs, always"),
        base_version=1,
        user=writer,
    )
    detail = api(reader).get(f"{BASE}/changes/{change_id}").json()
    assert detail["mergeable"] is False and len(detail["conflicts"]) == 1
    review(api, writer, change_id)
    response = api(writer).post(f"{BASE}/changes/{change_id}/merge")
    body = assert_error(response, 409, "merge_conflict")
    (conflict,) = body["conflicts"]
    assert conflict["base"]["lines"] == ["- Use tabs."]
    assert conflict["theirs"]["lines"] == ["- Use tabs, always."]
    assert conflict["yours"]["lines"] == ["- Use spaces."]
    assert conflict["base"]["start"] == 3
    assert ChangeRequest.objects.get(pk=change_id).state == "approved"
    assert Document.objects.get(pk=agent_md.pk).version == 2


def test_merging_needs_the_approvals(api, agent_md, reader, writer, admin, tenant):
    change_id = propose(api, reader).json()["id"]
    assert_error(api(writer).post(f"{BASE}/changes/{change_id}/merge"), 409, "not_approved")
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.approvals", value="2", user=admin
    )
    assert review(api, writer, change_id).json()["state"] == "open"
    assert_error(api(writer).post(f"{BASE}/changes/{change_id}/merge"), 409, "not_approved")
    assert review(api, admin, change_id).json()["state"] == "approved"
    assert api(writer).post(f"{BASE}/changes/{change_id}/merge").status_code == 200


def test_nobody_reviews_their_own_change(api, agent_md, writer):
    change_id = propose(api, writer).json()["id"]
    assert_error(review(api, writer, change_id), 409, "own_change")
    assert_error(review(api, writer, change_id, "reject"), 409, "own_change")
    assert ChangeRequest.objects.get(pk=change_id).state == "open"


def test_a_reader_may_not_review_or_merge(api, agent_md, reader, admin):
    change_id = propose(api, admin).json()["id"]
    assert_error(review(api, reader, change_id), 403, "forbidden")
    assert_error(api(reader).post(f"{BASE}/changes/{change_id}/merge"), 403, "forbidden")


def test_vance_proposals_are_approved_by_admins_only(
    api, vance, make_document, reader, writer, admin
):
    make_document(vance, "agent.md", "# Acme\n- be kind\n")
    response = propose(api, reader, base=VANCE, body="# Acme\n- be kind\n- be brief\n")
    assert response.status_code == 201, response.content
    change_id = response.json()["id"]
    assert_error(review(api, writer, change_id, base=VANCE), 403, "forbidden")
    assert review(api, admin, change_id, base=VANCE).json()["state"] == "approved"
    assert_error(api(writer).post(f"{VANCE}/changes/{change_id}/merge"), 403, "forbidden")
    assert api(admin).post(f"{VANCE}/changes/{change_id}/merge").status_code == 200


def test_a_reject_closes_the_request_for_good(api, agent_md, reader, writer, admin):
    change_id = propose(api, reader).json()["id"]
    assert review(api, writer, change_id, "reject", comment="no").json()["state"] == "rejected"
    assert_error(review(api, admin, change_id), 409, "change_closed")
    assert_error(api(admin).post(f"{BASE}/changes/{change_id}/merge"), 409, "change_closed")
    assert_error(api(reader).post(f"{BASE}/changes/{change_id}/withdraw"), 409, "change_closed")
    comment = api(reader).post(
        f"{BASE}/changes/{change_id}/comments", {"body": "hm"}, format="json"
    )
    assert_error(comment, 409, "change_closed")
    assert Event.objects.filter(type="change.rejected").count() == 1


def test_withdraw_by_the_proposer_only(api, agent_md, reader, writer):
    change_id = propose(api, reader).json()["id"]
    assert_error(api(writer).post(f"{BASE}/changes/{change_id}/withdraw"), 403, "forbidden")
    withdrawn = api(reader).post(f"{BASE}/changes/{change_id}/withdraw")
    assert withdrawn.status_code == 200 and withdrawn.json()["state"] == "withdrawn"
    assert_error(review(api, writer, change_id), 409, "change_closed")
    assert Event.objects.filter(type="change.withdrawn").count() == 1


def test_a_merged_request_is_immutable(api, agent_md, reader, writer, admin):
    change_id = propose(api, reader).json()["id"]
    review(api, writer, change_id)
    api(writer).post(f"{BASE}/changes/{change_id}/merge")
    assert_error(api(writer).post(f"{BASE}/changes/{change_id}/merge"), 409, "change_closed")
    assert_error(review(api, admin, change_id, "reject"), 409, "change_closed")
    assert_error(api(reader).post(f"{BASE}/changes/{change_id}/withdraw"), 409, "change_closed")


def test_comments_by_any_member_and_shown_on_the_change(api, agent_md, reader, writer):
    change_id = propose(api, writer).json()["id"]
    response = api(reader).post(
        f"{BASE}/changes/{change_id}/comments", {"body": "why spaces?"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["author"] == "carol"
    assert_error(
        api(reader).post(f"{BASE}/changes/{change_id}/comments", {"body": ""}, format="json"),
        400,
        "invalid",
        "body",
    )
    detail = api(writer).get(f"{BASE}/changes/{change_id}").json()
    assert [c["body"] for c in detail["comments"]] == ["why spaces?"]


def test_bad_review_input_names_the_field(api, agent_md, reader, writer):
    change_id = propose(api, reader).json()["id"]
    assert_error(review(api, writer, change_id, "maybe"), 400, "invalid", "decision")
    response = api(writer).post(f"{BASE}/changes/{change_id}/reviews", {}, format="json")
    assert_error(response, 400, "invalid", "decision")
    assert ChangeRequest.objects.get(pk=change_id).state == "open"


def test_the_list_filters_by_state_and_pages(api, agent_md, reader, writer):
    first = propose(api, reader).json()["id"]
    second = propose(api, reader, body="other\n").json()["id"]
    review(api, writer, first, "reject")
    listed = api(reader).get(f"{BASE}/changes/").json()
    assert [c["id"] for c in listed["results"]] == [second, first] and listed["count"] == 2
    open_ = api(reader).get(f"{BASE}/changes/?state=open").json()
    assert [c["id"] for c in open_["results"]] == [second]
    assert_error(api(reader).get(f"{BASE}/changes/?state=done"), 400, "invalid", "state")
    assert api(reader).get(f"{BASE}/changes/?page_size=1").json()["next"]


def test_the_list_costs_the_same_queries_at_two_sizes(
    api, agent_md, reader, django_assert_num_queries
):
    client = api(reader)
    propose(api, reader)
    client.get(f"{BASE}/changes/")
    with django_assert_num_queries(3):  # the access row with the token, a count, the page
        assert client.get(f"{BASE}/changes/").json()["count"] == 1
    for n in range(5):
        propose(api, reader, body=f"v{n}\n")
    with django_assert_num_queries(3):
        assert client.get(f"{BASE}/changes/").json()["count"] == 6


def test_another_tenant_sees_nothing(api, agent_md, reader, outsider, other_tenant):
    change_id = propose(api, reader).json()["id"]
    for response in (
        api(outsider).get(f"{BASE}/changes/"),
        api(outsider).get(f"{BASE}/changes/{change_id}"),
        propose(api, outsider),
        review(api, outsider, change_id),
        api(outsider).post(f"{BASE}/changes/{change_id}/merge"),
        api(outsider).post(f"{BASE}/changes/{change_id}/withdraw"),
        api(outsider).post(f"{BASE}/changes/{change_id}/comments", {"body": "x"}, format="json"),
    ):
        assert_error(response, 404, "not_found")
    # Nor is a change request reachable through another project of its tenant.
    assert_error(
        api(reader).get(f"/api/v1/tenants/acme/projects/_vance/changes/{change_id}"),
        404,
        "not_found",
    )
    assert_error(api(reader).get(f"{BASE}/changes/abc"), 404, "not_found")


# Protected documents.


@pytest.fixture
def protected(tenant, admin):
    policy_service.setting_set(
        tenant=tenant,
        project=None,
        key="review.required",
        value='["_vance/**", "agent.md"]',
        user=admin,
    )


def test_a_direct_write_to_a_protected_path_is_409_review_required(
    api, agent_md, protected, writer, admin
):
    for response in (
        api(writer).put(f"{BASE}/documents/agent.md", {"body": "x\n", "version": 1}, format="json"),
        api(writer).patch(
            f"{BASE}/documents/agent.md",
            {"old": "tabs", "new": "spaces", "version": 1},
            format="json",
        ),
        api(writer).delete(f"{BASE}/documents/agent.md", {"version": 1}, format="json"),
        api(writer).post(
            f"{BASE}/documents/", {"path": "docs/agent.md", "body": "x\n"}, format="json"
        ),
        api(admin).put(f"{BASE}/documents/agent.md", {"body": "x\n", "version": 1}, format="json"),
    ):
        body = assert_error(response, 409, "review_required", "path")
        assert body["propose_url"] == f"{BASE}/changes/"
    assert Document.objects.get(pk=agent_md.pk).version == 1
    # Not protected: written as ever.
    other = api(writer).post(
        f"{BASE}/documents/", {"path": "notes.md", "body": "x\n"}, format="json"
    )
    assert other.status_code == 201


def test_an_admin_bypasses_review_with_a_reason_recorded_in_history(
    api, agent_md, protected, writer, admin
):
    refused = api(writer).put(
        f"{BASE}/documents/agent.md",
        {"body": "x\n", "version": 1, "bypass_review": True, "reason": "hotfix"},
        format="json",
    )
    assert_error(refused, 403, "forbidden", "bypass_review")
    no_reason = api(admin).put(
        f"{BASE}/documents/agent.md",
        {"body": "x\n", "version": 1, "bypass_review": True},
        format="json",
    )
    assert_error(no_reason, 400, "invalid", "reason")
    saved = api(admin).put(
        f"{BASE}/documents/agent.md",
        {"body": "x\n", "version": 1, "bypass_review": True, "reason": "hotfix"},
        format="json",
    )
    assert saved.status_code == 200, saved.content
    record = Document.objects.get(pk=agent_md.pk).history.get(version=2)
    assert record.review_bypassed is True and record.history_change_reason == "hotfix"
    history = api(writer).get(f"{BASE}/history/agent.md").json()["results"]
    assert [h["review_bypassed"] for h in history] == [True, False]
    assert_error(
        api(admin).put(
            f"{BASE}/documents/agent.md",
            {"body": "y\n", "version": 2, "bypass_review": "yes"},
            format="json",
        ),
        400,
        "invalid",
        "bypass_review",
    )


def test_a_protected_document_is_changed_through_a_change_request(
    api, agent_md, protected, reader, writer
):
    change_id = propose(api, reader).json()["id"]
    review(api, writer, change_id)
    assert api(writer).post(f"{BASE}/changes/{change_id}/merge").status_code == 200
    assert Document.objects.get(pk=agent_md.pk).version == 2


def test_project_patterns_match_the_bare_path_and_tenant_enforcement_wins(
    api, project, tenant, admin, writer, make_document
):
    make_document(project, "rules/a.md", "a\n")
    policy_service.setting_set(
        tenant=tenant, project=project, key="review.required", value='"rules/*.md"', user=admin
    )
    put = api(writer).put(
        f"{BASE}/documents/rules/a.md", {"body": "b\n", "version": 1}, format="json"
    )
    assert_error(put, 409, "review_required")
    # A tenant value that is not enforced gives way to the project's own.
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["nothing"]', user=admin
    )
    assert_error(
        api(writer).put(
            f"{BASE}/documents/rules/a.md", {"body": "b\n", "version": 1}, format="json"
        ),
        409,
        "review_required",
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("review.required", "agent.md"),
        ("review.required", '{"a": 1}'),
        ("review.required", "[1, 2]"),
        ("review.required", '[""]'),
        ("review.approvals", "0"),
        ("review.approvals", "two"),
        ("review.approvals", "true"),
        ("review.approvals", "1.5"),
    ],
)
def test_review_settings_are_validated(api, tenant, admin, key, value):
    response = api(admin).put(
        f"/api/v1/tenants/acme/settings/{key}", {"value": value}, format="json"
    )
    assert_error(response, 400, "invalid", "value")


def test_review_settings_are_accepted(api, tenant, admin, project):
    for key, value in (("review.required", '["_vance/**", "agent.md"]'), ("review.approvals", "2")):
        assert (
            api(admin)
            .put(f"/api/v1/tenants/acme/settings/{key}", {"value": value}, format="json")
            .status_code
            == 201
        )
        assert (
            api(admin).put(f"{BASE}/settings/{key}", {"value": value}, format="json").status_code
            == 201
        )


def test_bypass_review_on_create_delete_and_revert_is_recorded(
    api, agent_md, protected, admin, writer
):
    created = api(admin).post(
        f"{BASE}/documents/",
        {"path": "docs/agent.md", "body": "x\n", "bypass_review": True, "reason": "seed"},
        format="json",
    )
    assert created.status_code == 201, created.content
    edited = api(admin).put(
        f"{BASE}/documents/agent.md",
        {"body": "y\n", "version": 1, "bypass_review": True, "reason": "fix"},
        format="json",
    )
    assert edited.status_code == 200
    reverted = api(admin).post(
        f"{BASE}/revert/agent.md",
        {"version": 1, "bypass_review": True, "reason": "undo"},
        format="json",
    )
    assert reverted.status_code == 200, reverted.content
    deleted = api(admin).delete(
        f"{BASE}/documents/agent.md",
        {"version": 3, "bypass_review": True, "reason": "gone"},
        format="json",
    )
    assert deleted.status_code == 200, deleted.content
    history = Document.objects.get(pk=agent_md.pk).history.order_by("version")
    assert [h.review_bypassed for h in history] == [False, True, True, True]
    assert Document.objects.get(path="docs/agent.md").history.get().review_bypassed is True


def test_an_admins_write_scoped_token_may_not_bypass_review(client, agent_md, protected, admin):
    key = token_service.token_create(user=admin, name="ci", scopes=["write"]).key
    response = client.put(
        f"{BASE}/documents/agent.md",
        {"body": "x\n", "version": 1, "bypass_review": True, "reason": "r"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert_error(response, 403, "forbidden", "bypass_review")
    assert Document.objects.get(pk=agent_md.pk).version == 1


def _long_text(tag: str, lines: int = 3000) -> str:
    return "".join(
        f"- {tag} rule {n}: keep every change small and named plainly.\n" for n in range(lines)
    )


@pytest.fixture
def long_change(api, project, writer, reader, make_document):
    """A proposal that rewrites every line of a long document, written against v1 while
    v2 rewrote them too: the largest diffs and conflicts a change request shows."""
    document = make_document(project, "long.md", _long_text("old"), user=writer)
    document_service.document_write(
        document=document, body=_long_text("current"), base_version=1, user=writer
    )
    response = propose(api, reader, path="long.md", body=_long_text("proposed"))
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_a_long_change_requests_diffs_and_conflicts_are_bounded_with_a_link_to_the_whole(
    api, reader, long_change
):
    response = api(reader).get(f"{BASE}/changes/{long_change}")
    assert response.status_code == 200
    assert len(response.content) < 1_000_000
    body = response.json()
    assert body["body"] == _long_text("proposed")  # the proposal stays whole
    assert body["diff_truncated"] is True
    assert body["conflicts_truncated"] is True
    conflict_bytes = sum(
        len(line.encode()) + 1
        for conflict in body["conflicts"]
        for side in ("base", "theirs", "yours")
        for line in conflict[side]["lines"]
    )
    assert 0 < conflict_bytes <= 48 * 1024
    for name, against, version in (
        ("diff_against_base", "base", 1),
        ("diff_against_current", "current", 2),
    ):
        diff = body[name]
        assert diff["truncated"] is True and diff["from_version"] == version
        assert diff["shown_changed_lines"] <= 1000 < diff["added"] + diff["removed"]
        assert diff["whole_diff_url"] == f"{BASE}/changes/{long_change}/diff?against={against}"
        whole = api(reader).get(diff["whole_diff_url"])
        assert whole.status_code == 200
        assert whole["Content-Type"].startswith("text/plain")
        text = whole.content.decode()
        assert text.startswith(f"--- long.md@{version}\n")
        assert "+- proposed rule 2999:" in text
        assert text.count("\n+- proposed rule") == 3000


def test_a_short_change_request_is_whole_and_says_so(api, agent_md, reader):
    change_id = propose(api, reader).json()["id"]
    body = api(reader).get(f"{BASE}/changes/{change_id}").json()
    assert body["diff_truncated"] is False and body["conflicts_truncated"] is False
    assert body["diff_against_base"]["truncated"] is False
    whole = api(reader).get(body["diff_against_base"]["whole_diff_url"]).content.decode()
    assert whole == body["diff_against_base"]["diff"]


def test_the_whole_diff_refuses_another_against_and_outsiders(api, agent_md, reader, outsider):
    change_id = propose(api, reader).json()["id"]
    bad = api(reader).get(f"{BASE}/changes/{change_id}/diff", {"against": "theirs"})
    assert_error(bad, 400, "invalid", "against")
    assert bad["Content-Type"].startswith("application/json")
    assert api(outsider).get(f"{BASE}/changes/{change_id}/diff").status_code == 404
    assert api(reader).get(f"{BASE}/changes/999999/diff").status_code == 404


def test_the_diff_of_a_deleted_documents_change_against_current_is_404(
    api, agent_md, reader, writer
):
    change_id = propose(api, reader).json()["id"]
    document_service.document_delete(document=agent_md, base_version=1, user=writer)
    answer = api(reader).get(f"{BASE}/changes/{change_id}/diff", {"against": "current"})
    assert_error(answer, 404, "not_found", "against")
    assert api(reader).get(f"{BASE}/changes/{change_id}/diff").status_code == 200


@pytest.mark.parametrize("lines", [200, 3000])
def test_a_change_request_reads_the_same_queries_however_long(
    api, project, writer, reader, make_document, lines, django_assert_max_num_queries
):
    document = make_document(project, "long.md", _long_text("old", lines), user=writer)
    change_id = propose(api, reader, path="long.md", body=_long_text("new", lines)).json()["id"]
    assert document.version == 1
    client = api(reader)
    with django_assert_max_num_queries(10):
        assert client.get(f"{BASE}/changes/{change_id}").status_code == 200
    with django_assert_max_num_queries(6):
        assert client.get(f"{BASE}/changes/{change_id}/diff").status_code == 200

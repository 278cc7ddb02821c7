"""Change request pages: the inbox, proposing, the change page and its buttons, and
the protected document's edit and history pages."""

from __future__ import annotations

import pytest

from agentdocs.models import ChangeRequest, Document
from agentdocs.services import changes as change_service
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service

pytestmark = pytest.mark.django_db

TEXT = "# Web rules\n\n- Use tabs.\n- Ship small.\n"


@pytest.fixture
def agent_md(project, writer, make_document):
    return make_document(project, "agent.md", TEXT, user=writer)


@pytest.fixture
def change(project, agent_md, reader):
    return change_service.change_propose(
        project=project,
        path="agent.md",
        body=TEXT.replace("Use tabs", "Use spaces"),
        base_version=1,
        reason="spaces read better",
        user=reader,
    )


def url(change, action=""):
    return f"/t/acme/web/changes/{change.pk}/" + (f"{action}/" if action else "")


@pytest.fixture
def protected(tenant, admin):
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["agent.md"]', user=admin
    )


def test_the_inbox_lists_waiting_changes_and_the_navigation_counts_them(browse, change, reader):
    page = browse(reader).get("/t/acme/-/changes/")
    assert page.status_code == 200
    text = page.content.decode()
    assert f"#{change.pk}" in text and "spaces read better" in text
    assert 'waiting for review or merge <span class="badge">1</span>' in text
    assert 'merged <span class="badge">0</span>' in text
    assert (
        "No change requests here."
        in browse(reader).get("/t/acme/-/changes/?state=merged").content.decode()
    )
    tenant_page = browse(reader).get("/t/acme/").content.decode()
    assert 'Changes <span class="badge" title="waiting for review or merge">1</span>' in tenant_page
    project_page = browse(reader).get("/t/acme/web/").content.decode()
    assert (
        'Changes <span class="badge" title="waiting for review or merge">1</span>' in project_page
    )
    assert browse(reader).get("/t/acme/-/changes/?state=nope").status_code == 400


def test_a_reader_proposes_from_the_document_page(browse, agent_md, reader):
    client = browse(reader)
    document_page = client.get("/t/acme/web/doc/agent.md").content.decode()
    assert "/t/acme/web/changes/new/?path=agent.md" in document_page
    form = client.get("/t/acme/web/changes/new/?path=agent.md")
    assert form.status_code == 200 and "Use tabs" in form.content.decode()
    response = client.post(
        "/t/acme/web/changes/new/",
        {"path": "agent.md", "base_version": "1", "body": "# New\n", "reason": "shorter"},
    )
    change = ChangeRequest.objects.get()
    assert response.status_code == 302 and response["Location"] == url(change)
    assert change.proposer.username == "carol" and change.body == "# New\n"
    refused = client.post(
        "/t/acme/web/changes/new/",
        {"path": "agent.md", "base_version": "1", "body": TEXT, "reason": ""},
    )
    assert refused.status_code == 400 and "proposes no change" in refused.content.decode()


def test_the_change_page_offers_what_the_rights_allow(browse, change, reader, writer):
    as_reader = browse(reader).get(url(change)).content.decode()
    assert "spaces" in as_reader and "Withdraw" in as_reader
    assert ">Approve<" not in as_reader and ">Merge<" not in as_reader
    assert "someone else reviews it" in as_reader
    as_writer = browse(writer).get(url(change)).content.decode()
    assert ">Approve<" in as_writer and ">Reject<" in as_writer
    assert ">Merge<" not in as_writer and "Withdraw" not in as_writer
    assert "Merges cleanly onto the current version" in as_writer


def test_approve_then_merge_through_the_pages(browse, change, reader, writer, admin):
    approved = browse(writer).post(url(change, "review"), {"decision": "approve", "comment": "ok"})
    assert approved.status_code == 302
    page = browse(admin).get(url(change)).content.decode()
    assert ">Merge<" in page and "1 of 1 approval" in page
    merged = browse(admin).post(url(change, "merge"))
    assert merged.status_code == 302
    document = Document.objects.get(path="agent.md")
    assert document.version == 2 and "Use spaces" in document.body
    history = browse(reader).get("/t/acme/web/history/agent.md").content.decode()
    assert (
        f'href="/t/acme/web/changes/{change.pk}/"' in history and f"change #{change.pk}" in history
    )
    after = browse(reader).get(url(change)).content.decode()
    assert "merged by alice" in after and "Withdraw" not in after


def test_a_reader_may_not_review_or_merge_and_nobody_approves_their_own(
    browse, change, project, reader, writer
):
    assert browse(reader).post(url(change, "review"), {"decision": "approve"}).status_code == 403
    assert browse(reader).post(url(change, "merge")).status_code == 403
    own = change_service.change_propose(
        project=project, path="agent.md", body="x\n", base_version=1, reason="", user=writer
    )
    refused = browse(writer).post(url(own, "review"), {"decision": "approve"})
    assert refused.status_code == 409 and "own_change" in refused.content.decode()
    assert ChangeRequest.objects.get(pk=own.pk).state == "open"


def test_a_conflicting_merge_shows_the_conflicts_with_409(browse, change, agent_md, writer, admin):
    document_service.document_write(
        document=agent_md,
        body=TEXT.replace("Use tabs", "Use tabs only"),
        base_version=1,
        user=admin,
    )
    browse(writer).post(url(change, "review"), {"decision": "approve"})
    response = browse(admin).post(url(change, "merge"))
    text = response.content.decode()
    assert response.status_code == 409 and "merge_conflict" in text
    assert "their change" in text and "this change" in text and "Use tabs only" in text
    assert ChangeRequest.objects.get(pk=change.pk).state == "approved"


def test_withdraw_and_comment(browse, change, reader, writer):
    assert browse(writer).post(url(change, "comment"), {"body": "why?"}).status_code == 302
    assert "why?" in browse(reader).get(url(change)).content.decode()
    assert browse(writer).post(url(change, "withdraw")).status_code == 403
    assert browse(reader).post(url(change, "withdraw")).status_code == 302
    assert ChangeRequest.objects.get(pk=change.pk).state == "withdrawn"
    closed = browse(writer).post(url(change, "comment"), {"body": "late"})
    assert closed.status_code == 409


def test_another_tenant_sees_nothing(browse, change, outsider, other_tenant):
    client = browse(outsider)
    for path in ("/t/acme/-/changes/", url(change), "/t/acme/web/changes/new/?path=agent.md"):
        assert client.get(path).status_code == 404
    for action in ("review", "merge", "withdraw", "comment"):
        assert (
            client.post(url(change, action), {"decision": "approve", "body": "x"}).status_code
            == 404
        )


def test_a_protected_document_is_proposed_from_its_edit_page(
    browse, agent_md, protected, writer, admin
):
    page = browse(writer).get("/t/acme/web/edit/agent.md").content.decode()
    assert ">Propose a change</button>" in page and "Save <kbd>" not in page
    assert "Save without review" not in page
    assert "Save without review" in browse(admin).get("/t/acme/web/edit/agent.md").content.decode()
    refused = browse(writer).post(
        "/t/acme/web/edit/agent.md", {"body": "x\n", "base_version": "1", "reason": ""}
    )
    assert refused.status_code == 409 and "propose a change" in refused.content.decode()
    proposed = browse(writer).post(
        "/t/acme/web/changes/new/",
        {"path": "agent.md", "body": "x\n", "base_version": "1", "reason": "r"},
    )
    assert proposed.status_code == 302
    assert Document.objects.get(pk=agent_md.pk).version == 1


def test_an_admin_saves_a_protected_document_without_review_with_a_reason(
    browse, agent_md, protected, admin, writer
):
    no_reason = browse(admin).post(
        "/t/acme/web/edit/agent.md", {"body": "x\n", "base_version": "1", "bypass_review": "on"}
    )
    assert no_reason.status_code == 400
    saved = browse(admin).post(
        "/t/acme/web/edit/agent.md",
        {"body": "x\n", "base_version": "1", "bypass_review": "on", "reason": "outage"},
    )
    assert saved.status_code == 302
    history = browse(writer).get("/t/acme/web/history/agent.md").content.decode()
    assert "review bypassed" in history and "outage" in history


def test_the_change_pages_run_the_same_queries_at_two_sizes(
    browse, change, project, reader, writer, django_assert_num_queries
):
    client = browse(writer)
    client.get(url(change))
    client.post(url(change, "comment"), {"body": "first"})
    # Session, user, access, change, document, base version, policy, reviews (and so the
    # approvals; their reviewers' roles once there are some), comments, evals.
    with django_assert_num_queries(10):
        client.get(url(change))
    inbox_client = browse(reader)
    inbox_client.get("/t/acme/-/changes/")
    with django_assert_num_queries(6):  # session, user, access, counts, count, page
        inbox_client.get("/t/acme/-/changes/")
    for n in range(5):
        client.post(url(change, "comment"), {"body": f"more {n}"})
        change_service.change_propose(
            project=project, path="agent.md", body=f"v{n}\n", base_version=1, reason="", user=reader
        )
    with django_assert_num_queries(10):
        client.get(url(change))
    with django_assert_num_queries(6):  # session, user, access, counts, count, page
        inbox_client.get("/t/acme/-/changes/")


def _long_text(tag: str, lines: int = 3000) -> str:
    return "".join(
        f"- {tag} rule {n}: keep every change small and named plainly.\n" for n in range(lines)
    )


def test_a_long_change_page_folds_and_caps_its_diffs_with_a_link_to_the_whole(
    browse, project, writer, reader, make_document
):
    document = make_document(project, "long.md", _long_text("old"), user=writer)
    document_service.document_write(
        document=document, body=_long_text("current"), base_version=1, user=writer
    )
    change = change_service.change_propose(
        project=project,
        path="long.md",
        body=_long_text("proposed"),
        base_version=1,
        reason="",
        user=reader,
    )
    client = browse(reader)
    response = client.get(url(change))
    assert response.status_code == 200
    assert len(response.content) < 1_000_000
    html = response.content.decode()
    assert html.count("diff-truncated") == 2
    assert f'href="{url(change)}diff/?against=base"' in html
    assert f'href="{url(change)}diff/?against=current"' in html
    assert "data-conflicts-truncated" in html
    assert "proposed rule 2999" not in html
    whole = client.get(f"{url(change)}diff/", {"against": "base"})
    assert whole.status_code == 200
    assert "attachment" in whole["Content-Disposition"]
    assert "+- proposed rule 2999:" in whole.content.decode()
    assert client.get(f"{url(change)}diff/", {"against": "nope"}).status_code == 400


def test_an_outsider_gets_404_for_a_change_requests_whole_diff(browse, change, outsider):
    assert browse(outsider).get(f"{url(change)}diff/").status_code == 404


def test_the_change_pages_forms_post_to_the_page_itself(browse, change, reader, writer):
    page = browse(writer).get(url(change)).content.decode()
    assert page.count(f'action="{url(change)}"') == 2  # review, comment (writer)
    for action in ("review", "comment"):
        assert f'name="action" value="{action}"' in page
    for action in ("merge", "withdraw"):
        assert f'/{action}/"' not in page
    empty = browse(writer).post(url(change), {"action": "comment", "body": ""})
    assert empty.status_code == 400 and 'id="id_body_error"' in empty.content.decode()
    said = browse(writer).post(url(change), {"action": "comment", "body": "why?"})
    assert said.status_code == 302 and said["Location"] == url(change)
    approved = browse(writer).post(url(change), {"action": "review", "decision": "approve"})
    assert approved.status_code == 302
    assert browse(reader).post(url(change), {"action": "withdraw"}).status_code == 302
    assert ChangeRequest.objects.get(pk=change.pk).state == "withdrawn"
    late = browse(writer).post(url(change), {"action": "comment", "body": "late"})
    assert late.status_code == 409


def test_an_unknown_action_on_the_change_page_is_a_400_naming_it(browse, change, writer):
    response = browse(writer).post(url(change), {"action": "explode"})
    assert response.status_code == 400
    assert "<code>action</code> must be one of" in response.content.decode()
    assert browse(writer).post(url(change)).status_code == 400


def test_an_outsider_posting_to_the_change_page_gets_404(browse, change, outsider, other_tenant):
    assert browse(outsider).post(url(change), {"action": "comment", "body": "x"}).status_code == 404

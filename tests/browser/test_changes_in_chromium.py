"""Change review in Chromium: a reader proposes a change to a protected agent.md, a
writer changes another line meanwhile, an admin approves and merges: both edits stay."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from agentdocs.models import ChangeRequest, Document
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service

TEXT = "# Web rules\n\n- Use tabs.\n- Test first.\n- Ship small.\n"


def test_propose_then_approve_by_another_user_then_merge_keeps_both_edits(
    signed_in, screenshot, tenant, project, make_document, admin, writer, reader
):
    document = make_document(project, "agent.md", TEXT, user=writer)
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["agent.md"]', user=admin
    )

    # Carol (a reader) proposes from the document page.
    carol = signed_in(reader)
    carol.goto("/t/acme/web/doc/agent.md")
    carol.get_by_role("link", name="Propose a change").click()
    carol.get_by_label("Proposed text of agent.md").fill(TEXT.replace("Use tabs", "Use spaces"))
    carol.get_by_label("Reason for this change").fill("Spaces render the same everywhere")
    carol.get_by_role("button", name="Propose a change").click()
    expect(
        carol.get_by_role("heading", name=re.compile(r"^Change #\d+ to agent\.md"))
    ).to_be_visible()
    change = ChangeRequest.objects.get()
    expect(carol.locator("[data-change-state]")).to_have_text("open")
    expect(carol.get_by_role("button", name="Approve")).to_have_count(0)

    # Meanwhile Alice (an admin) saves another line directly, bypassing review.
    document_service.document_write(
        document=document,
        body=TEXT.replace("Ship small.", "Ship small and often."),
        base_version=1,
        user=admin,
        reason="cadence",
        bypass_review=True,
    )

    # Bob (a writer) approves from the tenant's Changes inbox.
    bob = signed_in(writer)
    bob.goto("/t/acme/")
    bob.get_by_role("link", name=re.compile(r"^Changes")).click()
    bob.get_by_role("link", name=f"#{change.pk}").click()
    expect(bob.get_by_text("Merges cleanly onto the current version")).to_be_visible()
    bob.get_by_label("Review comment (optional)").fill("Agreed")
    bob.get_by_role("button", name="Approve").click()
    expect(bob.get_by_text(f"Approved change #{change.pk}.")).to_be_visible()
    expect(bob.locator("[data-change-state]")).to_have_text("approved")
    screenshot(bob, "change")

    # Bob merges.
    bob.get_by_role("button", name="Merge").click()
    expect(bob.get_by_text(f"Merged change #{change.pk}")).to_be_visible()
    expect(bob.locator("[data-change-state]")).to_have_text("merged")

    merged = Document.objects.get(pk=document.pk)
    assert merged.version == 3
    assert "- Use spaces." in merged.body and "- Ship small and often." in merged.body
    record = merged.history.get(version=3)
    assert record.history_user.username == "carol" and record.change_request_id == change.pk

    # The history row links back to the change request.
    bob.goto("/t/acme/web/history/agent.md")
    bob.get_by_role("link", name=f"change #{change.pk}").click()
    expect(bob.get_by_role("heading", name=re.compile(rf"^Change #{change.pk}"))).to_be_visible()

"""Two people edit agent.md at once, in two Chromium profiles: edits of different lines
are merged and both kept; edits of the same line end in the three-way page, where a
choice that drops the other's change needs an explicit confirmation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from agentdocs.models import Document

AGENT_MD = """\
# Web agent notes

## Conventions
- Pages live in `src/pages/`, one folder per section.
- Images go to `src/assets/` as WebP, at most 200 KB each.

## Tone
- Customer-facing text: second person, present tense.

## Commands
- `npm run check` must pass before you hand work back.
"""


@pytest.fixture
def agent_md(project, writer, make_document) -> Document:
    return make_document(project, "agent.md", AGENT_MD, user=writer, reason="First draft")


def _current(project) -> Document:
    return Document.objects.get(project=project, path="agent.md")


def _open_editors(signed_in, writer, admin):
    bob, alice = signed_in(writer), signed_in(admin)
    for page in (bob, alice):
        page.goto("/t/acme/web/edit/agent.md")
    return bob, alice


def _replace(page, old: str, new: str) -> None:
    editor = page.get_by_label("Markdown")
    text = editor.input_value()
    assert old in text
    editor.fill(text.replace(old, new))


def test_two_people_edit_different_lines_and_both_edits_are_kept(
    signed_in, screenshot, writer, admin, agent_md, project
):
    bob, alice = _open_editors(signed_in, writer, admin)

    _replace(bob, "at most 200 KB", "at most 150 KB")
    bob.get_by_label("Reason for this change").fill("Smaller images")
    bob.get_by_role("button", name="Save").click()
    bob.wait_for_url("**/doc/agent.md")

    _replace(alice, "must pass", "and `npm test` must pass")
    alice.get_by_label("Reason for this change").fill("Tests too")
    alice.get_by_role("button", name="Save").click()

    expect(alice.get_by_text("Merged with v2 by bob (just now)")).to_be_visible()
    expect(alice.get_by_text("From bob's change (version 2)")).to_be_visible()
    expect(alice.get_by_text("From your change")).to_be_visible()
    expect(alice.locator(".merge-theirs", has_text="150 KB")).to_be_visible()
    expect(alice.locator(".merge-yours", has_text="npm test")).to_be_visible()
    screenshot(alice, "merge-clean")

    document = _current(project)
    assert document.version == 3 and document.merged_with == 2
    assert "at most 150 KB" in document.body and "and `npm test` must pass" in document.body
    assert document.body == AGENT_MD.replace("200 KB", "150 KB").replace(
        "must pass", "and `npm test` must pass"
    )

    alice.get_by_role("link", name="History").first.click()
    expect(alice.get_by_text("merged with v2")).to_be_visible()


def test_the_same_line_edited_twice_ends_in_the_three_way_page(
    signed_in, screenshot, writer, admin, agent_md, project
):
    bob, alice = _open_editors(signed_in, writer, admin)

    _replace(bob, "at most 200 KB", "at most 150 KB")
    bob.get_by_role("button", name="Save").click()
    bob.wait_for_url("**/doc/agent.md")

    _replace(alice, "at most 200 KB", "at most 300 KB")
    _replace(alice, "second person", "second person, plain English")
    alice.get_by_label("Reason for this change").fill("Bigger hero images")
    alice.get_by_role("button", name="Save").click()

    expect(alice.get_by_text("bob changed the same lines")).to_be_visible()
    conflict = alice.get_by_role("group", name="Conflict 1 of 1")
    expect(conflict.get_by_role("heading", name="base", exact=True)).to_be_visible()
    expect(conflict.get_by_role("heading", name="their change")).to_be_visible()
    expect(conflict.get_by_role("heading", name="your change")).to_be_visible()
    expect(conflict.get_by_text("bob, version 2")).to_be_visible()
    expect(conflict.locator(".merge-side-base", has_text="200 KB")).to_be_visible()
    expect(conflict.locator(".merge-side-theirs", has_text="150 KB")).to_be_visible()
    expect(conflict.locator(".merge-side-yours", has_text="300 KB")).to_be_visible()
    # Alice's other edit merged cleanly and is marked as hers.
    expect(alice.locator(".merge-yours", has_text="plain English")).to_be_visible()
    assert alice.get_by_label("Reason for this change").input_value() == "Bigger hero images"
    screenshot(alice, "merge-three-way")
    assert _current(project).version == 2

    # Keeping her own line drops Bob's: the page asks before it saves that.
    conflict.get_by_label("Keep your change").check()
    alice.get_by_role("button", name="Save merged text").click()
    expect(alice.get_by_text("drops bob's change")).to_be_visible()
    expect(
        alice.get_by_role("group", name="Conflict 1 of 1").get_by_label("Keep your change")
    ).to_be_checked()
    assert _current(project).version == 2

    alice.get_by_label("I am discarding bob's change").check()
    alice.get_by_role("button", name="Save merged text").click()
    alice.wait_for_url("**/doc/agent.md")
    document = _current(project)
    assert document.version == 3
    assert document.body == AGENT_MD.replace("200 KB", "300 KB").replace(
        "second person", "second person, plain English"
    )
    latest = document.history.order_by("-history_id").first()
    assert latest.history_user.username == "alice"
    assert latest.history_change_reason == "Bigger hero images"


def test_keeping_both_sides_of_a_conflict_needs_no_confirmation(
    signed_in, writer, admin, agent_md, project
):
    bob, alice = _open_editors(signed_in, writer, admin)
    _replace(bob, "at most 200 KB", "at most 150 KB")
    bob.get_by_role("button", name="Save").click()
    bob.wait_for_url("**/doc/agent.md")
    _replace(alice, "at most 200 KB", "at most 300 KB")
    alice.get_by_role("button", name="Save").click()

    conflict = alice.get_by_role("group", name="Conflict 1 of 1")
    conflict.get_by_label("Write it myself:").check()
    conflict.get_by_label("Your own text for conflict 1").fill(
        "- Images go to `src/assets/` as WebP, at most 300 KB each."
    )
    alice.get_by_role("button", name="Save merged text").click()
    expect(alice.get_by_text("drops bob's change")).to_be_visible()  # his 150 KB is gone

    conflict = alice.get_by_role("group", name="Conflict 1 of 1")
    conflict.get_by_label("Keep both: theirs, then yours").check()
    alice.get_by_role("button", name="Save merged text").click()
    alice.wait_for_url("**/doc/agent.md")
    body = _current(project).body
    assert "at most 150 KB each.\n- Images go to `src/assets/` as WebP, at most 300 KB" in body


def test_a_hand_merge_that_keeps_their_change_is_saved_as_a_merge_without_the_box(
    signed_in, writer, admin, agent_md, project
):
    bob, alice = _open_editors(signed_in, writer, admin)
    _replace(bob, "at most 200 KB", "at most 150 KB")
    bob.get_by_role("button", name="Save").click()
    bob.wait_for_url("**/doc/agent.md")
    _replace(alice, "at most 200 KB", "at most 300 KB")
    alice.get_by_label("Reason for this change").fill("Hero images")
    alice.get_by_role("button", name="Save").click()

    conflict = alice.get_by_role("group", name="Conflict 1 of 1")
    conflict.get_by_label("Write it myself:").check()
    own = "- Images go to `src/assets/` as WebP, at most 150 KB (300 KB for hero images)."
    conflict.get_by_label("Your own text for conflict 1").fill(own)
    # Bob's 150 KB is still there: no "I am discarding bob's change" is asked for.
    alice.get_by_role("button", name="Save merged text").click()
    alice.wait_for_url("**/doc/agent.md")
    expect(alice.get_by_text("Saved agent.md as version 3 with your choices.")).to_be_visible()

    document = _current(project)
    assert document.version == 3 and document.merged_with == 2
    assert document.body == AGENT_MD.replace(
        "- Images go to `src/assets/` as WebP, at most 200 KB each.", own
    )
    latest = document.history.order_by("-history_id").first()
    assert latest.history_user.username == "alice" and latest.history_change_reason == "Hero images"

    alice.get_by_role("link", name="History").first.click()
    expect(alice.get_by_text("merged with v2")).to_be_visible()

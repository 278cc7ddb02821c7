"""Skills in Chromium (issue 37): a writer finds a skill from the project page, reads
its files, edits `SKILL.md` with the live preview and size meter, sees a refusal of
the specification beside the editor, saves, and compares the two versions."""

from __future__ import annotations

from playwright.sync_api import expect

from agentdocs.models import Skill
from agentdocs.services import policy as policy_service
from agentdocs.services import skills as skill_service
from tests.skill_bundles import skill_md


def test_a_writer_edits_a_skill_and_compares_its_versions(signed_in, screenshot, project, writer):
    skill_service.skill_create(
        project=project,
        name="handoff",
        files={"SKILL.md": skill_md("handoff"), "scripts/run.sh": "#!/bin/sh\necho hand\n"},
        user=writer,
    )
    bob = signed_in(writer)
    bob.goto("/t/acme/web/")
    bob.get_by_role("link", name="Skills", exact=True).click()
    bob.get_by_role("link", name="handoff").click()
    expect(bob.get_by_role("heading", name="handoff")).to_be_visible()
    bob.locator('[data-skill-file="scripts/run.sh"] summary').click()
    expect(bob.get_by_text("echo hand")).to_be_visible()

    bob.get_by_role("link", name="Edit SKILL.md").click()
    editor = bob.get_by_label("Markdown")
    # A name that breaks the specification: refused beside the editor, nothing saved.
    editor.fill("---\nname: Hand Off\ndescription: x\n---\n# Steps\n")
    bob.get_by_role("button", name="Save").click()
    expect(bob.get_by_text("lowercase letters (a-z), digits and hyphens only")).to_be_visible()
    assert Skill.objects.get(name="handoff").version == 1

    editor = bob.get_by_label("Markdown")
    editor.fill(skill_md("handoff", "Hand over, carefully.", body="# Steps\n\n1. **Write** it.\n"))
    expect(bob.locator("#preview strong")).to_have_text("Write")  # the live preview
    expect(bob.locator("#size-meter")).to_contain_text("lines")
    bob.get_by_label("Reason for this change").fill("clearer")
    bob.get_by_role("button", name="Save").click()
    expect(bob.get_by_text("Saved handoff as version 2.")).to_be_visible()
    assert Skill.objects.get(name="handoff").description == "Hand over, carefully."
    screenshot(bob, "skill")

    bob.get_by_role("button", name="Compare selected").click()
    expect(bob.get_by_role("heading", name="Version 1 → version 2")).to_be_visible()
    expect(bob.locator('[data-skill-diff="SKILL.md"]')).to_contain_text("carefully")
    expect(bob.locator('[data-skill-diff="scripts/run.sh"]')).to_have_count(0)


def test_a_long_file_scrolls_in_its_box_on_a_phone(signed_in, project, writer):
    skill_service.skill_create(
        project=project,
        name="handoff",
        files={"SKILL.md": skill_md("handoff"), "scripts/run.sh": "echo " + "x" * 400 + "\n"},
        user=writer,
    )
    page = signed_in(writer, viewport={"width": 390, "height": 844})
    page.goto("/t/acme/web/skills/handoff/")
    page.locator('[data-skill-file="scripts/run.sh"] summary').click()
    expect(page.locator('[data-skill-file="scripts/run.sh"] pre')).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


def test_under_review_a_skill_save_is_a_change_request_reviewed_file_by_file(
    signed_in, project, tenant, writer, admin
):
    """`review.required` on skills, as the document editor: bob's "Propose a change"
    opens a change request whose page shows each changed file's diff; alice approves and
    merges it as the skill's next version, and may "Save without review" with a reason."""
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["skills/"]', user=admin
    )
    skill_service.skill_create(
        project=project,
        name="handoff",
        files={"SKILL.md": skill_md("handoff"), "scripts/run.sh": "#!/bin/sh\necho hand\n"},
        user=writer,
    )
    bob = signed_in(writer)
    bob.goto("/t/acme/web/skills/handoff/edit/")
    bob.get_by_label("Markdown").fill(
        skill_md("handoff", "Hand over, with care.", body="# Steps\n\n1. Write it.\n")
    )
    bob.get_by_label("Reason for this change").fill("with care")
    expect(bob.get_by_role("button", name="Save without review")).to_have_count(0)
    bob.get_by_role("button", name="Propose a change").click()
    expect(bob.get_by_text("Proposed change #")).to_be_visible()
    expect(bob.locator("[data-change-skill]")).to_have_text("handoff")
    expect(bob.locator('[data-skill-diff="SKILL.md"]')).to_contain_text("with care")
    expect(bob.locator('[data-skill-diff="scripts/run.sh"]')).to_have_count(0)
    assert Skill.objects.get(name="handoff").version == 1

    alice = signed_in(admin)
    alice.goto(bob.url)
    alice.get_by_role("button", name="Approve").click()
    alice.get_by_role("button", name="Merge").click()
    expect(alice.get_by_text("the skill handoff is now version 2")).to_be_visible()
    skill = Skill.objects.get(name="handoff")
    assert skill.version == 2 and skill.description == "Hand over, with care."

    alice.goto("/t/acme/web/skills/handoff/edit/")
    alice.get_by_label("Markdown").fill(skill_md("handoff", "Hand over, now."))
    alice.get_by_role("button", name="Save without review").click()
    expect(alice.get_by_text("Bypassing review needs a reason")).to_be_visible()
    assert Skill.objects.get(name="handoff").version == 2
    alice.get_by_label("Reason for this change").fill("urgent")
    alice.get_by_role("button", name="Save without review").click()
    expect(alice.get_by_text("Saved handoff as version 3.")).to_be_visible()

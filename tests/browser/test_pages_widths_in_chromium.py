"""Every main page at a phone's width (390 px) and a desktop's (1366 px): nothing pushes
the page wider than the window; tables stack, the diff has one column, line numbers
keep their digits together. And the page behaviours that live in app.js: the lock's
time in the reader's own clock, the recipe form's "Add a profile", the Memory Block
preview's profiles and client document."""

from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

from agentdocs.models import Recipe
from agentdocs.selectors.binding_memory_block import MemoryBlockRequest
from agentdocs.services import bindings as binding_service
from agentdocs.services import document_locks
from agentdocs.services import documents as svc
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.services import skills as skill_service
from tests.browser.conftest import SCREENSHOTS
from tests.skill_bundles import skill_md

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}

LONG_REASON = (
    "Rewrite the tone section after the customer interviews, with the examples the "
    "support team collected over the quarter"
)

PAGES = [
    "/",
    "/t/acme/",
    "/t/acme/web/",
    "/t/acme/web/doc/agent.md",
    "/t/acme/web/edit/agent.md",
    "/t/acme/web/history/agent.md",
    "/t/acme/web/diff/agent.md?from=1&to=12",
    "/t/acme/web/revert/agent.md?version=1",
    "/t/acme/web/new/?path=notes.md",
    "/t/acme/web/memory-block/?recipe=coder&profile=cli",
    "/t/acme/web/export/",
    "/t/acme/web/explain/?tool=claude-code&path=src/api/handlers.py",
    "/t/acme/web/skills/",
    "/t/acme/web/skills/handoff/",
    "/t/acme/web/skills/handoff/edit/",
    "/t/acme/web/skills/handoff/diff/?from=1&to=2",
    "/t/acme/web/bindings/",
    "/t/acme/web/bindings/{first}/",
    "/t/acme/web/bindings/compare/?a={first}&b={second}",
    "/t/acme/web/bindings/{first}/reconstruct/",
    "/t/acme/web/settings/",
    "/t/acme/-/settings/",
    "/t/acme/-/recipes/",
    "/t/acme/-/recipes/coder/",
    "/t/acme/-/recipes/new/",
    "/tokens/",
]


@pytest.fixture
def busy(admin, writer, tenant, project, vance, make_document):
    """A project with a long history (long reasons, sizes, a revert), binding records,
    recipes with profiles and settings: what makes tables wide."""
    body = "# Web agent notes\n\n" + "".join(f"- Rule number {n}.\n" for n in range(1, 40))
    document = make_document(project, "agent.md", body, user=writer, reason="First draft")
    for version in range(2, 12):
        body = body.replace(f"Rule number {version}.", f"Rule number {version}, reworded.")
        document = svc.document_write(
            document=document,
            body=body,
            base_version=document.version,
            user=admin if version % 2 else writer,
            reason=LONG_REASON,
        ).document
    svc.document_revert(document=document, version=3, user=admin, reason="Back to v3")
    make_document(vance, "agent.md", "# Acme house rules\n", user=admin)
    make_document(vance, "baseline.md", "# Baseline\n\nNo deploys.\n", user=admin)
    make_document(project, ".AGENTS/overview.md", "# Overview\n", user=writer)
    provider_service.provider_set(
        tenant=tenant, name="acme/baseline", project_slug="_vance", path="baseline.md", user=admin
    )
    manifest = {
        "context": [{"name": "acme/baseline", "standing": "rule"}],
        "local": ["agent.md", ".AGENTS/overview.md"],
        "exceptions": [
            {"target": "acme/baseline#deploy", "effect": "narrow", "reason": "Docs only"}
        ],
    }
    make_document(project, "context.json", json.dumps(manifest), user=admin)
    policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={},
        profiles={"cli": {"useClientAgentDoc": True}, "ide": {}},
        user=admin,
    )
    policy_service.recipe_create(
        tenant=tenant, name="summarizer", params={"agentDocument": ""}, profiles={}, user=admin
    )
    policy_service.setting_set(
        tenant=tenant,
        project=None,
        key="memory.compaction.thresholdTokens",
        value="60000",
        enforced=True,
        user=admin,
    )
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.language", value="en-GB", user=admin
    )
    handoff = skill_service.skill_create(
        project=project,
        name="handoff",
        files={
            "SKILL.md": skill_md("handoff", LONG_REASON),
            "scripts/run.sh": "#!/bin/sh\n" + "echo " + "x" * 300 + "\n",
        },
        user=writer,
        reason=LONG_REASON,
    ).skill
    skill_service.skill_write(
        skill=handoff,
        files={**handoff.files, "references/long.md": "word " * 200 + "\n"},
        base_version=1,
        user=admin,
        reason=LONG_REASON,
    )
    records = [
        binding_service.binding_create(
            tenant=tenant,
            project=project,
            user=writer,
            process=f"nightly-docs-run-{n}",
            memory_block=MemoryBlockRequest(recipe="coder", profile="cli"),
        ).record
        for n in (1, 2)
    ]
    return {"first": records[0].pk, "second": records[1].pk}


def _overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390px", "1366px"])
def test_no_page_is_wider_than_the_window(signed_in, admin, busy, viewport):
    page = signed_in(admin, viewport=viewport)
    wider = {}
    for url in PAGES:
        response = page.goto(url.format(**busy))
        assert response.status == 200, url
        if (extra := _overflow(page)) > 0:
            wider[url] = extra
    assert not wider, f"pages wider than {viewport['width']} px, by px: {wider}"


def test_tables_stack_on_a_phone_and_show_every_column(signed_in, admin, busy):
    page = signed_in(admin, viewport=PHONE)
    page.goto("/t/acme/web/history/agent.md")

    newest = page.locator("tbody tr").first
    for label in ("Reason", "When", "Size"):
        cell = newest.locator(f'td[data-label="{label}"]')
        expect(cell).to_be_visible()
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], label
    expect(newest.locator('td[data-label="Reason"]')).to_contain_text("Back to v3")
    expect(newest).to_contain_text("Reverted to v3")


def test_the_diff_has_one_column_on_a_phone_and_whole_line_numbers(signed_in, reader, busy):
    page = signed_in(reader, viewport=PHONE)
    page.goto("/t/acme/web/diff/agent.md?from=1&to=11")

    row = page.locator(".diff-row.diff-change").first
    columns = row.evaluate("row => getComputedStyle(row).gridTemplateColumns.split(' ').length")
    assert columns == 2
    two_digit_numbers = page.evaluate(
        """() => Array.from(document.querySelectorAll('.diff-row .ln'))
            .filter(n => n.offsetParent && n.textContent.trim().length >= 2)
            .map(n => [n.scrollWidth <= n.clientWidth, getComputedStyle(n).whiteSpace,
                       n.getBoundingClientRect().width])"""
    )
    assert len(two_digit_numbers) > 5
    assert all(fits and white_space == "nowrap" for fits, white_space, _ in two_digit_numbers)
    # An unchanged line is shown once, not on both sides.
    same = page.locator(".diff-row.diff-same").first
    assert (
        same.locator(":scope > :nth-child(4)").evaluate("cell => getComputedStyle(cell).display")
        == "none"
    )


def test_on_a_desktop_the_binding_records_table_is_not_clipped(signed_in, admin, busy):
    page = signed_in(admin, viewport=DESKTOP)
    page.goto("/t/acme/web/bindings/")

    expect(page.get_by_role("columnheader", name="Archived")).to_be_visible()
    assert page.evaluate(
        """() => Array.from(document.querySelectorAll('.table-wrap'))
            .every(wrap => wrap.scrollWidth <= wrap.clientWidth)"""
    )


def test_the_lock_shows_in_the_readers_own_clock(signed_in, writer, admin, busy, project):
    from agentdocs.models import Document

    document = Document.objects.get(project=project, path="agent.md")
    document_locks.document_lock(document=document, user=admin)
    page = signed_in(writer, timezone_id="Asia/Kolkata")  # UTC+05:30: never the UTC minute
    page.goto("/t/acme/web/edit/agent.md")
    page.get_by_label("Markdown").fill("# Locked out\n")
    page.get_by_role("button", name="Save").click()

    banners = page.locator(".alert", has_text="is editing this document")
    expect(banners).to_have_count(1)
    shown = banners.locator("time").inner_text()
    document.refresh_from_db()
    utc = f"{document.lock_expires_at:%H:%M}"
    assert "UTC" not in shown and utc not in shown, shown
    assert re.search(r"\d{1,2}:\d{2}", shown), shown
    assert "UTC" in banners.locator("time").get_attribute("title")


def test_add_a_profile_in_the_recipe_form(signed_in, admin, busy):
    page = signed_in(admin)
    page.goto("/t/acme/-/recipes/coder/")
    page.get_by_role("radio", name=re.compile("Another document")).check()
    page.get_by_label("Path of the agent document").fill("notes/team.md")
    page.get_by_role("button", name="Add a profile").click()
    names = page.get_by_label("Profile name")
    expect(names).to_have_count(4)  # cli, ide, the empty row, the added one
    names.nth(2).fill("batch")
    names.nth(3).fill("review")
    page.locator("input[name$='-client']").nth(3).check()
    page.get_by_label("Reason").first.fill("two more profiles")
    page.get_by_role("button", name="Save recipe").click()
    expect(page.get_by_text("Saved the recipe coder.")).to_be_visible()

    recipe = Recipe.objects.get(name="coder")
    assert recipe.params == {"agentDocument": "notes/team.md"}
    assert recipe.profiles == {
        "cli": {"useClientAgentDoc": True},
        "ide": {},
        "batch": {},
        "review": {"useClientAgentDoc": True},
    }


def test_the_preview_offers_the_recipes_profiles_and_takes_a_client_document(
    signed_in, reader, busy
):
    page = signed_in(reader)
    page.goto("/t/acme/web/memory-block/")
    profile = page.get_by_label("Profile", exact=True)
    expect(profile.locator("option")).to_have_count(1)  # no recipe: no profiles

    page.get_by_label("Recipe").select_option("coder")
    expect(page).to_have_url(re.compile(r"recipe=coder"))
    expect(page.get_by_label("Profile", exact=True).locator("option")).to_have_text(
        ["No profile", "cli", "ide"]
    )
    page.get_by_label("Profile", exact=True).select_option("cli")
    expect(page).to_have_url(re.compile(r"profile=cli"))

    page.locator("summary", has_text="Client document").click()
    page.get_by_label("Its text").fill("# Client rules\n\n- Always say please.\n")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator(".layer .layer-text", has_text="Always say please")).to_be_visible()
    assert "please" not in page.url  # the client document stays out of the address

    page.get_by_label("Recipe").select_option("summarizer")
    expect(page.get_by_label("Profile", exact=True).locator("option")).to_have_text(["No profile"])
    expect(page.get_by_text("summarizer has no profile cli")).to_be_visible()


def test_an_ordinary_run_leaves_the_readme_screenshots_alone(open_context, screenshot, tmp_path):
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        pytest.skip("this run was asked to replace the README's screenshots")
    page = open_context().new_page()
    page.goto("/login/")

    screenshot(page, "ordinary-run")

    assert (tmp_path / "ordinary-run.png").exists()
    assert not (SCREENSHOTS / "ordinary-run.png").exists()

"""The browser front end end to end, in Chromium: sign in, edit, history, diff, conflicts,
permissions, inert Markdown and the Memory Block preview. Saves the README screenshots."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from agentdocs.models import Document
from agentdocs.services import documents as svc
from agentdocs.services import policy as policy_service
from agentdocs.services import tenancy as tenant_service

WEB_AGENT_MD = """\
# Web agent notes

The customer site and its docs, built with Astro and deployed from `main`.

## Conventions
- Pages live in `src/pages/`, one folder per section.
- Components are PascalCase, one per file, in `src/components/`.
- Images go to `src/assets/` as WebP, at most 200 KB each.

## Tone
- Customer-facing text: second person, present tense, no exclamation marks.

## Commands
- `npm run dev` serves a preview at http://localhost:4321.
- `npm run check` must pass before you hand work back.
"""

VANCE_AGENT_MD = """\
# Acme house rules

These apply in every project of Acme that has no `agent.md` of its own.

## How we work
- Plain English, short sentences, no marketing tone.
- Say what you changed and why, in the report and in the commit message.
- Ask before deleting anything you did not create in this session.

## Never
- No credentials in documents, code or reports: name the vault path instead.
"""


@pytest.fixture
def acme(admin, writer, tenant, project, vance, make_document):
    """Demo-like data: `web` with its own agent.md (three versions) and context,
    `api` and `mobile` inheriting `_vance/agent.md`, a recipe and a policy setting."""
    document = make_document(project, "agent.md", WEB_AGENT_MD, user=writer, reason="First draft")
    document = svc.document_write(
        document=document,
        body=WEB_AGENT_MD.replace("200 KB", "150 KB"),
        base_version=1,
        user=admin,
        reason="Smaller images after the Lighthouse audit",
    ).document
    svc.document_write(
        document=document,
        body=WEB_AGENT_MD.replace("200 KB", "150 KB") + "\n## Hard rules\n- No drafts in "
        "`public/downloads/`: customers see it as it is.\n",
        base_version=2,
        user=writer,
        reason="Add the downloads rule",
    )
    make_document(
        project,
        ".AGENTS/overview.md",
        "# Overview\n\nMarketing site, docs and the changelog.\n",
        user=writer,
    )
    make_document(
        project,
        ".AGENTS/glossary.md",
        "# Glossary\n\n- **Workspace**: a customer account.\n",
        user=writer,
    )
    make_document(vance, "agent.md", VANCE_AGENT_MD, user=admin, reason="Tenant-wide rules")
    for slug, name in (("api", "API"), ("mobile", "Mobile app")):
        tenant_service.project_create(tenant=tenant, slug=slug, name=name, user=admin)
    policy_service.recipe_create(
        tenant=tenant,
        name="summarizer",
        params={"agentDocument": None, "contextBudgetBytes": 4096},
        profiles={},
        user=admin,
    )
    policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={},
        profiles={"cli": {"useClientAgentDoc": True}},
        user=admin,
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.language", value="en-GB", user=admin
    )
    return tenant


def _agent_md(project) -> Document:
    return Document.objects.get(project=project, path="agent.md")


def test_sign_in_edit_agent_md_with_a_reason_and_see_it_in_history(
    signed_in, screenshot, writer, acme, project
):
    page = signed_in(writer)
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    page.get_by_role("link", name=re.compile("^Web")).click()
    expect(page.get_by_role("heading", name="Web", exact=True)).to_be_visible()
    expect(page.get_by_text("own agent.md")).to_be_visible()
    screenshot(page, "project")

    page.get_by_role("link", name="agent.md", exact=True).first.click()
    page.get_by_role("link", name="Edit").click()
    editor = page.get_by_label("Markdown")
    editor.fill(
        editor.input_value() + "\n## Reviews\n- Every page change gets a second pair of eyes.\n"
    )
    # The live preview (htmx) shows the new section, sanitised, before anything is saved.
    expect(page.locator("#preview h2", has_text="Reviews")).to_be_visible()
    page.get_by_label("Reason for this change").fill("Reviews are mandatory now")
    screenshot(page, "edit")

    editor.focus()
    page.keyboard.press("Control+s")  # the keyboard shortcut saves
    page.wait_for_url("**/t/acme/web/doc/agent.md")
    expect(page.get_by_text("Saved agent.md as version 4.")).to_be_visible()
    expect(page.locator("#rendered h2", has_text="Reviews")).to_be_visible()

    page.get_by_role("link", name="History").click()
    newest = page.locator("tbody tr").first
    expect(newest).to_contain_text("v4")
    expect(newest).to_contain_text("Reviews are mandatory now")
    expect(newest).to_contain_text("bob")
    assert _agent_md(project).version == 4


def test_diff_of_the_last_two_versions_highlights_the_change(
    signed_in, screenshot, reader, acme, project
):
    page = signed_in(reader)
    page.goto("/t/acme/web/history/agent.md")
    # The picker starts on the last two versions.
    expect(page.get_by_label("Compare from version 2")).to_be_checked()
    expect(page.get_by_label("Compare to version 3")).to_be_checked()
    page.get_by_role("button", name="Compare selected").click()
    expect(page).to_have_url(re.compile(r"/diff/agent\.md\?(?=.*\bfrom=2)(?=.*\bto=3)"))
    added = page.locator(".diff-row .add", has_text="public/downloads/")
    expect(added.first).to_be_visible()
    background = added.first.evaluate("element => getComputedStyle(element).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")
    expect(page.get_by_text(re.compile(r"\d+ unchanged lines")).first).to_be_visible()

    page.goto("/t/acme/web/diff/agent.md?from=1&to=2")
    expect(page.locator(".diff-row del", has_text="200")).to_be_visible()
    expect(page.locator(".diff-row ins", has_text="150")).to_be_visible()
    screenshot(page, "history-diff")
    page.goto("/t/acme/web/history/agent.md")
    screenshot(page, "history")


def test_conflict_the_second_saver_sees_it_and_keeps_their_text(
    signed_in, writer, admin, acme, project
):
    first = signed_in(writer)
    second = signed_in(admin)
    for page in (first, second):
        page.goto("/t/acme/web/edit/agent.md")

    first.get_by_label("Markdown").fill("# Web agent notes\n\nBob's version.\n")
    first.get_by_role("button", name="Save").click()
    first.wait_for_url("**/doc/agent.md")

    alices_text = "# Web agent notes\n\nAlice's version, typed on a stale page.\n"
    second.get_by_label("Markdown").fill(alices_text)
    second.get_by_label("Reason for this change").fill("Alice's rewrite")
    second.get_by_role("button", name="Save").click()

    # Both rewrote the same lines: the three-way page, nothing saved, Alice's text kept.
    expect(second.get_by_text("bob changed the same lines")).to_be_visible()
    assert second.get_by_label("Your text (not saved)").input_value() == alices_text
    assert second.get_by_label("Reason for this change").input_value() == "Alice's rewrite"
    expect(second.locator(".merge-side-yours", has_text="Alice's version")).to_be_visible()
    expect(second.locator(".merge-side-theirs", has_text="Bob's version")).to_be_visible()
    assert _agent_md(project).body == "# Web agent notes\n\nBob's version.\n"

    # Keeping her text over Bob's needs her explicit confirmation; then it is saved.
    second.get_by_label("Keep your change").check()
    second.get_by_role("button", name="Save merged text").click()
    expect(second.get_by_text("drops bob's change")).to_be_visible()
    assert _agent_md(project).version == 4
    second.get_by_label("I am discarding bob's change").check()
    second.get_by_role("button", name="Save merged text").click()
    second.wait_for_url("**/doc/agent.md")
    document = _agent_md(project)
    assert document.version == 5 and document.body == alices_text


def test_reader_sees_no_edit_controls_and_a_forged_post_is_refused(
    signed_in, reader, acme, project
):
    page = signed_in(reader)
    page.goto("/t/acme/web/")
    expect(page.get_by_role("link", name="New document")).to_have_count(0)
    page.goto("/t/acme/web/doc/agent.md")
    expect(page.get_by_role("link", name="Edit")).to_have_count(0)
    expect(page.get_by_role("link", name="Delete")).to_have_count(0)
    page.goto("/t/acme/web/history/agent.md")
    expect(page.get_by_role("link", name="revert")).to_have_count(0)

    # A forged save from the reader's own signed-in page, with a valid CSRF token.
    status = page.evaluate(
        """async () => {
            const token = document.cookie.match(/csrftoken=([^;]+)/)[1];
            const body = new URLSearchParams({body: "forged", base_version: "3", reason: "x"});
            const response = await fetch("/t/acme/web/edit/agent.md", {
                method: "POST", body, headers: {"X-CSRFToken": token},
            });
            return response.status;
        }"""
    )
    assert status == 403
    assert _agent_md(project).version == 3
    page.goto("/t/acme/web/edit/agent.md")
    expect(page.get_by_text("writing needs writer or admin")).to_be_visible()


def test_a_writer_cannot_edit_the_tenant_wide_agent_md(signed_in, writer, acme, vance):
    page = signed_in(writer)
    page.goto("/t/acme/_vance/doc/agent.md")
    expect(page.get_by_role("heading", name="Acme house rules")).to_be_visible()
    expect(page.get_by_role("link", name="Edit")).to_have_count(0)
    page.goto("/t/acme/_vance/edit/agent.md")
    expect(page.get_by_text("written by tenant admins only")).to_be_visible()
    assert _agent_md(vance).version == 1


def test_an_admin_editing_the_tenant_wide_agent_md_sees_its_reach_first(
    signed_in, screenshot, admin, acme
):
    page = signed_in(admin)
    page.goto("/t/acme/_vance/edit/agent.md")
    reach = page.get_by_role("region", name="Reach of this tenant-wide document")
    expect(reach.get_by_role("list", name="Projects that inherit it")).to_contain_text("api")
    expect(reach.get_by_role("list", name="Projects that inherit it")).to_contain_text("mobile")
    expect(reach.get_by_role("list", name="Projects that shadow it")).to_contain_text("web")
    reach_top = reach.bounding_box()["y"]
    editor_top = page.get_by_label("Markdown").bounding_box()["y"]
    assert reach_top < editor_top
    screenshot(page, "edit-tenant-wide")


def test_a_script_bearing_document_renders_inert(signed_in, writer, acme, project, make_document):
    make_document(
        project,
        "notes/hostile.md",
        "# Hostile\n\n<script>window.__pwned = 'script'; alert('script')</script>\n\n"
        "<img src=x onerror=\"window.__pwned = 'img'; alert('img')\">\n\n"
        "[click me](javascript:window.__pwned='link')\n",
        user=writer,
    )
    page = signed_in(writer)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for url in ("/t/acme/web/doc/notes/hostile.md", "/t/acme/web/edit/notes/hostile.md"):
        page.goto(url)
        page.wait_for_load_state("networkidle")
        rendered = page.locator("#rendered, #preview").first
        expect(rendered).to_contain_text("<script>")  # shown as text
        assert rendered.locator("script, img[onerror], a[href^='javascript']").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []


def test_memory_block_preview_shows_the_inherited_heading(
    signed_in, screenshot, reader, acme, tenant
):
    api = tenant.projects.get(slug="api")
    page = signed_in(reader)
    page.goto("/t/acme/api/")
    expect(page.get_by_text("inherited from _vance")).to_be_visible()
    page.get_by_role("link", name="Preview Memory Block").click()
    agent_notes = page.locator(".layer", has=page.get_by_role("heading", name="2. Agent notes"))
    expect(agent_notes.locator(".layer-text")).to_contain_text(
        "## Agent Notes (from _vance: agent.md)"
    )
    expect(agent_notes.locator(".layer-text")).to_contain_text("Plain English, short sentences")
    assert not Document.objects.filter(project=api, path="agent.md").exists()

    # Choosing a recipe re-renders in place (htmx): this one turns the agent document off.
    page.get_by_label("Recipe").select_option("summarizer")
    expect(page).to_have_url(re.compile(r"recipe=summarizer"))
    expect(agent_notes.locator(".badge").first).to_have_text("off")
    expect(page.locator(".layer-text", has_text="## Agent Notes")).to_have_count(0)

    page.goto("/t/acme/web/memory-block/?recipe=coder&profile=cli")
    expect(page.locator(".layer .layer-text", has_text="## Agent Notes (agent.md)")).to_be_visible()
    screenshot(page, "preview")


def test_pages_read_well_on_a_phone(signed_in, screenshot, writer, acme):
    page = signed_in(writer, viewport={"width": 390, "height": 844}, is_mobile=True)
    page.goto("/t/acme/web/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "the project page must not scroll sideways on a phone"
    screenshot(page, "project-phone")
    page.goto("/t/acme/web/diff/agent.md?from=1&to=3")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_bind_a_run_and_read_its_record(signed_in, screenshot, writer, admin, acme, project, vance):
    import json

    from agentdocs.services import providers as provider_service

    svc.document_create(
        project=vance, path="baseline.md", body="# Baseline\n\nNo deploys.\n", user=admin
    )
    provider_service.provider_set(
        tenant=acme, name="acme/baseline", project_slug="_vance", path="baseline.md", user=admin
    )
    manifest = {
        "context": [{"name": "acme/baseline", "standing": "rule"}],
        "local": ["agent.md", ".AGENTS/overview.md"],
        "exceptions": [
            {"target": "acme/baseline#deploy", "effect": "narrow", "reason": "Docs only"}
        ],
    }
    svc.document_create(project=project, path="context.json", body=json.dumps(manifest), user=admin)
    page = signed_in(writer)
    page.goto("/t/acme/web/")
    page.get_by_role("link", name="Binding records").click()
    page.get_by_label("Process id").fill("nightly-docs-42")
    page.get_by_label("Recipe").select_option("coder")
    page.get_by_role("button", name="Bind", exact=True).click()
    expect(page.get_by_text("without problems")).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile("Record #"))).to_be_visible()
    expect(page.get_by_text("all sources current")).to_be_visible()
    expect(page.locator(".badge", has_text="narrowed")).to_be_visible()
    screenshot(page, "binding-record")
    page.get_by_role("link", name="Reconstruct").click()
    expect(page.get_by_text("complete and verified")).to_be_visible()
    expect(page.get_by_text("byte-identical")).to_be_visible()


def test_the_activity_page_leads_from_a_change_to_its_history(signed_in, screenshot, admin, acme):
    policy_service.setting_set(
        tenant=acme,
        project=None,
        key="memory.language",
        value="en-US",
        user=admin,
        reason="Our customers are in the US",
    )
    page = signed_in(admin)
    page.goto("/t/acme/")
    page.get_by_role("link", name="Activity", exact=True).click()
    expect(page.get_by_role("heading", name="Activity")).to_be_visible()
    expect(page.get_by_text("Add the downloads rule")).to_be_visible()
    screenshot(page, "activity")
    page.get_by_label("Kind").select_option("setting")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_text("Add the downloads rule")).to_have_count(0)
    page.get_by_role("link", name="memory.language").first.click()
    expect(page.get_by_text("Our customers are in the US")).to_be_visible()
    expect(page.locator("ins", has_text="en-US")).to_be_visible()
    expect(page.locator("del", has_text="en-GB")).to_be_visible()
    screenshot(page, "setting-history")

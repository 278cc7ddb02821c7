"""The canary in Chromium (issue 29): a writer labels an edit `canary` on the document
page; coder processes (their recipe reads `canary`) get it, summarizer ones
(`production`) do not; the Runs page shows which runs saw which; promoting it is one
label move."""

from __future__ import annotations

from playwright.sync_api import expect

from agentdocs.models import DocumentLabel
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from agentdocs.services import policy as policy_service

BASE = "/api/v1/tenants/acme/projects/web"


def _render(api, user, recipe: str) -> str:
    response = api(user).post(
        f"{BASE}/memory-block/", {"process": f"{recipe}-1", "recipe": recipe}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()["text"]


def test_a_canary_moved_on_the_page_reaches_coder_only_and_the_runs_page_shows_it(
    signed_in, screenshot, api, tenant, project, make_document, admin, writer, reader
):
    document = make_document(project, "agent.md", "# Rules\n\n- stable rule\n", user=writer)
    label_service.label_move(document=document, name="production", version=1, user=admin)
    document_service.document_write(
        document=document, body="# Rules\n\n- new rule\n", base_version=1, user=writer
    )
    for name, label in (("coder", "canary"), ("summarizer", "production")):
        policy_service.recipe_create(
            tenant=tenant, name=name, params={"label": label}, profiles={}, user=admin
        )

    bob = signed_in(writer)
    bob.goto("/t/acme/web/doc/agent.md")
    expect(bob.locator('[data-labels] [data-label="production"]')).to_contain_text("v1")
    form = bob.get_by_role("form", name="Move a label")
    form.get_by_label("Label").fill("canary")
    form.get_by_label("To version").fill("2")
    form.get_by_label("Reason").fill("try the new rule on coders")
    form.get_by_role("button", name="Move label").click()
    expect(bob.get_by_text("Moved canary to version 2.")).to_be_visible()
    expect(bob.locator('[data-labels] [data-label="canary"]')).to_contain_text("v2")
    screenshot(bob, "labels")

    # A writer may not move production: refused beside the field, nothing moved.
    form = bob.get_by_role("form", name="Move a label")
    form.get_by_label("Label").fill("production")
    form.get_by_label("To version").fill("2")
    form.get_by_role("button", name="Move label").click()
    expect(bob.get_by_text("review.protectedLabels").first).to_be_visible()
    assert DocumentLabel.objects.get(name="production").version == 1

    # Through the API: the edit reaches coder processes only.
    assert "new rule" in _render(api, reader, "coder")
    assert "stable rule" in _render(api, reader, "summarizer")
    for recipe in ("coder", "summarizer"):
        response = api(writer).post(
            f"{BASE}/bindings/",
            {"process": f"{recipe}-run", "manifest": {}, "memory_block": {"recipe": recipe}},
            format="json",
        )
        assert response.status_code == 201, response.content

    bob.goto("/t/acme/web/runs/")
    # The segments table (the chart says the same in its bars and description).
    expect(bob.locator("table td", has_text="v2 canary").first).to_be_visible()
    expect(bob.locator("table td", has_text="v1 production").first).to_be_visible()

    # Promoting is one move, by a reviewer (a tenant admin), on the page.
    alice = signed_in(admin)
    alice.goto("/t/acme/web/doc/agent.md")
    form = alice.get_by_role("form", name="Move a label")
    form.get_by_label("Label").fill("production")
    form.get_by_label("To version").fill("2")
    form.get_by_role("button", name="Move label").click()
    expect(alice.get_by_text("Moved production to version 2.")).to_be_visible()
    assert "new rule" in _render(api, reader, "summarizer")

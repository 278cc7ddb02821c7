"""A refused form in Chromium: its sentence shows the names it quotes as code, not as
Markdown backticks, and the address stays the page's own, so reloading or going back
does not land on an address that only takes a POST."""

from __future__ import annotations

from playwright.sync_api import expect

from agentdocs.models import DocumentLabel
from agentdocs.services import changes as change_service

PAGE = "/t/acme/web/doc/agent.md"


def test_a_refused_label_move_stays_on_the_document_page_with_code_not_backticks(
    signed_in, live_server, project, make_document, writer
):
    make_document(project, "agent.md", "# Rules\n", user=writer)
    page = signed_in(writer)
    page.goto(PAGE)
    form = page.get_by_role("form", name="Move a label")
    form.get_by_label("Label").fill("latest")
    form.get_by_label("To version").fill("1")
    form.get_by_role("button", name="Move label").click()

    error = page.get_by_role("alert").filter(has_text="every document's newest version")
    expect(error).to_be_visible()
    assert "`" not in error.inner_text()
    expect(error.locator("code")).to_have_text("latest")
    assert page.url == live_server.url + PAGE
    assert not DocumentLabel.objects.exists()


def test_an_empty_comment_stays_on_the_change_page(
    signed_in, live_server, project, make_document, reader, writer
):
    make_document(project, "agent.md", "# Rules\n\n- tabs\n", user=writer)
    change = change_service.change_propose(
        project=project,
        path="agent.md",
        body="# Rules\n\n- spaces\n",
        base_version=1,
        reason="spaces",
        user=reader,
    )
    address = f"/t/acme/web/changes/{change.pk}/"
    page = signed_in(writer)
    page.goto(address)
    # The browser's own check stops an empty required field: say something only spaces.
    page.get_by_label("Comment", exact=True).fill("   ")
    page.get_by_role("button", name="Comment", exact=True).click()
    expect(page.locator("#id_body_error")).to_be_visible()
    assert page.url == live_server.url + address
    page.get_by_label("Comment", exact=True).fill("Why spaces?")
    page.get_by_role("button", name="Comment", exact=True).click()
    expect(page.get_by_text("Comment added.")).to_be_visible()
    assert page.url == live_server.url + address

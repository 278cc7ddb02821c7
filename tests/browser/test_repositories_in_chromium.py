"""The Repositories page in Chromium: two repositories in different states, their
badges readable, the table no wider than a phone or a laptop screen, and a click
through to a repository's checks."""

from __future__ import annotations

import pytest

from agentdocs.services import documents as document_service
from tests.web.views.test_repositories import report


@pytest.fixture
def two_repositories(project, writer, make_document):
    notes = make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n", user=writer)
    behind = report(
        project, writer, remote="https://example.com/acme/web.git", files={"AGENTS.md": "in-sync"}
    )
    edited = report(
        project,
        writer,
        remote="git@example.com:acme/fork.git",
        files={"AGENTS.md": "edited-locally"},
        kind="check",
    )
    document_service.document_write(
        document=notes, user=writer, body="# Web rules\n\n- Spaces.\n", base_version=1,
        reason="spaces",
    )  # fmt: skip
    return behind.repository, edited.repository


@pytest.mark.parametrize("width", [390, 1366])
def test_the_repositories_page_shows_each_state_and_fits_the_screen(
    signed_in, screenshot, reader, two_repositories, width
):
    behind, edited = two_repositories
    page = signed_in(reader, viewport={"width": width, "height": 900})
    page.goto("/t/acme/web/")
    page.get_by_role("link", name="Repositories").click()
    page.wait_for_url("**/t/acme/web/repositories/")
    row = page.locator(f'tr[data-repository="{behind.pk}"]')
    assert row.locator(".repository-state").inner_text() == "behind"
    assert "AGENTS.md: 1 version" in row.inner_text()
    other = page.locator(f'tr[data-repository="{edited.pk}"]')
    assert other.locator(".repository-state").inner_text() == "edited locally"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, "repositories" if width > 390 else "repositories-phone")
    row.get_by_role("link", name="https://example.com/acme/web.git").click()
    page.wait_for_url(f"**/t/acme/web/repositories/{behind.pk}/")
    assert page.locator("#checks tbody tr").count() == 1

"""Bounded pages in Chromium (issue 23): a history search that goes on to older
versions by its link, and the Export page's file list with a download per file."""

from __future__ import annotations

from playwright.sync_api import expect

from agentdocs.services import documents as document_service

LONG = "# Long\n\n" + "".join(f"- line {n} of a long context document.\n" for n in range(400))


def test_a_history_search_goes_on_to_older_versions_by_its_link(
    signed_in, reader, writer, project, make_document, settings
):
    settings.AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT = 3
    document = make_document(project, "agent.md", "# Rules\n", user=writer)
    for version in range(1, 7):
        document = document_service.document_write(
            document=document,
            body=f"# Rules\n- needle\n- v{version + 1}\n",
            base_version=version,
            user=writer,
        ).document
    page = signed_in(reader)
    page.goto("/t/acme/web/history/agent.md?q=needle")
    note = page.locator("[data-history-scan]")
    expect(note).to_contain_text("Searched the newest 3 versions")
    expect(page.get_by_text("first introduced here")).to_have_count(0)
    page.get_by_role("link", name="search older ones").click()
    expect(note).to_contain_text("Searched versions 2 to 4")
    introductions = page.locator(".search-hits li")
    expect(introductions).to_have_count(1)
    expect(introductions).to_contain_text("v2")
    page.get_by_role("link", name="search older ones").click()
    expect(note).to_contain_text("Searched versions 1 to 1, back to the first.")
    expect(page.get_by_role("link", name="search older ones")).to_have_count(0)


def test_the_export_page_lists_files_and_downloads_one_whole(
    signed_in, reader, writer, project, make_document
):
    make_document(project, ".AGENTS/long.md", LONG, user=writer)
    page = signed_in(reader)
    page.goto("/t/acme/web/export/?format=cursor")
    row = page.locator("[data-export-file]", has_text=".cursor/rules/long.mdc")
    expect(row).to_contain_text("KB")
    expect(page.get_by_text("line 399 of a long")).to_have_count(0)
    with page.expect_download() as download_info:
        row.get_by_role("link", name=".cursor/rules/long.mdc").click()
    download = download_info.value
    assert download.suggested_filename == "long.mdc"
    with open(download.path(), encoding="utf-8") as file:
        text = file.read()
    assert "- line 399 of a long context document." in text

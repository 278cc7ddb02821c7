"""The header's search box in Chromium: `/` focuses it from anywhere but a field, and
a search opens the results page with the matches marked."""

from __future__ import annotations


def test_slash_focuses_the_search_box_and_a_search_shows_marked_results(
    signed_in, reader, project, make_document
):
    make_document(project, "agent.md", "# Rules\n\nDeploy with the blue pipeline.\n")
    page = signed_in(reader)
    page.goto("/t/acme/web/")
    box = page.locator("input[data-search-shortcut]")
    assert not box.evaluate("element => element === document.activeElement")
    page.keyboard.press("/")
    assert box.evaluate("element => element === document.activeElement")
    assert box.input_value() == ""  # the `/` itself was not typed
    page.keyboard.type("pipeline")
    page.keyboard.press("Enter")
    page.wait_for_url("**/t/acme/-/search/?q=pipeline")
    assert page.locator(".search-hits mark").first.inner_text().lower() == "pipeline"
    assert page.get_by_role("link", name="agent.md").count() == 1


def test_slash_in_a_field_is_typed_not_a_shortcut(signed_in, reader, project):
    page = signed_in(reader)
    page.goto("/t/acme/-/search/")
    field = page.locator("#search-q")
    field.click()
    page.keyboard.type("a/b")
    assert field.input_value() == "a/b"
    assert field.evaluate("element => element === document.activeElement")

"""The documentation at /docs/ in Chromium, signed out: it reads, its links and pictures
work, it keeps the Content-Security-Policy, and a phone reads it without scrolling
sideways."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_pages_content_security_policy_in_chromium import RECORD_VIOLATIONS
from tests.test_docs import nav_pages

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = ["/docs/" if p == "index.md" else f"/docs/{p.removesuffix('.md')}/" for p in nav_pages()]


def _watch(page) -> list[str]:
    page.add_init_script(RECORD_VIOLATIONS)
    console: list[str] = []
    page.on(
        "console",
        lambda message: (
            console.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return console


def test_a_signed_out_reader_follows_the_footer_into_the_docs_and_between_pages(open_context):
    page = open_context().new_page()
    console = _watch(page)

    page.goto("/login/")
    page.get_by_role("contentinfo").get_by_role("link", name="Documentation").click()
    expect(page).to_have_url("/docs/")
    expect(page.get_by_role("heading", level=1, name="agentdocs")).to_be_visible()

    page.locator("#rendered table").get_by_role("link", name="Memory Block").click()
    expect(page).to_have_url("/docs/memory-block/")
    page.locator("#rendered").get_by_role("link", name="Hidden characters").click()
    expect(page).to_have_url("/docs/api/#hidden-characters")
    heading = page.get_by_role("heading", name="Hidden characters", exact=True)
    expect(heading).to_be_in_viewport()

    page.get_by_role("navigation", name="Documentation").get_by_role(
        "link", name="Screenshots"
    ).click()
    expect(page).to_have_url("/docs/screenshots/")
    pictures = page.locator("#rendered img")
    assert pictures.count() > 10
    for index in range(pictures.count()):
        picture = pictures.nth(index)
        picture.scroll_into_view_if_needed()
        loaded = picture.evaluate("img => img.complete && img.naturalWidth > 0")
        assert loaded, picture.get_attribute("src")

    assert page.evaluate("window.__cspViolations") == [] and console == []


def test_no_docs_page_breaks_the_content_security_policy(open_context):
    page = open_context().new_page()
    console = _watch(page)

    for url in PAGES:
        response = page.goto(url)
        assert response is not None and response.status == 200, url
        assert "content-security-policy" in response.headers, url
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__cspViolations") == [] and console == [], url


def test_a_phone_reads_every_docs_page_without_scrolling_sideways(open_context):
    page = open_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()

    wide = []
    for url in PAGES:
        page.goto(url)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wide.append((url, width))

    assert wide == []

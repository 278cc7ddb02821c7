"""The daily-use defects of a first day with the demo (issue 25), in Chromium at a
laptop's width (1366 px) and a phone's (390 px): the activity list and its filter, a
search that finds nothing, the 403 page of a page only admins may open, a created
token on a phone, the runs timeline on a phone, and no main page wider than a phone."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from agentdocs.selectors.search import search_syntax
from agentdocs.services import policy as policy_service
from agentdocs.services import webhooks as webhook_service
from tests.browser import test_pages_widths_in_chromium as widths
from tests.browser.test_pages_widths_in_chromium import DESKTOP, LONG_REASON, PAGES, PHONE
from tests.timeline_runs import bind_fifty_runs

# The project with a long history, binding records, recipes and settings of the widths test.
busy = widths.busy

# A setting key as long as real ones get, for the activity's target column.
LONG_KEY = "memory.compaction.thresholdTokensForTheNightlyDocumentationRuns"


def _overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


@pytest.fixture
def activity(tenant, project, admin, writer, make_document):
    """Activity with long reasons and a long target, the kind that squeezed the WHY column."""
    make_document(project, "agent.md", "# Web\n\n- Deploy from main.\n", user=writer)
    for number in range(3):
        policy_service.setting_set(
            tenant=tenant,
            project=project,
            key=f"{LONG_KEY}{number}",
            value=str(40000 + number),
            user=admin,
            reason=LONG_REASON,
        )


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366px", "390px"])
def test_the_activity_filter_comes_before_the_list(signed_in, admin, activity, viewport):
    page = signed_in(admin, viewport=viewport)
    page.goto("/t/acme/-/activity/")

    form = page.get_by_role("form", name="Filter")
    expect(form).to_be_visible()
    list_top = page.locator("table.activity-table").bounding_box()["y"]
    form_box = form.bounding_box()
    assert form_box["y"] + form_box["height"] <= list_top
    # In the first screen, without scrolling past the list.
    assert page.get_by_label("Kind").bounding_box()["y"] < viewport["height"]
    assert _overflow(page) <= 0

    page.get_by_label("Kind").select_option("setting")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"kind=setting"))
    expect(page.locator("table.activity-table tbody tr")).to_have_count(3)


def test_at_1366_px_the_reasons_read_as_lines_not_letters(signed_in, admin, activity, screenshot):
    page = signed_in(admin, viewport=DESKTOP)
    page.goto("/t/acme/-/activity/")

    why = page.locator("table.activity-table tbody tr td:last-child", has_text="customer")
    expect(why).to_have_count(3)
    box = why.first.bounding_box()
    line_height = why.first.evaluate("cell => parseFloat(getComputedStyle(cell).lineHeight)")
    assert box["width"] >= 250, box
    assert box["height"] <= 4 * line_height + 30, box  # a sentence in a few lines
    assert page.evaluate(
        """() => [...document.querySelectorAll('.table-wrap')]
            .every(wrap => wrap.scrollWidth <= wrap.clientWidth)"""
    ), "the list scrolls sideways"
    target = page.locator("table.activity-table td.path", has_text=LONG_KEY).first
    assert target.bounding_box()["x"] + target.bounding_box()["width"] <= box["x"]
    page.set_viewport_size(PHONE)
    screenshot(page, "activity-phone", full_page=False)


def test_a_search_that_finds_nothing_says_so_and_what_to_try(
    signed_in, reader, project, make_document, screenshot
):
    make_document(project, "agent.md", "# Web\n\n- Deploy the staging site from main.\n")
    page = signed_in(reader, viewport=DESKTOP)
    page.goto("/t/acme/-/search/?q=staging+zebra&project=web")

    nothing = page.get_by_role("status").filter(has_text="No documents match")
    expect(nothing).to_be_visible()
    expect(nothing).to_contain_text("“staging zebra” in Web")
    expect(nothing.get_by_role("link", name="Search every project")).to_be_visible()
    expect(nothing).to_contain_text("Check the spelling")
    if search_syntax() == "words":
        expect(nothing).to_contain_text("a document must hold every word")
        expect(nothing).to_contain_text("quotes")
    else:
        expect(nothing).to_contain_text("looked for as you typed it")
        expect(nothing).to_contain_text("as one piece")
    screenshot(page, "search-nothing-found")
    page.set_viewport_size(PHONE)
    assert _overflow(page) <= 0
    screenshot(page, "search-nothing-found-phone")

    nothing.get_by_role("link", name="staging", exact=True).click()
    expect(page).to_have_url(re.compile(r"q=staging&project=web"))
    expect(page.get_by_role("link", name="agent.md")).to_be_visible()
    expect(page.get_by_text("No documents match")).to_have_count(0)


def test_a_search_of_one_word_suggests_no_word_list(signed_in, reader, project, make_document):
    make_document(project, "agent.md", "# Web\n")
    page = signed_in(reader)
    page.goto("/t/acme/-/search/?q=zebra")

    nothing = page.get_by_role("status").filter(has_text="No documents match “zebra”")
    expect(nothing).to_be_visible()
    expect(nothing.get_by_role("link", name="Search every project")).to_have_count(0)
    expect(nothing.get_by_text("alone.")).to_have_count(0)


def test_a_writer_opening_webhooks_is_told_only_admins_manage_them(
    signed_in, writer, outsider, other_tenant, tenant, screenshot
):
    page = signed_in(writer, viewport=PHONE)
    response = page.goto("/t/acme/-/webhooks/")

    assert response.status == 403
    expect(page.get_by_text("For tenant admins only")).to_be_visible()
    expect(
        page.get_by_text("Only tenant admins see and manage the tenant's webhooks.")
    ).to_be_visible()
    expect(page.get_by_text("You may read this")).to_have_count(0)
    screenshot(page, "webhooks-refused-phone", full_page=False)

    stranger = signed_in(outsider)
    assert stranger.goto("/t/acme/-/webhooks/").status == 404


def test_a_reader_refused_an_edit_is_told_they_may_read_it(
    signed_in, reader, project, make_document
):
    make_document(project, "agent.md", "# Web\n")
    page = signed_in(reader)
    response = page.goto("/t/acme/web/edit/agent.md")

    assert response.status == 403
    expect(page.get_by_text("You may read this, but not change it")).to_be_visible()
    expect(page.get_by_text("writing needs writer or admin")).to_be_visible()


def test_a_created_token_wraps_on_a_phone(signed_in, writer, screenshot):
    page = signed_in(writer, viewport=PHONE)
    page.goto("/tokens/")
    page.get_by_label("Name").fill("Laptop")
    page.get_by_role("button", name="Create token").click()

    key = page.locator("#new-token-key")
    expect(key).to_be_visible()
    assert key.inner_text().startswith("adt_")
    box = key.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    assert _overflow(page) <= 0
    screenshot(page, "token-created-phone", full_page=False)


@pytest.fixture
def fifty_runs(tenant, project, writer, make_document):
    return bind_fifty_runs(tenant, project, writer, make_document)


def test_on_a_phone_the_runs_chart_keeps_a_readable_size_and_scrolls_in_its_box(
    signed_in, reader, fifty_runs, screenshot
):
    page = signed_in(reader, viewport=PHONE)
    page.goto("/t/acme/web/runs/")

    chart = page.locator("svg.timeline")
    drawn = chart.bounding_box()["width"]
    own = float(chart.get_attribute("viewBox").split()[2])
    assert drawn >= own, (drawn, own)  # never shrunk: its 12 px text stays 12 px
    label = page.locator("svg.timeline .tl-label").first.bounding_box()
    assert label["height"] >= 12
    box = page.locator(".runs-chart")
    assert box.evaluate("box => box.scrollWidth > box.clientWidth")
    assert box.evaluate("box => getComputedStyle(box).overflowX") == "auto"
    expect(page.get_by_text("scroll it sideways")).to_be_visible()
    assert _overflow(page) <= 0
    box.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
    screenshot(page, "runs-phone")

    page.set_viewport_size(DESKTOP)
    assert chart.bounding_box()["width"] >= own
    expect(page.get_by_text("scroll it sideways")).to_be_hidden()
    assert box.evaluate("box => box.scrollWidth <= box.clientWidth")
    screenshot(page, "runs")


# Pages the widths test of test_phone_and_desktop_widths.py does not open: lists, search,
# the tenant's pages, the 403 and 404 pages, and what a form shows once it was sent.
MORE_PAGES = [
    "/t/acme/-/activity/",
    "/t/acme/-/changes/",
    "/t/acme/-/search/?q=rule",
    "/t/acme/-/search/?q=rule+zebra",
    "/t/acme/-/webhooks/",
    "/t/acme/-/webhooks/{webhook}/",
    "/t/acme/-/history/settings/memory.language/",
    "/t/acme/web/runs/",
    "/t/acme/web/changes/new/?path=agent.md",
    "/t/acme/no-such-project/and/a/very/long/path/that/goes/on/and/on/and/on/",
]


@pytest.fixture
def webhook(tenant, admin):
    created = webhook_service.webhook_create(
        tenant=tenant,
        url="https://hooks.example.com/agentdocs/a-very-long-receiver-path/that-goes-on",
        events=["document.updated"],
        projects=None,
        description="Chat notifications",
        user=admin,
    )
    return created.webhook.pk


# The pictures in docs/screenshots/ this test takes on its way, by width.
PICTURES = {
    "390px": {
        "/t/acme/web/doc/agent.md": "document-phone",
        "/t/acme/web/edit/agent.md": "edit-phone",
        "/t/acme/web/history/agent.md": "history-phone",
        "/t/acme/web/memory-block/?recipe=coder&profile=cli": "preview-phone",
        "/t/acme/web/bindings/{first}/": "binding-record-phone",
        "/t/acme/-/search/?q=rule": "search-phone",
        "/t/acme/-/webhooks/{webhook}/": "webhook-phone",
    },
    "1366px": {"/t/acme/-/search/?q=rule": "search"},
}


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390px", "1366px"])
def test_no_main_page_is_wider_than_the_window(
    signed_in, admin, reader, busy, webhook, viewport, screenshot
):
    page = signed_in(admin, viewport=viewport)
    pictures = PICTURES[f"{viewport['width']}px"]
    wider = {}
    for url in [*PAGES, *MORE_PAGES]:
        response = page.goto(url.format(**busy, webhook=webhook))
        assert response.status in (200, 404), url
        if (extra := _overflow(page)) > 0:
            wider[url] = extra
        if url in pictures:
            screenshot(page, pictures[url], full_page=False)
    # What a sent form shows: a new token, once.
    page.goto("/tokens/")
    page.get_by_label("Name").fill("A token with a long name for the nightly documentation runs")
    page.get_by_role("button", name="Create token").click()
    expect(page.locator("#new-token-key")).to_be_visible()
    if (extra := _overflow(page)) > 0:
        wider["/tokens/ (created)"] = extra
    # A refusal, as a reader sees it.
    refused = signed_in(reader, viewport=viewport)
    for url in ("/t/acme/-/webhooks/", "/t/acme/web/edit/agent.md"):
        assert refused.goto(url).status == 403, url
        if (extra := _overflow(refused)) > 0:
            wider[f"{url} (403)"] = extra
    assert not wider, f"pages wider than {viewport['width']} px, by px: {wider}"

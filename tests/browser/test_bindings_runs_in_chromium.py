"""The runs page in Chromium: the chart is drawn without any script, and neither it nor
its table pushes the page wider than a phone or a laptop screen."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.timeline_runs import bind_fifty_runs, deliver


@pytest.fixture
def fifty_runs(tenant, project, writer, make_document):
    return bind_fifty_runs(tenant, project, writer, make_document)


@pytest.mark.parametrize("width", [390, 1366])
def test_the_runs_chart_fits_the_screen(signed_in, reader, fifty_runs, width):
    page = signed_in(reader, viewport={"width": width, "height": 900}, java_script_enabled=False)
    page.goto("/t/acme/web/runs/")
    chart = page.locator("svg.timeline")
    expect(chart).to_be_visible()
    assert chart.locator("g.tl-bar").count() >= 3
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_the_run_numbers_sit_over_their_own_bars_and_a_legend_explains_the_colours(
    signed_in, reader, fifty_runs
):
    page = signed_in(reader, viewport={"width": 1366, "height": 900}, java_script_enabled=False)
    page.goto("/t/acme/web/runs/")
    chart = page.locator("svg.timeline")
    # Runs 46–50 saw v3: the "50" over the axis is drawn above that bar's last column.
    bar = chart.locator("g.tl-bar", has=page.locator("title", has_text=": v3")).locator("rect")
    bar_box = bar.bounding_box()
    column = bar_box["width"] / 5
    tick = chart.locator("text.tl-tick", has_text="50").bounding_box()
    middle = tick["x"] + tick["width"] / 2
    assert bar_box["x"] + 4 * column < middle < bar_box["x"] + bar_box["width"]
    # And the "1" over the first run's column, not over the sources' names.
    first = chart.locator("g.tl-bar rect").first.bounding_box()
    one = chart.locator("text.tl-tick", has_text="1").first.bounding_box()
    assert first["x"] < one["x"] + one["width"] / 2 < first["x"] + column
    legend = page.get_by_role("list", name="Legend")
    expect(legend).to_be_visible()
    assert "one colour per version" in legend.inner_text()


@pytest.mark.parametrize("width", [390, 1366])
def test_a_session_is_reached_from_the_runs_page_and_its_timeline_fits_the_screen(
    signed_in, reader, tenant, project, writer, width
):
    deliver(tenant, project, writer, "s-1")
    deliver(tenant, project, writer, "s-1", source="resume")
    deliver(tenant, project, writer, "s-1", source="compact", prefix="Checking for updates...\n")
    page = signed_in(reader, viewport={"width": width, "height": 900}, java_script_enabled=False)
    page.goto("/t/acme/web/runs/")

    page.get_by_role("link", name="s-1").click()

    timeline = page.get_by_role("table", name="Deliveries of session s-1")
    expect(timeline).to_be_visible()
    rows = timeline.locator("tbody tr")
    assert rows.count() == 3
    assert [rows.nth(i).locator("strong").inner_text() for i in range(3)] == [
        "start",
        "resume",
        "compaction",
    ]
    assert "unusable" in rows.nth(2).inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width

"""The canary scenario in Chromium: two cohorts of runs on two labels, their outcomes
reported, and the verdict on the Outcomes page and the canary document's page, drawn
without any script and within a phone's and a laptop's width."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from agentdocs.services import labels as label_service
from tests.outcome_runs import cohort_of


@pytest.fixture
def canary(project, reader, admin, make_document):
    document = make_document(project, "agent.md", "# Rules\n")
    label_service.label_move(document=document, name="canary", version=1, user=admin)
    cohort_of(project, reader, label="canary", values=[True] * 40 + [False] * 10, prefix="c")
    cohort_of(project, reader, label="production", values=[True] * 30 + [False] * 20, prefix="p")


@pytest.mark.parametrize("width", [390, 1366])
def test_the_verdict_is_drawn_and_fits_the_screen(signed_in, reader, canary, width):
    page = signed_in(reader, viewport={"width": width, "height": 900}, java_script_enabled=False)
    page.goto("/t/acme/web/runs/")
    page.get_by_role("link", name="Outcomes").first.click()
    page.wait_for_url("**/t/acme/web/outcomes/**")
    chart = page.locator("svg.outcome-cohorts")
    expect(chart).to_be_visible()
    assert chart.locator("circle.oc-value").count() == 2
    table = page.get_by_role("table", name="task_success by label")
    canary_row = table.locator("tr", has_text="canary")
    assert "better" in canary_row.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width

    page.goto("/t/acme/web/doc/agent.md")
    block = page.locator("#canary")
    assert "Canary vs production" in block.inner_text()
    assert "better" in block.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width

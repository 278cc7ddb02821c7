"""The runs page in Chromium: the chart is drawn without any script, and neither it nor
its table pushes the page wider than a phone or a laptop screen."""

from __future__ import annotations

import pytest

from tests.timeline_runs import bind_fifty_runs


@pytest.fixture
def fifty_runs(tenant, project, writer, make_document):
    return bind_fifty_runs(tenant, project, writer, make_document)


@pytest.mark.parametrize("width", [390, 1366])
def test_the_runs_chart_fits_the_screen(signed_in, reader, fifty_runs, width):
    page = signed_in(reader, viewport={"width": width, "height": 900}, java_script_enabled=False)
    page.goto("/t/acme/web/runs/")
    chart = page.locator("svg.timeline")
    assert chart.is_visible()
    assert chart.locator("g.tl-bar").count() >= 3
    assert page.evaluate("document.documentElement.scrollWidth") <= width

"""The runs page in Chromium: the chart is drawn without any script, and neither it nor
its table pushes the page wider than a phone or a laptop screen."""

from __future__ import annotations

import pytest

from tests.api.test_binding_timeline import fifty_runs  # noqa: F401  (fixture)


@pytest.mark.parametrize("width", [390, 1366])
def test_the_runs_chart_fits_the_screen(signed_in, reader, fifty_runs, screenshot, width):  # noqa: F811
    page = signed_in(reader, viewport={"width": width, "height": 900}, java_script_enabled=False)
    page.goto("/t/acme/web/runs/")
    chart = page.locator("svg.timeline")
    assert chart.is_visible()
    assert chart.locator("g.tl-bar").count() >= 3
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"runs-{width}" if width != 1366 else "runs")

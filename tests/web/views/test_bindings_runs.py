"""The runs page: an SVG chart of which version of each bound source the runs saw,
with its words and a table of the segments; members only, constant queries."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.timeline_runs import bind_fifty_runs, bind_runs

URL = "/t/acme/web/runs/"


@pytest.fixture
def fifty_runs(tenant, project, writer, make_document):
    return bind_fifty_runs(tenant, project, writer, make_document)


def test_the_chart_shows_the_agent_document_changing_at_run_41(browse, reader, fifty_runs):
    response = browse(reader).get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    svg = html[html.index("<svg") : html.index("</svg>")]
    assert 'role="img"' in svg and 'aria-labelledby="tl-title tl-desc"' in svg
    assert "<script" not in html.split("</head>")[1]
    desc = re.search(r'<desc id="tl-desc">(.*?)</desc>', svg).group(1)
    assert "50 runs" in desc
    assert "agent:web/agent.md: runs 1–40 saw v1 · " in desc
    assert "runs 41–45 saw v2" in desc and "runs 46–50 saw v3" in desc
    assert "2 runs had problems" in desc
    assert svg.count('class="tl-problem"') >= 1
    # The agent document's row: three bars, one per version.
    assert len(re.findall(r"<title>agent:web/agent.md: v\d", svg)) == 3
    table = html[html.index('id="runs-table-title"') :]
    assert "runs 1–40" in table and "runs 41–45" in table
    assert f"/t/acme/web/bindings/{fifty_runs[40].pk}/" in table


def test_no_runs_says_so_and_what_records_a_run(browse, reader, project):
    html = browse(reader).get(URL).content.decode()
    assert "No runs were bound in this span." in html
    assert "<svg" not in html
    how = html[html.index('class="card-body muted small runs-empty-how"') :]
    how = how[: how.index("</p>")]
    assert "agentdocs bind" in how and "agentdocs hooks install" in how
    assert "agentdocs run" in how and 'href="/docs/binding-records/"' in how


def test_each_run_number_sits_over_the_middle_of_its_own_column(browse, reader, fifty_runs):
    html = browse(reader).get(URL).content.decode()
    svg = html[html.index("<svg") : html.index("</svg>")]
    ticks = {
        label: float(x)
        for x, label in re.findall(r'<text class="tl-tick" x="([\d.]+)"[^>]*>(\d+)</text>', svg)
    }
    # The agent document's third bar is runs 46–50: five columns from its left edge.
    third = re.findall(
        r"<title>agent:web/agent.md: v3[^<]*</title>\s*<rect x=\"([\d.]+)\"[^>]*"
        r'width="([\d.]+)"',
        svg,
    )
    left, width = (float(value) for value in third[0])
    column = width / 5
    assert ticks["50"] == pytest.approx(left + 4.5 * column, abs=0.02)
    first = re.search(r'<rect x="([\d.]+)" y="[\d.]+" width', svg)
    assert ticks["1"] == pytest.approx(float(first.group(1)) + column / 2, abs=0.02)


def test_the_chart_has_a_legend(browse, reader, fifty_runs):
    html = browse(reader).get(URL).content.decode()
    legend = html[html.index('<ul class="card-body runs-legend') :]
    legend = legend[: legend.index("</ul>")]
    assert 'aria-label="Legend"' in legend
    assert "one colour per version" in legend and "unresolved" in legend
    assert "problems row" in legend


@pytest.mark.parametrize(
    ("params", "field"),
    [({"since": "yesterday"}, "since"), ({"limit": "0"}, "limit"), ({"limit": "10001"}, "limit")],
)
def test_a_bad_parameter_is_a_400_beside_its_field(browse, reader, project, params, field):
    response = browse(reader).get(URL, params)
    assert response.status_code == 400
    assert f'id="id_{field}_error"' in response.content.decode()


def test_an_outsider_gets_404(browse, outsider, other_tenant, project):
    assert browse(outsider).get(URL).status_code == 404


def test_the_project_page_and_the_records_list_link_to_it(browse, reader, project):
    client = browse(reader)
    assert f'href="{URL}"' in client.get("/t/acme/web/").content.decode()
    assert f'href="{URL}"' in client.get("/t/acme/web/bindings/").content.decode()


@pytest.mark.parametrize("count", [2, 25])
def test_the_runs_page_runs_the_same_queries_whatever_the_runs(
    browse, reader, tenant, project, writer, make_document, count
):
    make_document(project, "agent.md", "# Rules\n")
    make_document(project, "AGENTS.md", "# Agents\n")
    bind_runs(tenant, project, writer, count)
    client = browse(reader)
    client.get(URL)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(URL).status_code == 200
    # session + user + access + the window
    assert len(captured) == 4, [q["sql"] for q in captured]

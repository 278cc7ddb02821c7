"""The outcomes page (cohorts compared, the chart with its intervals) and the document
page's "canary vs production" block."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.services import labels as label_service
from tests.outcome_runs import cohort_of

pytestmark = pytest.mark.django_db

PAGE = "/t/acme/web/outcomes/"


@pytest.fixture
def split(project, reader):
    cohort_of(project, reader, label="canary", values=[True] * 40 + [False] * 10, prefix="c")
    cohort_of(project, reader, label="production", values=[True] * 30 + [False] * 20, prefix="p")


def test_the_page_draws_each_cohort_with_its_interval_and_verdict(browse, reader, split):
    response = browse(reader).get(f"{PAGE}?metric=task_success&by=label")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('class="oc-interval"') == 6  # a line and two ends per cohort
    assert html.count('class="oc-value"') == 2
    assert 'class="oc-baseline"' in html
    assert "canary: 80% of 50 runs, 95% interval 67% to 89%; better" in html
    rows = re.findall(r'<tr class="outcome-cohort">(.*?)</tr>', html, re.S)
    assert "canary" in rows[0] and "better" in rows[0] and "[0.670, 0.888]" in rows[0]
    assert "production" in rows[1] and "baseline" in rows[1]


def test_the_runs_page_links_to_it_and_its_default_question_is_task_success(browse, reader, split):
    runs = browse(reader).get("/t/acme/web/runs/").content.decode()
    assert f'href="{PAGE}"' in runs
    page = browse(reader).get(PAGE).content.decode()
    assert "task_success" in page and "better" in page


def test_a_bad_question_is_400_and_an_outsider_gets_404(
    browse, reader, outsider, other_tenant, split
):
    response = browse(reader).get(f"{PAGE}?metric=task_success&by=version")
    assert response.status_code == 400
    assert "`document` is required" in response.content.decode().replace("<code>", "`").replace(
        "</code>", "`"
    )
    assert browse(outsider).get(PAGE).status_code == 404


def test_the_page_reads_the_same_number_of_queries_whatever_the_runs(browse, reader, project):
    client = browse(reader)
    cohort_of(project, reader, label="canary", values=[True], prefix="a")
    client.get(PAGE)
    with CaptureQueriesContext(connection) as few:
        client.get(PAGE)
    cohort_of(project, reader, label="production", values=[False] * 40, prefix="b")
    with CaptureQueriesContext(connection) as many:
        client.get(PAGE)
    assert len(many) == len(few)


def test_a_canary_documents_page_shows_canary_vs_production(browse, reader, admin, agent_md, split):
    page = browse(reader).get("/t/acme/web/doc/agent.md").content.decode()
    assert "Canary vs production" not in page
    label_service.label_move(document=agent_md, name="canary", version=1, user=admin)
    page = browse(reader).get("/t/acme/web/doc/agent.md").content.decode()
    assert "Canary vs production" in page
    assert "canary: 80% of 50 runs" in page

"""Paged API answers past `AGENTDOCS_PAGINATION_COUNT_LIMIT`: `count` is the limit and
`count_exact` false, `next` still reaches every row, in the order and with the queries
of an exact count; `?page=last` is refused naming `page`."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.management.commands.seed_large_tenant import build_large_tenant
from agentdocs.models import Project
from agentdocs.services import documents as document_service
from agentdocs.services import tenancy as tenant_service

pytestmark = pytest.mark.django_db

LISTS = {
    "activity": "/api/v1/tenants/acme/activity/",
    "activity of documents": "/api/v1/tenants/acme/activity/?kind=document",
    "bindings": "/api/v1/tenants/acme/projects/web/bindings/",
    "history": "/api/v1/tenants/acme/projects/web/history/agent.md",
}


def _grow(tenant, admin, size: int) -> None:
    """web/agent.md up to `size` versions, `size` binding records more, and their events."""
    build_large_tenant(
        tenant=tenant, user=admin, projects=0, documents=0, versions=size, records=size
    )
    # The seed makes a project "big" for its documents: out of the way of the next call.
    Project.objects.filter(tenant=tenant, slug="big").update(slug=f"big{size}")


@pytest.fixture
def web(tenant, admin):
    project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
    document_service.document_create(project=project, path="agent.md", body="# R\n", user=admin)
    return project


def _url(name: str, **params) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return LISTS[name] + ("&" if "?" in LISTS[name] else "?") + query


def _follow(client, url: str) -> tuple[list, list[dict]]:
    """Every row reached from ``url`` by following `next`, and each page's answer."""
    rows, answers = [], []
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.json()
        answer = response.json()
        rows += answer["results"]
        answers.append(answer)
        url = answer["next"]
    return rows, answers


@pytest.mark.parametrize("name", list(LISTS))
def test_next_reaches_every_row_past_the_limit_in_the_same_order(
    api, reader, tenant, web, admin, settings, name
):
    _grow(tenant, admin, 12)
    client = api(reader)
    exact_rows, exact = _follow(client, _url(name, page_size=5))
    assert exact[0]["count"] == len(exact_rows) >= 12 and exact[0]["count_exact"] is True
    settings.AGENTDOCS_PAGINATION_COUNT_LIMIT = 5
    rows, answers = _follow(client, _url(name, page_size=5))
    assert rows == exact_rows
    assert len({str(row) for row in rows}) == len(rows)  # each once
    assert [(a["count"], a["count_exact"]) for a in answers] == [(5, False)] * len(answers)
    assert answers[0]["previous"] is None and answers[1]["previous"]
    assert list(answers[0]) == ["count", "count_exact", "next", "previous", "results"]
    # A page past the limit, asked for by number: read by offset.
    third = client.get(_url(name, page_size=5, page=3)).json()
    assert third["results"] == exact_rows[10:15]


@pytest.mark.parametrize("name", list(LISTS))
def test_the_last_page_is_refused_past_the_limit_and_a_page_past_the_end_as_before(
    api, reader, tenant, web, admin, settings, name
):
    _grow(tenant, admin, 12)
    client = api(reader)
    last = client.get(_url(name, page_size=5, page="last"))
    assert last.status_code == 200 and last.json()["next"] is None
    settings.AGENTDOCS_PAGINATION_COUNT_LIMIT = 5
    refused = client.get(_url(name, page_size=5, page="last"))
    assert refused.status_code == 404
    assert refused.json() == {
        "error": "not_found",
        "detail": "The last page is not known past 5 rows: the list holds more, which are "
        "not counted. Follow `next`, or ask for a page by number.",
        "field": "page",
    }
    past = client.get(_url(name, page_size=5, page=99))
    assert past.status_code == 404 and past.json()["field"] == "page"


@pytest.mark.parametrize("name", list(LISTS))
def test_a_page_runs_the_same_queries_at_both_sizes_counted_exactly_or_not(
    api, reader, tenant, web, admin, settings, name
):
    client = api(reader)
    counts = []
    for size, limit in ((12, 10_000), (30, 10_000), (None, 5), (60, 5)):
        if size:
            _grow(tenant, admin, size)
        settings.AGENTDOCS_PAGINATION_COUNT_LIMIT = limit
        for page in (1, 3):
            url = _url(name, page_size=5, page=page)
            client.get(url)  # the token's first use writes nothing afterwards
            with CaptureQueriesContext(connection) as queries:
                assert client.get(url).status_code == 200
            counts.append(len(queries))
    assert len(set(counts)) == 1, counts


@pytest.mark.parametrize("name", list(LISTS))
def test_another_tenants_user_gets_404(api, outsider, other_tenant, tenant, web, admin, name):
    _grow(tenant, admin, 3)
    response = api(outsider).get(LISTS[name])
    assert response.status_code == 404

"""The search page and the header's search box: results grouped by project, matches
marked in escaped snippets, the tenant's members only, constant queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.services import tenancy as tenant_service

URL = "/t/acme/-/search/"


@pytest.fixture
def two_projects(tenant, admin, project, make_document):
    api_project = tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    make_document(project, "agent.md", "Ship with the <b>blue</b> pipeline & smile.\n")
    make_document(project, "notes/pipeline.md", "About the pipeline.\n")
    make_document(api_project, "agent.md", "The api pipeline.\n")
    return api_project


def test_a_reader_sees_results_grouped_by_project_with_marked_escaped_snippets(
    browse, reader, two_projects
):
    response = browse(reader).get(URL, {"q": "pipeline"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "3 documents found" in html
    assert 'id="search-project-1"' in html and 'id="search-project-2"' in html
    assert 'href="/t/acme/web/doc/notes/pipeline.md"' in html
    assert 'href="/t/acme/api/doc/agent.md"' in html
    assert "<mark>pipeline</mark>" in html
    # The body's own markup is text on the page, never markup.
    assert "<b>blue</b>" not in html


def test_project_narrows_the_page(browse, reader, two_projects):
    html = browse(reader).get(URL, {"q": "pipeline", "project": "api"}).content.decode()
    assert "1 document found" in html
    assert "/t/acme/web/doc/" not in html
    assert "search every project" in html


def test_no_query_shows_the_form_and_an_overlong_one_is_a_400_saying_why(browse, reader, project):
    empty = browse(reader).get(URL)
    assert empty.status_code == 200
    assert b'id="search-q"' in empty.content
    long = browse(reader).get(URL, {"q": "x" * 201})
    assert long.status_code == 400
    assert b"at most 200" in long.content


def test_an_outsider_and_an_unknown_project_get_404(
    browse, outsider, reader, other_tenant, project
):
    assert browse(outsider).get(URL, {"q": "x"}).status_code == 404
    assert browse(reader).get(URL, {"q": "x", "project": "nope"}).status_code == 404


def test_the_header_search_box_is_on_a_tenants_pages_only(browse, reader, project):
    client = browse(reader)
    project_page = client.get("/t/acme/web/").content.decode()
    assert 'action="/t/acme/-/search/"' in project_page
    assert "data-search-shortcut" in project_page
    assert "data-search-shortcut" not in client.get("/").content.decode()


@pytest.mark.parametrize("count", [3, 60])
def test_the_search_page_runs_the_same_queries_whatever_the_matches(
    browse, reader, project, make_document, count
):
    for i in range(count):
        make_document(project, f"d{i}.md", f"shared words {i}\n")
    client = browse(reader)
    client.get(URL, {"q": "shared"})
    with CaptureQueriesContext(connection) as captured:
        assert client.get(URL, {"q": "shared"}).status_code == 200
    # session + user + access + count + page
    assert len(captured) == 5, [q["sql"] for q in captured]


def test_the_header_box_keeps_the_words_on_the_search_page_only(
    browse, reader, project, make_document
):
    make_document(project, "agent.md", "words\n")
    client = browse(reader)
    search = client.get(URL, {"q": "words"}).content.decode()
    assert 'id="topbar-search-q" name="q" value="words"' in search
    history = client.get("/t/acme/web/history/agent.md", {"q": "words"}).content.decode()
    assert 'id="topbar-search-q" name="q" value=""' in history

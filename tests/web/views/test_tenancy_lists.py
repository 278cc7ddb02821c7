"""The project page pages its documents and its deleted documents, the tenant page its
projects: a page shows at most 100 rows, the total count and links to the others."""

from __future__ import annotations

import re

import pytest

from agentdocs.services import documents as document_service
from agentdocs.services import tenancy as tenant_service

pytestmark = pytest.mark.django_db


def _linked_paths(page: str) -> list[str]:
    return re.findall(r'<a class="path" href="/t/acme/web/doc/([^"]+)"', page)


def _deleted_paths(page: str) -> list[str]:
    return re.findall(r'<a class="path" href="/t/acme/web/history/([^"]+)"', page)


@pytest.fixture
def many_documents(project, admin, make_document):
    """250 live documents and 120 deleted ones."""
    for n in range(250):
        make_document(project, f"docs/{n:03d}.md", f"# {n}\n")
    for n in range(120):
        document = make_document(project, f"old/{n:03d}.md", f"# {n}\n")
        document_service.document_delete(document=document, base_version=1, user=admin)


def test_the_project_page_shows_100_documents_a_page_with_the_total(browse, reader, many_documents):
    client = browse(reader)
    first = client.get("/t/acme/web/").content.decode()
    assert _linked_paths(first) == [f"docs/{n:03d}.md" for n in range(100)]
    assert "250 documents · 1–100 shown" in first
    assert "Page 1 of 3" in first
    assert 'href="?page=2">Next</a>' in first and ">Previous</a>" not in first.split("Page 1")[0]
    third = client.get("/t/acme/web/?page=3").content.decode()
    assert _linked_paths(third) == [f"docs/{n:03d}.md" for n in range(200, 250)]
    assert 'href="?page=2">Previous</a>' in third and 'href="?page=4"' not in third


def test_deleted_documents_are_paged_on_their_own(browse, reader, many_documents):
    client = browse(reader)
    first = client.get("/t/acme/web/").content.decode()
    assert _deleted_paths(first) == [f"old/{n:03d}.md" for n in range(100)]
    assert "120 · 1–100 shown · restorable" in first
    assert '<details class="card">' in first  # closed until its pages are used
    second = client.get("/t/acme/web/?page=2&deleted_page=2").content.decode()
    assert _deleted_paths(second) == [f"old/{n:03d}.md" for n in range(100, 120)]
    assert _linked_paths(second) == [f"docs/{n:03d}.md" for n in range(100, 200)]
    assert '<details class="card" open>' in second
    # Each list's links keep the other list's page.
    assert 'href="?page=2&amp;deleted_page=1">Previous</a>' in second
    assert 'href="?page=3&amp;deleted_page=2">Next</a>' in second


@pytest.fixture
def two_pages(project, make_document):
    for n in range(101):
        make_document(project, f"docs/{n:03d}.md", f"# {n}\n")


@pytest.mark.parametrize(
    ("query", "first_path"),
    [
        ("page=0", "docs/000.md"),
        ("page=-1", "docs/000.md"),
        ("page=abc", "docs/000.md"),
        ("page=" + "9" * 5000, "docs/000.md"),
        ("page=99999", "docs/100.md"),
    ],
)
def test_a_page_number_that_is_not_one_shows_the_first_or_last_page(
    browse, reader, two_pages, query, first_path
):
    response = browse(reader).get(f"/t/acme/web/?{query}")
    assert response.status_code == 200
    assert _linked_paths(response.content.decode())[0] == first_path


def test_a_small_project_has_no_page_links(browse, reader, project, make_document):
    make_document(project, "agent.md", "# Rules\n")
    page = browse(reader).get("/t/acme/web/").content.decode()
    assert "1 document<" in page and "Page 1 of" not in page


def test_the_tenant_page_shows_100_projects_a_page(browse, reader, tenant, admin):
    for n in range(130):
        tenant_service.project_create(tenant=tenant, slug=f"p{n:03d}", name=f"P {n}", user=admin)
    client = browse(reader)
    first = client.get("/t/acme/").content.decode()
    assert "130 projects · 1–100 shown" in first and "Page 1 of 2" in first
    assert 'href="/t/acme/p099/"' in first and 'href="/t/acme/p100/"' not in first
    second = client.get("/t/acme/?page=2").content.decode()
    assert 'href="/t/acme/p100/"' in second and 'href="/t/acme/p129/"' in second
    assert 'href="/t/acme/p099/"' not in second


def test_outsiders_get_404_on_every_page_of_the_lists(browse, outsider, other_tenant, project):
    client = browse(outsider)
    assert client.get("/t/acme/web/?page=2").status_code == 404
    assert client.get("/t/acme/?page=2").status_code == 404


def test_the_recipe_list_is_paged(browse, reader, tenant, admin, settings):
    from agentdocs.services import policy as policy_service
    from agentdocs.web.views import policy as recipe_views

    for n in range(5):
        policy_service.recipe_create(
            tenant=tenant, name=f"r{n}", params={}, profiles={}, user=admin
        )
    settings.DEBUG = False
    recipe_views.RECIPES_PER_PAGE, before = 2, recipe_views.RECIPES_PER_PAGE
    try:
        client = browse(reader)
        first = client.get("/t/acme/-/recipes/").content.decode()
        last = client.get("/t/acme/-/recipes/?page=3").content.decode()
    finally:
        recipe_views.RECIPES_PER_PAGE = before
    assert re.findall(r"<strong>(r\d)</strong>", first) == ["r0", "r1"]
    assert "Page 1 of 3" in first and 'href="?page=2">Next</a>' in first
    assert re.findall(r"<strong>(r\d)</strong>", last) == ["r4"]


def test_the_token_list_is_paged(browse, writer, tenant):
    from agentdocs.services import tokens as token_service
    from agentdocs.web.views import tokens as token_views

    for n in range(3):
        token_service.token_create(user=writer, name=f"token-{n}", scopes=["read"])
    token_views.TOKENS_PER_PAGE, before = 2, token_views.TOKENS_PER_PAGE
    try:
        page = browse(writer).get("/tokens/").content.decode()
    finally:
        token_views.TOKENS_PER_PAGE = before
    assert len(re.findall(r"<td>token-\d</td>", page)) == 2
    assert "Page 1 of 2" in page


def test_the_settings_pages_are_paged(browse, reader, tenant, project, admin):
    from agentdocs.services import policy as policy_service
    from agentdocs.web.views import policy as setting_views

    for n in range(3):
        policy_service.setting_set(
            tenant=tenant, project=None, key=f"memory.k{n}", value="v", user=admin
        )
        policy_service.setting_set(
            tenant=tenant, project=project, key=f"memory.p{n}", value="v", user=admin
        )
    setting_views.SETTINGS_PER_PAGE, before = 2, setting_views.SETTINGS_PER_PAGE
    try:
        client = browse(reader)
        tenant_page = client.get("/t/acme/-/settings/").content.decode()
        project_page = client.get("/t/acme/web/settings/?in_force_page=3").content.decode()
    finally:
        setting_views.SETTINGS_PER_PAGE = before
    assert re.findall(r'<td class="path">(memory\.k\d)</td>', tenant_page) == [
        "memory.k0",
        "memory.k1",
    ]
    assert "Page 1 of 2" in tenant_page
    # In force: six keys, page 3 of 3 holds the last two (sorted by key).
    assert "Page 3 of 3" in project_page
    assert 'href="?in_force_page=2">Previous</a>' in project_page


def test_the_home_page_shows_a_tenants_first_projects_and_links_to_all(
    browse, reader, tenant, admin
):
    for n in range(14):
        tenant_service.project_create(tenant=tenant, slug=f"p{n:02d}", name=f"P{n:02d}", user=admin)
    page = browse(reader).get("/").content.decode()
    tiles = re.findall(r'<div class="slug">acme/([^<]+)</div>', page)
    assert len(tiles) == 12 and tiles == sorted(tiles)
    assert "All 15 projects of Acme" in page  # 14 and _vance


def test_past_the_count_limit_the_counts_say_more_than(browse, reader, many_documents, settings):
    settings.AGENTDOCS_PAGINATION_COUNT_LIMIT = 100
    client = browse(reader)
    first = client.get("/t/acme/web/").content.decode()
    assert "more than 100 documents · 1–100 shown" in first
    assert "more than 100 · 1–100 shown · restorable" in first
    assert "Page 1 of 2 or more" in first and 'href="?page=2">Next</a>' in first
    # The third page is past the limit: read by offset, and it is the end.
    third = client.get("/t/acme/web/?page=3").content.decode()
    assert _linked_paths(third) == [f"docs/{n:03d}.md" for n in range(200, 250)]
    assert "201–250 shown" in third and 'href="?page=4"' not in third
    assert "Page 3 of 3" in third  # the last: now the number of pages is known

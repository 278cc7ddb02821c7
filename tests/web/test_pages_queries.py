"""Every page runs a fixed number of SQL queries, however many versions a document has.

Each page is counted with two versions of every document, then 28 more versions
are written and the page must run exactly as many queries again. The ceilings
below (which include the session and the user every signed-in page loads) catch
a page that starts querying more even when the count stays flat.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.models import Document
from agentdocs.services import documents as svc
from agentdocs.services import policy as policy_service

pytestmark = pytest.mark.django_db

PAGES = {
    "/": 6,  # the tenants (paged) with their first projects, and the pending invitations
    "/t/acme/": 9,  # and the change requests waiting, disabled webhooks, repositories
    "/t/acme/web/": 9,
    "/t/acme/web/doc/agent.md": 7,  # with the document's labels and its cost (the render rows)
    "/t/acme/web/doc/agent.md?version=1": 7,
    "/t/acme/web/edit/agent.md": 6,  # and the review.* settings (is it protected?)
    "/t/acme/web/history/agent.md": 6,  # with the document's labels
    "/t/acme/web/diff/agent.md": 6,
    "/t/acme/web/diff/agent.md?from=1&to=2": 6,
    "/t/acme/web/revert/agent.md?version=1": 5,
    "/t/acme/web/memory-block/": 6,  # with the label names in use (the label select)
    "/t/acme/web/memory-block/?recipe=coder": 7,
    "/t/acme/_vance/doc/agent.md": 7,
    "/t/acme/_vance/edit/agent.md": 6,
    "/t/acme/web/settings/": 5,
    "/t/acme/-/settings/": 4,
    "/t/acme/-/recipes/": 5,  # the page count of the paged list
    "/t/acme/-/recipes/coder/": 6,  # with the agent-document picker's paths (admins)
}


def _write_versions(document: Document, count: int, users: tuple) -> Document:
    for _ in range(count):
        version = document.version + 1
        document = svc.document_write(
            document=document,
            body=f"# Rules\n\n- version {version}\n",
            base_version=document.version,
            user=users[version % 2],
            reason=f"change {version}",
        ).document
    return document


@pytest.fixture
def documents(admin, writer, tenant, project, vance, make_document) -> list[Document]:
    """agent.md in `web` and in `_vance` at two versions, plus context, a recipe, a setting."""
    made = []
    for target in (project, vance):
        document = make_document(target, "agent.md", "# Rules\n\n- version 1\n", user=writer)
        made.append(_write_versions(document, 1, (admin, writer)))
    make_document(project, ".AGENTS/overview.md", "# Overview\n")
    policy_service.recipe_create(
        tenant=tenant, name="coder", params={}, profiles={"cli": {}}, user=admin
    )
    policy_service.setting_set(tenant=tenant, project=None, key="memory.a", value="1", user=admin)
    return made


@pytest.mark.parametrize("url", list(PAGES))
def test_page_query_count_is_the_same_with_2_and_30_versions(
    browse, admin, writer, documents, django_assert_num_queries, url, settings
):
    # Every request reads the database, as on a cold render cache.
    settings.AGENTDOCS_RENDER_CACHE = False
    client = browse(admin)
    client.get(url)  # the first request of a session may touch the session row
    with CaptureQueriesContext(connection) as two_versions:
        assert client.get(url).status_code == 200
    assert len(two_versions) <= PAGES[url], [query["sql"] for query in two_versions]

    for document in documents:
        _write_versions(document, 28, (admin, writer))
    with django_assert_num_queries(len(two_versions)):
        assert client.get(url).status_code == 200


@pytest.mark.parametrize(
    ("url", "make_rows"),
    [
        ("/t/acme/web/", "documents"),
        ("/t/acme/", "projects"),
    ],
)
def test_list_pages_run_the_same_queries_with_3_and_300_rows(
    browse,
    admin,
    tenant,
    project,
    make_document,
    django_assert_num_queries,
    url,
    make_rows,
    settings,
):
    """The project page pages its documents (live and deleted), the tenant page its
    projects: 300 rows cost the queries 3 do."""
    settings.AGENTDOCS_RENDER_CACHE = False  # both counts on a cold render cache
    from agentdocs.services import tenancy as tenant_service

    def add(start: int, stop: int) -> None:
        for n in range(start, stop):
            if make_rows == "documents":
                document = make_document(project, f"docs/{n:03d}.md", f"# {n}\n")
                if n % 2:
                    svc.document_delete(
                        document=document, base_version=1, user=admin, reason="gone"
                    )
            else:
                tenant_service.project_create(
                    tenant=tenant, slug=f"p{n:03d}", name=f"P {n}", user=admin
                )

    client = browse(admin)
    add(0, 3)
    client.get(url)
    with CaptureQueriesContext(connection) as few:
        assert client.get(url).status_code == 200
    add(3, 300)
    with django_assert_num_queries(len(few)):
        response = client.get(url)
    assert response.status_code == 200
    assert b"Page 1 of " in response.content

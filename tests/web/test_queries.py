"""Every page runs a fixed number of SQL queries, however many versions a document has.

The counts include the two every signed-in page pays (the session and the user).
"""

from __future__ import annotations

import pytest

from agentdocs.services import documents as svc
from agentdocs.services import policy as policy_service

pytestmark = pytest.mark.django_db

PAGES = {
    "/": 4,
    "/t/acme/": 5,
    "/t/acme/web/": 8,
    "/t/acme/web/doc/agent.md": 5,
    "/t/acme/web/doc/agent.md?version=1": 6,
    "/t/acme/web/edit/agent.md": 5,
    "/t/acme/web/history/agent.md": 5,
    "/t/acme/web/diff/agent.md": 6,
    "/t/acme/web/diff/agent.md?from=1&to=2": 6,
    "/t/acme/web/revert/agent.md?version=1": 5,
    "/t/acme/web/memory-block/": 6,
    "/t/acme/web/memory-block/?recipe=coder": 7,
    "/t/acme/_vance/doc/agent.md": 5,
    "/t/acme/_vance/edit/agent.md": 5,
    "/t/acme/web/settings/": 5,
    "/t/acme/-/settings/": 4,
    "/t/acme/-/recipes/": 4,
    "/t/acme/-/recipes/coder/": 5,
}


@pytest.fixture(params=[2, 30], ids=lambda n: f"{n}-versions")
def versions(request, admin, writer, tenant, project, vance, make_document) -> int:
    """agent.md in `web` and in `_vance` with this many versions, plus context and a recipe."""
    for target in (project, vance):
        document = make_document(target, "agent.md", "# Rules\n\n- version 1\n", user=writer)
        for version in range(2, request.param + 1):
            document = svc.document_write(
                document=document,
                body=f"# Rules\n\n- version {version}\n",
                base_version=version - 1,
                user=admin if version % 2 else writer,
                reason=f"change {version}",
            )
    make_document(project, ".AGENTS/overview.md", "# Overview\n")
    policy_service.recipe_create(
        tenant=tenant, name="coder", params={}, profiles={"cli": {}}, user=admin
    )
    policy_service.setting_set(tenant=tenant, project=None, key="memory.a", value="1", user=admin)
    return request.param


@pytest.mark.parametrize("url", list(PAGES))
def test_page_query_count_does_not_grow_with_versions(
    browse, admin, versions, django_assert_num_queries, url
):
    client = browse(admin)
    with django_assert_num_queries(PAGES[url]):
        response = client.get(url)
    assert response.status_code == 200, url

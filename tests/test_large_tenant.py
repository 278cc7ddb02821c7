"""A large tenant runs the same queries as a small one on every hot endpoint.

Two tenants are built the same way (`seed_large_tenant`'s bulk inserts), one with 160
and one with 600 of each: projects, `.AGENTS/` documents in one project, versions of
`web/agent.md` and binding records (enough in the small one for every page asked
for); each endpoint must run exactly as many queries in both, under a ceiling.
`bench/large_tenant.py` times the same endpoints at the issue's sizes (1,000
projects, 10,000 documents and versions, 100,000 records).
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from agentdocs.management.commands.seed_large_tenant import build_large_tenant
from agentdocs.models import Role
from agentdocs.services import documents as document_service
from agentdocs.services import tenancy as tenant_service
from tests.conftest import api_token_key

pytestmark = pytest.mark.django_db

SMALL, LARGE = 160, 600


def _tenant(slug: str, admin, reader, size: int) -> dict:
    tenant = tenant_service.tenant_create(slug=slug, name=slug, user=admin)
    tenant_service.membership_set(
        tenant=tenant, username=reader.username, role=Role.WRITER, actor=admin
    )
    web = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
    document_service.document_create(project=web, path="agent.md", body="# Rules\n", user=admin)
    summary = build_large_tenant(
        tenant=tenant, user=admin, projects=size, documents=size, versions=size, records=size
    )
    return {"slug": slug, "record": summary["template_record"]}


@pytest.fixture(scope="module")
def _built(django_db_setup, django_db_blocker):
    """The two tenants and their reader, built once for the tests of this module that
    a worker runs one after another (some 5 s each time), in a transaction rolled back
    after them. Each test runs in a savepoint inside it, as a Django `TestCase` runs
    inside what `setUpTestData` made: what one test writes is gone for the next."""
    with django_db_blocker.unblock():
        built = transaction.atomic()
        built.__enter__()
        try:
            users = get_user_model().objects
            admin = users.create_user(username="alice", password="alice-password")
            reader = users.create_user(username="carol", password="carol-password")
            data = {
                "reader": reader,
                "small": _tenant("small", admin, reader, SMALL),
                "large": _tenant("large", admin, reader, LARGE),
            }
        except BaseException:
            transaction.set_rollback(True)
            built.__exit__(None, None, None)
            raise
    yield data
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        built.__exit__(None, None, None)


@pytest.fixture
def tenants(_built, settings):
    settings.AGENTDOCS_RENDER_CACHE = False  # count the reads a cold render makes
    settings.AGENTDOCS_RATE_LIMITS_ENABLED = False
    return _built


@pytest.fixture
def reader(tenants):
    return tenants["reader"]


# (method, URL template, API or page, query ceiling)
ENDPOINTS = {
    "render": ("post", "/api/v1/tenants/{t}/projects/web/memory-block/", "api", 3),
    "document": ("get", "/api/v1/tenants/{t}/projects/web/documents/agent.md", "api", 2),
    "history API": ("get", "/api/v1/tenants/{t}/projects/web/history/agent.md", "api", 4),
    "history API, page 3": (
        "get",
        "/api/v1/tenants/{t}/projects/web/history/agent.md?page=3&page_size=20",
        "api",
        4,
    ),
    "history page": ("get", "/t/{t}/web/history/agent.md", "page", 6),
    "history page 3": ("get", "/t/{t}/web/history/agent.md?page=3", "page", 6),
    "project page": ("get", "/t/{t}/big/", "page", 10),
    "project page 2": ("get", "/t/{t}/big/?page=2", "page", 10),
    "tenant page": ("get", "/t/{t}/", "page", 8),  # with the repositories counted
    "bind": ("post", "/api/v1/tenants/{t}/projects/web/bindings/", "api", 12),
    "outdated": ("get", "/api/v1/tenants/{t}/projects/web/bindings/{r}/outdated", "api", 5),
    "bindings list": ("get", "/api/v1/tenants/{t}/projects/web/bindings/", "api", 4),
    "render of big": ("post", "/api/v1/tenants/{t}/projects/big/memory-block/", "api", 3),
    "activity API, project": ("get", "/api/v1/tenants/{t}/activity/?project=web", "api", 4),
    "activity API, bindings": ("get", "/api/v1/tenants/{t}/activity/?kind=binding", "api", 4),
    "search": ("get", "/api/v1/tenants/{t}/search/?q=many", "api", 4),
    "search, project": ("get", "/api/v1/tenants/{t}/search/?q=many&project=big", "api", 4),
    "bindings list, page 3": ("get", "/api/v1/tenants/{t}/projects/web/bindings/?page=3", "api", 4),
    "history API, last page": (
        "get",
        "/api/v1/tenants/{t}/projects/web/history/agent.md?page=last&page_size=20",
        "api",
        4,
    ),
    # Each version after the first holds "revision": a bounded search reads as many
    # versions in both tenants.
    "history API ?q=": (
        "get",
        "/api/v1/tenants/{t}/projects/web/history/agent.md?q=revision",
        "api",
        4,
    ),
    "history page ?q=": ("get", "/t/{t}/web/history/agent.md?q=revision", "page", 8),
    "export of big": ("get", "/api/v1/tenants/{t}/projects/big/export/?format=cursor", "api", 4),
    "export page of big": ("get", "/t/{t}/big/export/?format=cursor", "page", 8),
    "activity API": ("get", "/api/v1/tenants/{t}/activity/", "api", 4),
    "activity API, documents": ("get", "/api/v1/tenants/{t}/activity/?kind=document", "api", 4),
    "activity API, page 3": ("get", "/api/v1/tenants/{t}/activity/?page=3", "api", 4),
    "activity page": ("get", "/t/{t}/-/activity/", "page", 7),
    "activity page 3": ("get", "/t/{t}/-/activity/?page=3", "page", 7),
}
BODIES = {
    "render": {"process": "turns"},
    "render of big": {"process": "turns"},
    "bind": {"process": "run", "manifest": {"local": ["agent.md"]}},
}


def _request(name: str, tenant: dict, api: APIClient, page: Client) -> tuple[int, int]:
    method, template, kind, _ = ENDPOINTS[name]
    url = template.format(t=tenant["slug"], r=tenant["record"])
    client = api if kind == "api" else page
    send = getattr(client, method)
    kwargs = {"format": "json"} if kind == "api" and method == "post" else {}
    body = BODIES.get(name)
    send(url, body, **kwargs) if body else send(url)  # the first request warms up
    with CaptureQueriesContext(connection) as queries:
        response = send(url, body, **kwargs) if body else send(url)
    assert response.status_code in (200, 201), (name, response.status_code)
    return len(queries), response.status_code


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_a_large_tenant_runs_the_same_queries_as_a_small_one(tenants, reader, name):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token_key(reader)}")
    page = Client()
    page.force_login(reader)
    small, _ = _request(name, tenants["small"], api, page)
    large, _ = _request(name, tenants["large"], api, page)
    assert small == large, f"{name}: {small} queries small, {large} large"
    assert large <= ENDPOINTS[name][3], f"{name}: {large} queries"


def test_the_history_api_pages_the_versions(tenants, reader):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token_key(reader)}")
    data = api.get("/api/v1/tenants/large/projects/web/history/agent.md").json()
    assert data["count"] == LARGE and len(data["results"]) == 50
    assert data["results"][0]["version"] == LARGE


LISTS = [
    name
    for name in ENDPOINTS
    if name.startswith(("history API", "bindings list", "activity")) and "last" not in name
]


@pytest.mark.parametrize("name", LISTS)
def test_a_list_counted_exactly_and_one_counted_up_to_the_limit_run_the_same_queries(
    tenants, reader, settings, name
):
    # Between the sizes: the small tenant's versions and records are counted exactly,
    # the large one's only up to the limit (its events, both of them).
    settings.AGENTDOCS_PAGINATION_COUNT_LIMIT = 400
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token_key(reader)}")
    page = Client()
    page.force_login(reader)
    small, _ = _request(name, tenants["small"], api, page)
    large, _ = _request(name, tenants["large"], api, page)
    assert small == large, f"{name}: {small} queries small, {large} large"


def test_past_the_limit_the_history_api_says_its_count_is_a_bound(tenants, reader, settings):
    settings.AGENTDOCS_PAGINATION_COUNT_LIMIT = 400
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token_key(reader)}")
    small = api.get("/api/v1/tenants/small/projects/web/history/agent.md").json()
    large = api.get("/api/v1/tenants/large/projects/web/history/agent.md").json()
    assert (small["count"], small["count_exact"]) == (SMALL, True)
    assert (large["count"], large["count_exact"]) == (400, False)
    last = api.get("/api/v1/tenants/large/projects/web/history/agent.md?page=12").json()
    assert [row["version"] for row in last["results"]] == list(range(50, 0, -1))
    assert last["next"] is None

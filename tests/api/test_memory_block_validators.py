"""Conditional GETs answered from a cached validator: the Memory Block preview and a
document with `If-None-Match` cost the access check and one cache round trip, never
a render or a document read, and are never a request behind a write or a revocation.

The render cache is switched on whatever backend the run has (the local-memory cache
in-process, Redis when REDIS_URL is set); the threaded proofs need PostgreSQL.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.core.cache import cache
from django.db import connection, connections
from rest_framework.test import APIClient

from agentdocs.models import ApiToken
from agentdocs.selectors import render_cache as render_cache_reads
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.services import render_cache
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service
from tests.conftest import api_token_key, need_service

pytestmark = pytest.mark.django_db

PREVIEW = "/api/v1/tenants/acme/projects/web/memory-block/"
DOCUMENT = "/api/v1/tenants/acme/projects/web/documents/.AGENTS/overview.md"


@pytest.fixture(autouse=True)
def render_cache_on(settings):
    settings.AGENTDOCS_RENDER_CACHE = True


@pytest.fixture
def documents(project, vance, make_document):
    make_document(vance, "agent.md", "# House rules\n- be kind\n")
    make_document(project, ".AGENTS/overview.md", "What this project is.\n")


def _drop_cached_rows(project) -> None:
    """Forget the preview's cached rows, so a render would have to query again."""
    cache.delete(
        render_cache_reads.render_rows_key(
            tenant_id=project.tenant_id, project_id=project.pk, recipe=None
        )
    )


def test_a_conditional_preview_is_answered_without_rendering(
    api, reader, project, documents, django_assert_num_queries
):
    client = api(reader)
    etag = client.get(PREVIEW)["ETag"]
    assert client.get(PREVIEW, HTTP_IF_NONE_MATCH=etag).status_code == 304  # stores it
    _drop_cached_rows(project)
    # One query: the token with the caller's access. A render would read its rows again.
    with django_assert_num_queries(1):
        response = client.get(PREVIEW, HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304 and response["ETag"] == etag
    assert response.content == b""


def test_a_conditional_document_get_reads_only_the_access(
    api, reader, documents, django_assert_num_queries
):
    client = api(reader)
    etag = client.get(DOCUMENT)["ETag"]
    with django_assert_num_queries(2):  # access, then the document (stores the validator)
        assert client.get(DOCUMENT, HTTP_IF_NONE_MATCH=etag).status_code == 304
    with django_assert_num_queries(1):
        response = client.get(DOCUMENT, HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304 and response["ETag"] == etag


@pytest.mark.parametrize("documents_in_project", [1, 40])
def test_the_conditional_gets_query_count_does_not_grow(
    api, reader, project, make_document, documents_in_project, django_assert_num_queries
):
    make_document(project, ".AGENTS/overview.md", "What this project is.\n")
    for n in range(documents_in_project):
        make_document(project, f".AGENTS/doc{n:03}.md", f"context {n}\n")
    client = api(reader)
    preview_etag = client.get(PREVIEW)["ETag"]
    document_etag = client.get(DOCUMENT)["ETag"]
    client.get(PREVIEW, HTTP_IF_NONE_MATCH=preview_etag)
    client.get(DOCUMENT, HTTP_IF_NONE_MATCH=document_etag)
    with django_assert_num_queries(1):
        assert client.get(PREVIEW, HTTP_IF_NONE_MATCH=preview_etag).status_code == 304
    with django_assert_num_queries(1):
        assert client.get(DOCUMENT, HTTP_IF_NONE_MATCH=document_etag).status_code == 304


def _warm(client: APIClient, url: str, **headers: str) -> str:
    etag = client.get(url, **headers)["ETag"]
    assert client.get(url, HTTP_IF_NONE_MATCH=etag, **headers).status_code == 304
    return etag


def _changes(project, vance, tenant, admin):
    """Every kind of write a preview reads, each as a callable."""

    def project_document():
        document = document_service.document_create(
            project=project, path=".AGENTS/new.md", body="new context\n", user=admin
        )
        return document

    def vance_document():
        current = vance.documents.get(path="agent.md")
        document_service.document_write(
            document=current, body="# House rules\n- be brief\n", base_version=1, user=admin
        )

    def tenant_setting():
        policy_service.setting_set(
            tenant=tenant, project=None, key="memory.tone", value="terse", user=admin
        )

    def project_setting():
        policy_service.setting_set(
            tenant=tenant, project=project, key="memory.tone", value="warm", user=admin
        )

    return {
        "project document": project_document,
        "_vance document": vance_document,
        "tenant setting": tenant_setting,
        "project setting": project_setting,
    }


@pytest.mark.parametrize(
    "change", ["project document", "_vance document", "tenant setting", "project setting"]
)
@pytest.mark.parametrize("accept", ["application/json", "text/plain"])
def test_every_render_input_write_is_in_the_next_conditional_preview(
    api, reader, admin, tenant, project, vance, documents, change, accept
):
    client = api(reader)
    etag = _warm(client, PREVIEW, HTTP_ACCEPT=accept)
    _changes(project, vance, tenant, admin)[change]()
    response = client.get(PREVIEW, HTTP_IF_NONE_MATCH=etag, HTTP_ACCEPT=accept)
    assert response.status_code == 200 and response["ETag"] != etag
    again = client.get(PREVIEW, HTTP_IF_NONE_MATCH=response["ETag"], HTTP_ACCEPT=accept)
    assert again.status_code == 304


def test_recipe_writes_are_in_the_next_conditional_preview(api, reader, admin, tenant, documents):
    recipe = policy_service.recipe_create(
        tenant=tenant, name="coder", params={}, profiles={"cli": {}}, user=admin
    )
    client = api(reader)
    url = f"{PREVIEW}?recipe=coder&profile=cli"
    etag = _warm(client, url)
    policy_service.recipe_update(
        recipe=recipe, params={"agentDocument": ""}, profiles={"cli": {}}, user=admin
    )
    changed = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    policy_service.recipe_delete(recipe=recipe, user=admin)
    assert client.get(url, HTTP_IF_NONE_MATCH=changed["ETag"]).status_code == 404


def test_each_recipe_profile_and_representation_has_its_own_validator(
    api, reader, admin, tenant, documents
):
    policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={"agentDocument": ""},
        profiles={"cli": {}},
        user=admin,
    )
    client = api(reader)
    plain = _warm(client, PREVIEW)
    with_recipe = _warm(client, f"{PREVIEW}?recipe=coder")
    as_text = _warm(client, PREVIEW, HTTP_ACCEPT="text/plain")
    assert len({plain, with_recipe, as_text}) == 3
    # Another request's ETag is never taken for this one's.
    assert client.get(PREVIEW, HTTP_IF_NONE_MATCH=with_recipe).status_code == 200
    assert client.get(f"{PREVIEW}?recipe=coder", HTTP_IF_NONE_MATCH=plain).status_code == 200


def test_a_write_that_changes_nothing_rendered_still_answers_304(
    api, reader, admin, project, documents, make_document
):
    client = api(reader)
    etag = _warm(client, PREVIEW)
    make_document(project, "notes/todo.md", "not read by a render\n")  # bumps the generation
    assert client.get(PREVIEW, HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_a_provider_write_retires_the_tenants_validators(api, reader, admin, tenant, documents):
    client = api(reader)
    _warm(client, PREVIEW)
    before = render_cache.validator(tenant_id=tenant.pk, inputs=("x",)).generation
    provider_service.provider_set(
        tenant=tenant, name="house", project_slug="web", path="agent.md", user=admin
    )
    assert render_cache.validator(tenant_id=tenant.pk, inputs=("x",)).generation != before


@pytest.mark.parametrize("how", ["write", "delete"])
def test_document_writes_are_in_the_next_conditional_get(
    api, reader, writer, project, documents, how
):
    client = api(reader)
    etag = _warm(client, DOCUMENT)
    current = project.documents.get(path=".AGENTS/overview.md")
    if how == "write":
        document_service.document_write(
            document=current, body="What it is now.\n", base_version=1, user=writer
        )
        response = client.get(DOCUMENT, HTTP_IF_NONE_MATCH=etag)
        assert response.status_code == 200 and response.json()["version"] == 2
        assert response["ETag"] != etag
    else:
        document_service.document_delete(document=current, base_version=1, user=writer)
        assert client.get(DOCUMENT, HTTP_IF_NONE_MATCH=etag).status_code == 404


def test_a_document_validator_is_per_path_and_project(
    api, reader, project, tenant, admin, documents, make_document
):
    other = tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    make_document(other, ".AGENTS/overview.md", "What this project is.\n")  # the same ETag
    client = api(reader)
    etag = _warm(client, DOCUMENT)
    assert client.get(f"{DOCUMENT}x", HTTP_IF_NONE_MATCH=etag).status_code == 404
    in_other = client.get(DOCUMENT.replace("/web/", "/api/"), HTTP_IF_NONE_MATCH=etag)
    assert in_other.status_code == 304  # its own validator, read from its own row
    missing = "/api/v1/tenants/acme/projects/api/documents/missing.md"
    assert client.get(missing, HTTP_IF_NONE_MATCH=etag).status_code == 404


def test_outsiders_get_404_whatever_etag_they_send(api, reader, outsider, other_tenant, documents):
    preview_etag = _warm(api(reader), PREVIEW)
    document_etag = _warm(api(reader), DOCUMENT)
    stranger = api(outsider)
    assert stranger.get(PREVIEW, HTTP_IF_NONE_MATCH=preview_etag).status_code == 404
    assert stranger.get(DOCUMENT, HTTP_IF_NONE_MATCH=document_etag).status_code == 404


def test_a_revoked_token_and_a_removed_member_are_refused_on_the_next_request(
    reader, writer, admin, tenant, documents
):
    key = api_token_key(reader)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    preview_etag = _warm(client, PREVIEW)
    document_etag = _warm(client, DOCUMENT)
    token = ApiToken.objects.get(user=reader)
    token_service.token_revoke(token=token, actor=admin)
    assert client.get(PREVIEW, HTTP_IF_NONE_MATCH=preview_etag).status_code == 401
    assert client.get(DOCUMENT, HTTP_IF_NONE_MATCH=document_etag).status_code == 401

    member = APIClient()
    member.credentials(HTTP_AUTHORIZATION=f"Token {api_token_key(writer)}")
    _warm(member, PREVIEW)
    _warm(member, DOCUMENT)
    tenant_service.membership_remove(tenant=tenant, username=writer.username, actor=admin)
    assert member.get(PREVIEW, HTTP_IF_NONE_MATCH=preview_etag).status_code == 404
    assert member.get(DOCUMENT, HTTP_IF_NONE_MATCH=document_etag).status_code == 404


def test_a_signed_in_session_is_checked_too(client, reader, tenant, admin, documents):
    client.force_login(reader)
    etag = _warm(client, PREVIEW)
    tenant_service.membership_remove(tenant=tenant, username=reader.username, actor=admin)
    assert client.get(PREVIEW, HTTP_IF_NONE_MATCH=etag).status_code == 404


def test_with_the_render_cache_off_conditional_gets_still_work(
    api, reader, writer, project, documents, settings
):
    settings.AGENTDOCS_RENDER_CACHE = False  # a cache that is not shared
    client = api(reader)
    preview_etag = _warm(client, PREVIEW)
    document_etag = _warm(client, DOCUMENT)
    current = project.documents.get(path=".AGENTS/overview.md")
    document_service.document_write(
        document=current, body="What it is now.\n", base_version=1, user=writer
    )
    assert client.get(PREVIEW, HTTP_IF_NONE_MATCH=preview_etag).status_code == 200
    assert client.get(DOCUMENT, HTTP_IF_NONE_MATCH=document_etag).status_code == 200


def test_the_build_stamp_follows_the_bundled_defaults(settings, tmp_path):
    render_cache_reads.build_stamp.cache_clear()
    try:
        shipped = render_cache_reads.build_stamp()
        (tmp_path / "agent.md").write_text("# Default\n")
        settings.AGENTDOCS_DEFAULT_DOCUMENTS_DIR = tmp_path
        render_cache_reads.build_stamp.cache_clear()
        first = render_cache_reads.build_stamp()
        (tmp_path / "agent.md").write_text("# Default, changed\n")
        render_cache_reads.build_stamp.cache_clear()
        assert len({shipped, first, render_cache_reads.build_stamp()}) == 3
    finally:
        render_cache_reads.build_stamp.cache_clear()


# Revocation under load: threads keep sending conditional GETs while the main thread
# revokes; every request that starts after the revocation committed is refused.


@pytest.fixture
def postgres(transactional_db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the revocation-under-load proof needs concurrent connections; set DATABASE_URL",
    )


def _hammer(url: str, key: str, etag: str, stop: threading.Event, log: list, threads: int):
    def run() -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        try:
            while not stop.is_set():
                started = time.monotonic()
                status = client.get(url, HTTP_IF_NONE_MATCH=etag).status_code
                log.append((started, status))
        finally:
            connections.close_all()

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    return workers


@pytest.mark.parametrize("url", [PREVIEW, DOCUMENT])
@pytest.mark.parametrize("revocation", ["token revoked", "member removed"])
def test_revocation_under_concurrent_load_refuses_the_very_next_request(
    postgres, reader, admin, tenant, documents, url, revocation
):
    key = api_token_key(reader)
    warm = APIClient()
    warm.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    etag = _warm(warm, url)
    stop = threading.Event()
    log: list[tuple[float, int]] = []
    workers = _hammer(url, key, etag, stop, log, threads=4)
    try:
        deadline = time.monotonic() + 10
        while sum(1 for _, status in log if status == 304) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        if revocation == "token revoked":
            token_service.token_revoke(token=ApiToken.objects.get(user=reader), actor=admin)
        else:
            tenant_service.membership_remove(tenant=tenant, username="carol", actor=admin)
        committed = time.monotonic()
        while sum(1 for started, _ in log if started > committed) < 20:
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=30)
    before = [status for started, status in log if started < committed]
    after = [status for started, status in log if started > committed]
    assert 304 in before and len(after) >= 20
    refused = 401 if revocation == "token revoked" else 404
    assert set(after) == {refused}, sorted(set(after))

"""GET /tenants/{tenant}/search/: current documents by the words of body and path,
ranked on PostgreSQL, a substring on SQLite; scoped to the tenant, paged, constant
queries."""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.utils import timezone

from agentdocs.models import Document
from agentdocs.selectors import search as search_selectors
from agentdocs.services import documents as document_service
from agentdocs.services import tenancy as tenant_service
from tests.conftest import need_service

SEARCH = "/api/v1/tenants/acme/search/"


def _postgresql() -> None:
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "full-text search is PostgreSQL's; set DATABASE_URL to a PostgreSQL database",
    )


def _sqlite() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("the substring fallback is what SQLite runs")


@pytest.fixture
def docs(project, make_document, writer):
    make_document(project, "agent.md", "# Web rules\n\n- Deploy with the blue pipeline.\n")
    make_document(
        project,
        "notes/deploy.md",
        "How we ship: the pipeline, then a smoke test.\n",
    )
    make_document(project, "notes/style.md", "Use tabs. Never spaces.\n")
    gone = make_document(project, "notes/old.md", "The old pipeline was red.\n")
    document_service.document_delete(document=gone, base_version=1, user=writer, reason="old")


def _hits(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_a_reader_finds_current_documents_by_body_and_not_deleted_ones(api, reader, docs):
    hits = _hits(api(reader).get(SEARCH, {"q": "pipeline"}))
    assert {hit["path"] for hit in hits} == {"agent.md", "notes/deploy.md"}
    hit = next(hit for hit in hits if hit["path"] == "agent.md")
    assert hit["project"] == "web"
    assert hit["version"] == 1
    assert hit["url"] == "/t/acme/web/doc/agent.md"
    assert hit["api_url"] == "/api/v1/tenants/acme/projects/web/documents/agent.md"
    start, end = hit["highlights"][0]
    assert hit["snippet"][start:end].lower() == "pipeline"
    assert isinstance(hit["rank"], float)


def test_a_search_sees_only_the_current_version(api, reader, project, writer, docs):
    style = project.documents.get(path="notes/style.md")
    document_service.document_write(
        document=style, body="Use spaces now.\n", base_version=1, user=writer, reason="flip"
    )
    assert _hits(api(reader).get(SEARCH, {"q": "tabs"})) == []
    [hit] = _hits(api(reader).get(SEARCH, {"q": "spaces now"}))
    assert (hit["path"], hit["version"]) == ("notes/style.md", 2)


def test_a_word_of_the_path_finds_the_document(api, reader, project, make_document):
    make_document(project, "runbooks/rollback.md", "Nothing about it in here.\n")
    hits = _hits(api(reader).get(SEARCH, {"q": "rollback"}))
    assert [hit["path"] for hit in hits] == ["runbooks/rollback.md"]


def test_project_narrows_the_search(api, reader, tenant, admin, docs, make_document):
    other = tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    make_document(other, "agent.md", "The api pipeline.\n")
    assert {hit["project"] for hit in _hits(api(reader).get(SEARCH, {"q": "pipeline"}))} == {
        "web",
        "api",
    }
    narrowed = _hits(api(reader).get(SEARCH, {"q": "pipeline", "project": "api"}))
    assert [(hit["project"], hit["path"]) for hit in narrowed] == [("api", "agent.md")]


@pytest.mark.parametrize("params", [{}, {"q": ""}, {"q": "   "}, {"q": "x" * 201}])
def test_a_missing_empty_or_overlong_q_is_refused_naming_q(api, reader, project, params):
    response = api(reader).get(SEARCH, params)
    assert response.status_code == 400
    assert response.json()["field"] == "q"


def test_an_unknown_project_is_a_404_naming_project(api, reader, project):
    response = api(reader).get(SEARCH, {"q": "x", "project": "nope"})
    assert response.status_code == 404
    assert response.json()["field"] == "project"


def test_another_tenants_user_finds_nothing_and_learns_nothing(
    api, outsider, other_tenant, docs, make_document
):
    globex = tenant_service.project_create(
        tenant=other_tenant, slug="web", name="Web", user=outsider
    )
    make_document(globex, "agent.md", "Their pipeline.\n", user=outsider)
    for params in ({"q": "pipeline"}, {"q": "pipeline", "project": "web"}):
        response = api(outsider).get(SEARCH, params)
        assert response.status_code == 404
        assert response.json()["field"] == "tenant"
    # Nor does a search in their own tenant reach acme's documents.
    hits = _hits(api(outsider).get("/api/v1/tenants/globex/search/", {"q": "pipeline"}))
    assert [(hit["project"], hit["path"]) for hit in hits] == [("web", "agent.md")]
    assert hits[0]["url"] == "/t/globex/web/doc/agent.md"


def test_results_are_paged(api, reader, project, make_document):
    for i in range(7):
        make_document(project, f"n{i}.md", "common word\n")
    body = api(reader).get(SEARCH, {"q": "common", "page_size": 3}).json()
    assert body["count"] == 7
    assert len(body["results"]) == 3
    assert body["next"]


@pytest.mark.parametrize("count", [2, 40])
def test_a_search_runs_a_constant_number_of_queries(
    api, reader, project, make_document, count, django_assert_num_queries
):
    for i in range(count):
        make_document(project, f"d{i}.md", f"shared text {i}\n")
    client = api(reader)
    # token and access (1) + count (1) + page (1)
    with django_assert_num_queries(3):
        assert client.get(SEARCH, {"q": "shared"}).status_code == 200
    # token and tenant access (1) + project access (1) + count + page
    with django_assert_num_queries(4):
        assert client.get(SEARCH, {"q": "shared", "project": "web"}).status_code == 200


@pytest.mark.postgres
def test_postgresql_ranks_and_highlights_with_stemming(api, reader, project, make_document):
    _postgresql()
    make_document(project, "a.md", "Deploying is easy. We deploy often; deployment is daily.\n")
    make_document(project, "b.md", "One mention: deploy.\n" + "filler words here. " * 40)
    make_document(project, "deploy/checklist.md", "Run the checklist before you deploy.\n")
    hits = _hits(api(reader).get(SEARCH, {"q": "deploys"}))
    paths = [hit["path"] for hit in hits]
    assert set(paths) == {"a.md", "b.md", "deploy/checklist.md"}
    # A path word (weight A) outranks the body; many mentions outrank one.
    assert paths.index("deploy/checklist.md") < paths.index("b.md")
    assert paths.index("a.md") < paths.index("b.md")
    ranks = [hit["rank"] for hit in hits]
    assert ranks == sorted(ranks, reverse=True)
    first = next(hit for hit in hits if hit["path"] == "a.md")
    marked = [first["snippet"][start:end] for start, end in first["highlights"]]
    assert marked == ["Deploying", "deploy", "deployment"]
    assert "\x02" not in first["snippet"] and "\x03" not in first["snippet"]


@pytest.mark.postgres
@pytest.mark.slow
def test_postgresql_answers_ten_thousand_documents_through_the_gin_index(
    api, reader, project, django_assert_num_queries
):
    """The plan filters through the index, never every body, and the answer is quick."""
    _postgresql()
    now = timezone.now()
    Document.objects.bulk_create(
        Document(
            project=project,
            path=f"notes/n{i}.md",
            body=f"note {i} about the usual things" + (" zebracorn" if i % 1000 == 0 else ""),
            sha256="0" * 64,
            size=40,
            version=1,
            updated_at=now,
        )
        for i in range(10_000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agentdocs_document")
    query = search_selectors.document_search(tenant=project.tenant, q="zebracorn")
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        # With such short bodies reading the table whole may be cheaper still; what
        # matters is that the index serves this very expression.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_seqscan")
        cursor.execute("RESET enable_indexscan")
    assert "Bitmap Index Scan on document_search" in plan, plan
    client = api(reader)
    for q, count in (("zebracorn", 10), ("usual", 10_000)):
        started = time.perf_counter()
        with django_assert_num_queries(3):
            response = client.get(SEARCH, {"q": q})
        elapsed = time.perf_counter() - started
        assert response.json()["count"] == count
        assert elapsed < 1.5, f"{q!r} took {elapsed:.2f}s over ten thousand documents"


def test_sqlite_falls_back_to_a_substring_with_a_snippet_around_the_first_match(
    api, reader, project, make_document
):
    _sqlite()
    make_document(project, "long.md", "x" * 500 + " The Blue Pipeline runs here. " + "y" * 500)
    [hit] = _hits(api(reader).get(SEARCH, {"q": "blue pipeline"}))
    assert len(hit["snippet"]) <= 200
    [(start, end)] = hit["highlights"]
    assert hit["snippet"][start:end] == "Blue Pipeline"


def test_the_snippet_is_plain_text_for_the_api(api, reader, project, make_document):
    make_document(project, "x.md", "when a < b & c, beware of the dangerous case\n")
    [hit] = _hits(api(reader).get(SEARCH, {"q": "dangerous"}))
    assert "a < b & c" in hit["snippet"]
    assert "<mark>" not in hit["snippet"] and "&lt;" not in hit["snippet"]


def test_the_validator_strips_and_bounds_the_query():
    assert search_selectors.validate_search_query("  two words ") == "two words"


@pytest.mark.parametrize("shift", [0, 3, 7, 11])
def test_sqlite_snippets_start_and_end_on_whole_words(api, reader, project, make_document, shift):
    _sqlite()
    words = "Sixty characters of configuration management precede it here. " * 3
    body = "x" * shift + words + "The Blue Pipeline runs here. " + words
    make_document(project, "long.md", body)
    [hit] = _hits(api(reader).get(SEARCH, {"q": "blue pipeline"}))
    snippet = hit["snippet"]
    assert snippet == snippet.strip() and len(snippet) <= 200
    every_word = set(body.split())
    assert snippet.split()[0] in every_word, snippet
    assert snippet.split()[-1] in every_word, snippet
    [(start, end)] = hit["highlights"]
    assert snippet[start:end] == "Blue Pipeline"


def test_a_match_inside_a_long_word_keeps_its_word(api, reader, project, make_document):
    _sqlite()
    make_document(project, "long.md", "y" * 100 + "zebracorn tail")
    [hit] = _hits(api(reader).get(SEARCH, {"q": "zebracorn"}))
    [(start, end)] = hit["highlights"]
    assert hit["snippet"][start:end] == "zebracorn"

"""`?q=` on a document's history: the versions that introduced a phrase (their body
holds it, the version before did not), newest first, in constant queries."""

from __future__ import annotations

import pytest

from agentdocs.services import documents as document_service

HISTORY = "/api/v1/tenants/acme/projects/web/history/agent.md"


@pytest.fixture
def doc(project, make_document, writer):
    """v1 without the phrase, v2 brings it, v3 keeps it (other case), v4 drops it, v5
    brings it back by a revert to v2."""
    document = make_document(project, "agent.md", "# Rules\n")
    for version, body in (
        (1, "# Rules\n\n- Use tabs.\n"),
        (2, "# Rules\n\n- USE TABS, always.\n"),
        (3, "# Rules\n"),
    ):
        document = document_service.document_write(
            document=document, body=body, base_version=version, user=writer, reason=f"w{version}"
        ).document
    return document_service.document_revert(
        document=document, version=2, user=writer, reason="back", base_version=4
    )


def _versions(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [entry["version"] for entry in response.json()["results"]]


def test_q_lists_the_versions_that_introduced_the_phrase_newest_first(api, reader, doc):
    assert _versions(api(reader).get(HISTORY, {"q": "use tabs"})) == [5, 2]
    assert _versions(api(reader).get(HISTORY, {"q": "always"})) == [3]
    assert _versions(api(reader).get(HISTORY, {"q": "# Rules"})) == [1]
    assert _versions(api(reader).get(HISTORY, {"q": "nowhere"})) == []
    entry = api(reader).get(HISTORY, {"q": "use tabs"}).json()["results"][1]
    assert entry["reason"] == "w1" and entry["user"] == "bob"


def test_an_empty_q_is_the_whole_history(api, reader, doc):
    assert _versions(api(reader).get(HISTORY, {"q": ""})) == [5, 4, 3, 2, 1]


@pytest.mark.parametrize(
    "params", [{"q": "x" * 201}, {"q": "tabs", "version": "2"}], ids=["long", "with-version"]
)
def test_a_bad_q_is_refused_naming_q(api, reader, doc, params):
    response = api(reader).get(HISTORY, params)
    assert response.status_code == 400
    assert response.json()["field"] == "q"


def test_another_tenants_user_gets_404(api, outsider, other_tenant, doc):
    response = api(outsider).get(HISTORY, {"q": "tabs"})
    assert response.status_code == 404


@pytest.mark.parametrize("writes", [2, 30])
def test_q_runs_a_constant_number_of_queries(
    api, reader, project, make_document, writer, writes, django_assert_num_queries
):
    document = make_document(project, "agent.md", "start\n")
    for version in range(1, writes + 1):
        body = "start\nneedle\n" if version % 2 else "start\n"
        document = document_service.document_write(
            document=document, body=body, base_version=version, user=writer
        ).document
    client = api(reader)
    # token and access + document + count + page
    with django_assert_num_queries(4):
        assert client.get(HISTORY, {"q": "needle"}).status_code == 200


def test_the_schema_documents_q(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/tenants/{tenant}/projects/{project}/history/{path}"]["get"]
    assert "q" in {parameter["name"] for parameter in operation["parameters"]}


def _long_history(project, make_document, writer, versions: int):
    """`needle` arrives in version 2 and stays to the last of ``versions``."""
    document = make_document(project, "agent.md", "start\n")
    for version in range(1, versions):
        document = document_service.document_write(
            document=document,
            body=f"start\nneedle\nv{version + 1}\n",
            base_version=version,
            user=writer,
        ).document
    return document


def test_a_small_history_is_searched_whole_and_says_so(api, reader, doc):
    body = api(reader).get(HISTORY, {"q": "use tabs"}).json()
    assert body["scan_complete"] is True
    assert body["scanned"] == 5
    assert (body["newest_scanned_version"], body["oldest_scanned_version"]) == (5, 1)
    assert body["scan_next"] is None
    assert {"count", "count_exact", "next", "previous", "results"} <= set(body)


def test_a_long_history_is_searched_in_bounded_steps_that_resume_where_they_stopped(
    api, reader, project, make_document, writer, settings
):
    settings.AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT = 5
    _long_history(project, make_document, writer, 12)
    client = api(reader)
    first = client.get(HISTORY, {"q": "needle"}).json()
    assert first["scan_complete"] is False
    assert (first["scanned"], first["newest_scanned_version"]) == (5, 12)
    assert first["oldest_scanned_version"] == 8
    assert first["results"] == []  # versions 8 to 12 only kept the needle
    assert "before=8" in first["scan_next"] and "q=needle" in first["scan_next"]
    second = client.get(first["scan_next"]).json()
    assert (second["newest_scanned_version"], second["oldest_scanned_version"]) == (7, 3)
    assert second["results"] == [] and second["scan_complete"] is False
    last = client.get(second["scan_next"]).json()
    assert last["scan_complete"] is True and last["scan_next"] is None
    assert last["scanned"] == 2
    assert [entry["version"] for entry in last["results"]] == [2]


def test_the_oldest_scanned_version_is_compared_with_the_one_before_it(
    api, reader, project, make_document, writer, settings
):
    """A window's oldest version that only kept the phrase is not an introduction."""
    settings.AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT = 3
    _long_history(project, make_document, writer, 5)
    body = api(reader).get(HISTORY, {"q": "needle"}).json()
    assert body["oldest_scanned_version"] == 3
    assert body["results"] == []


@pytest.mark.parametrize("versions", [8, 40])
def test_a_bounded_search_runs_the_same_queries_however_long_the_history(
    api,
    reader,
    project,
    make_document,
    writer,
    settings,
    versions,
    django_assert_max_num_queries,
):
    settings.AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT = 6
    _long_history(project, make_document, writer, versions)
    client = api(reader)
    # token and access + document + the scan + the introducing rows (none when none)
    with django_assert_max_num_queries(4):
        assert client.get(HISTORY, {"q": "needle", "before": "5"}).status_code == 200
    with django_assert_max_num_queries(4):
        assert client.get(HISTORY, {"q": "needle"}).status_code == 200


def test_before_needs_q_and_a_version_number(api, reader, doc):
    client = api(reader)
    alone = client.get(HISTORY, {"before": "3"})
    assert alone.status_code == 400 and alone.json()["field"] == "before"
    bad = client.get(HISTORY, {"q": "tabs", "before": "x"})
    assert bad.status_code == 400 and bad.json()["field"] == "before"


def test_an_outsider_resuming_a_search_gets_404(api, outsider, doc):
    assert api(outsider).get(HISTORY, {"q": "tabs", "before": "3"}).status_code == 404


def test_the_schema_documents_the_scan_fields_and_before(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/tenants/{tenant}/projects/{project}/history/{path}"]["get"]
    assert "before" in {parameter["name"] for parameter in operation["parameters"]}
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    page = schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    assert {"scan_complete", "scanned", "scan_next"} <= set(page["properties"])
    assert "scan_complete" not in page["required"]

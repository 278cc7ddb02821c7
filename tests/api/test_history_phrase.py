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
        )
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
        )
    client = api(reader)
    # token and access + document + count + page
    with django_assert_num_queries(4):
        assert client.get(HISTORY, {"q": "needle"}).status_code == 200


def test_the_schema_documents_q(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/tenants/{tenant}/projects/{project}/history/{path}"]["get"]
    assert "q" in {parameter["name"] for parameter in operation["parameters"]}

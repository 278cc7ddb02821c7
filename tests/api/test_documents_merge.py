"""PUT and PATCH with `merge`: a stale write is merged onto the current version, or
answered 409 `merge_conflict` with the conflicts located, and nothing is written."""

from __future__ import annotations

import pytest

from agentdocs.models import Document
from agentdocs.services import document_locks
from agentdocs.services import documents as svc
from tests.api.test_documents import assert_error

pytestmark = pytest.mark.django_db

URL = "/api/v1/tenants/acme/projects/web/documents/agent.md"
HISTORY = "/api/v1/tenants/acme/projects/web/history/agent.md"
BASE = "# Rules\n\n- one\n- two\n- three\n- four\n"
THEIRS = BASE.replace("- one", "- ONE")


@pytest.fixture
def doc(project, writer, admin):
    """Version 1 by bob; alice changed the first rule in version 2."""
    document = svc.document_create(
        project=project, path="agent.md", body=BASE, user=writer, reason="start"
    )
    return svc.document_write(
        document=document, body=THEIRS, base_version=1, user=admin, reason="alice's change"
    ).document


def put(client, body: str, *, version: int = 1, query: str = "", **extra):
    payload = {"body": body, "version": version, "reason": "bob's change", **extra}
    return client.put(f"{URL}{query}", payload, format="json")


def test_a_stale_put_without_merge_is_still_412(api, doc, writer):
    response = put(api(writer), BASE.replace("- four", "- FOUR"))
    assert_error(response, 412, "version_conflict", "version")
    assert Document.objects.get().version == 2


@pytest.mark.parametrize(
    "extra, query",
    [({"merge": True}, ""), ({}, "?merge=1"), ({}, "?merge=true"), ({"merge": False}, "?merge=1")],
)
def test_a_stale_put_with_merge_saves_both_changes(api, doc, writer, extra, query):
    response = put(api(writer), BASE.replace("- four", "- FOUR"), query=query, **extra)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 3 and body["merged_with"] == 2
    assert body["body"] == THEIRS.replace("- four", "- FOUR")
    assert response["ETag"].startswith('"v3-')
    entry = api(writer).get(HISTORY).json()["results"][0]
    assert (entry["version"], entry["merged_with"], entry["user"], entry["reason"]) == (
        3,
        2,
        "bob",
        "bob's change",
    )
    assert [row["merged_with"] for row in api(writer).get(HISTORY).json()["results"]] == [
        2,
        None,
        None,
    ]


def test_a_stale_put_with_merge_and_if_match(api, doc, writer):
    response = api(writer).put(
        URL,
        {"body": BASE + "- five\n", "merge": True},
        format="json",
        HTTP_IF_MATCH='"v1-0000"',
    )
    assert response.status_code == 200 and response.json()["merged_with"] == 2


def test_overlapping_edits_answer_409_with_the_conflicts_and_write_nothing(api, doc, writer):
    response = put(api(writer), BASE.replace("- one", "- uno"), merge=True)
    body = assert_error(response, 409, "merge_conflict", "body")
    assert body["conflicts"] == [
        {
            "base": {"start": 3, "lines": ["- one"]},
            "theirs": {"start": 3, "lines": ["- ONE"]},
            "yours": {"start": 3, "lines": ["- uno"]},
        }
    ]
    assert body["current_version"] == 2 and body["base_version"] == 1
    document = Document.objects.get()
    assert document.version == 2 and document.body == THEIRS
    assert document.history.count() == 2


def test_a_current_put_with_merge_just_saves(api, doc, writer):
    response = put(api(writer), "# mine\n", version=2, merge=True)
    assert response.status_code == 200
    assert response.json()["version"] == 3 and response.json()["merged_with"] is None


def test_a_stale_patch_with_merge_edits_the_base_text_and_merges(api, doc, writer):
    payload = {"old": "- three", "new": "- THREE", "version": 1, "reason": "edit"}
    response = api(writer).patch(f"{URL}?merge=1", payload, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["merged_with"] == 2
    assert response.json()["body"] == THEIRS.replace("- three", "- THREE")
    conflicting = {"old": "- one", "new": "- uno", "version": 1, "merge": True}
    assert_error(api(writer).patch(URL, conflicting, format="json"), 409, "merge_conflict")
    assert_error(
        api(writer).patch(URL, {**conflicting, "merge": False}, format="json"),
        412,
        "version_conflict",
    )


@pytest.mark.parametrize("value", ["yes", 1, None, [], {"a": 1}, "true"])
def test_merge_of_a_wrong_type_is_400_naming_it(api, doc, writer, value):
    response = put(api(writer), BASE + "- five\n", merge=value)
    assert_error(response, 400, "invalid", "merge")
    assert Document.objects.get().version == 2


@pytest.mark.parametrize("value", ["yes", "2", "maybe"])
def test_a_bad_merge_query_parameter_is_400_naming_it(api, doc, writer, value):
    response = put(api(writer), BASE + "- five\n", query=f"?merge={value}")
    assert_error(response, 400, "invalid", "merge")
    patch = api(writer).patch(
        f"{URL}?merge={value}", {"old": "- two", "new": "- 2", "version": 1}, format="json"
    )
    assert_error(patch, 400, "invalid", "merge")
    assert Document.objects.get().version == 2


@pytest.mark.parametrize("version", [3, 40])
def test_a_base_version_not_in_the_history_is_refused_naming_it(api, doc, writer, version):
    response = put(api(writer), BASE + "- five\n", version=version, merge=True)
    body = assert_error(response, 412, "version_conflict", "version")
    assert f"Version {version} is not in the document's history" in body["detail"]
    assert Document.objects.get().version == 2


def test_a_pruned_base_version_is_refused_naming_it(api, doc, writer):
    doc.history.filter(version=1).delete()
    response = put(api(writer), BASE + "- five\n", merge=True)
    assert_error(response, 412, "version_conflict", "version")


def test_a_reader_may_not_merge(api, doc, reader):
    response = put(api(reader), BASE + "- five\n", merge=True)
    assert_error(response, 403, "forbidden")
    assert Document.objects.get().version == 2


def test_another_tenants_user_sees_nothing(api, doc, outsider, other_tenant):
    response = put(api(outsider), BASE + "- five\n", merge=True)
    assert_error(response, 404, "not_found")
    response = api(outsider).patch(
        f"{URL}?merge=1", {"old": "- two", "new": "- 2", "version": 1}, format="json"
    )
    assert_error(response, 404, "not_found")
    assert Document.objects.get().version == 2


def test_a_deleted_document_is_404_with_merge_as_without(api, doc, writer, admin):
    svc.document_delete(document=doc, base_version=2, user=admin)
    assert_error(put(api(writer), BASE + "- five\n", merge=True), 404, "not_found")


def test_another_users_lock_is_423_with_merge_as_without(api, doc, writer, admin):
    document_locks.document_lock(document=doc, user=admin)
    assert_error(put(api(writer), BASE + "- five\n", merge=True), 423, "locked")
    assert Document.objects.get().version == 2


def test_the_schema_documents_merge_and_the_409_body():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    item = schema["paths"]["/api/v1/tenants/{tenant}/projects/{project}/documents/{path}"]
    for method, request_ref in (("put", "DocumentWrite"), ("patch", "DocumentEdit")):
        operation = item[method]
        assert "merge" in {p["name"] for p in operation["parameters"] if p["in"] == "query"}
        assert "merge" in components[request_ref]["properties"]
        conflict = operation["responses"]["409"]["content"]["application/json"]["schema"]
        properties = components[conflict["$ref"].rsplit("/", 1)[-1]]["properties"]
        assert {"error", "detail", "field", "conflicts"} <= set(properties)
        assert "merge_conflict" in operation["responses"]["409"]["description"]
    assert "merged_with" in components["Document"]["properties"]
    assert "merged_with" in components["HistoryEntry"]["properties"]

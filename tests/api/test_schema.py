"""The OpenAPI schema describes every endpoint without warnings, validates, and documents
each operation: a tag per resource, a summary, the headers it reads and writes, and the
errors it answers with."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator

from agentdocs.services import document_locks
from agentdocs.services import documents as document_service

METHODS = ("get", "put", "post", "patch", "delete")
P = "/api/v1/tenants/{tenant}/projects/{project}"
ERROR_FIELDS = {"error", "detail", "field"}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def _operation(schema: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    return schema["paths"][path][method.lower()]


def _component(schema: dict[str, Any], ref: str) -> dict[str, Any]:
    return schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]


def _header_parameters(operation: dict[str, Any]) -> set[str]:
    return {p["name"] for p in operation.get("parameters", []) if p["in"] == "header"}


def test_schema_generates_cleanly_and_validates(tmp_path):
    out = tmp_path / "schema.yml"
    # --fail-on-warn turns any view the generator cannot describe into an error.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    assert "/api/v1/tenants/{tenant}/projects/{project}/documents/{path}:" in text
    assert "PaginatedDocumentSummaryList" in text


def test_every_operation_has_a_summary_a_description_a_resource_tag_and_a_4xx(schema):
    declared = {tag["name"] for tag in settings.SPECTACULAR_SETTINGS["TAGS"]}
    operations = _operations(schema)
    assert len(operations) >= 61
    problems = []
    for method, path, operation in operations:
        name = f"{method} {path}"
        if not operation.get("summary"):
            problems.append(f"{name}: no summary")
        if not operation.get("description"):
            problems.append(f"{name}: no description")
        tags = operation.get("tags", [])
        if len(tags) != 1 or tags[0] not in declared:
            problems.append(f"{name}: tags {tags}, not one of the declared resource tags")
        if not any(code.startswith("4") for code in operation["responses"]):
            problems.append(f"{name}: documents no 4xx answer")
        if not {"401", "403"} <= set(operation["responses"]):
            problems.append(f"{name}: does not document 401 and 403")
    assert not problems, "\n".join(problems)


def test_every_declared_tag_is_used_and_described(schema):
    used = {tag for *_, operation in _operations(schema) for tag in operation["tags"]}
    for tag in settings.SPECTACULAR_SETTINGS["TAGS"]:
        assert tag["description"], tag
        assert tag["name"] in used, f"tag {tag['name']!r} has no operation"
    assert "v1" not in used


def test_every_documented_error_has_the_error_shape(schema):
    # The bind's 422 is the stored record itself, not an error: its own test says so.
    exceptions = {("POST", f"{P}/bindings/", "422")}
    for method, path, operation in _operations(schema):
        for code, response in operation["responses"].items():
            if not code.startswith("4") or (method, path, code) in exceptions:
                continue
            assert set(response["content"]) == {"application/json"}, (method, path, code)
            ref = response["content"]["application/json"]["schema"]["$ref"]
            fields = set(_component(schema, ref)["properties"])
            assert fields >= ERROR_FIELDS, (method, path, code, ref)
            assert response["description"], (method, path, code)


def test_document_put_documents_if_match_and_its_refusals(schema):
    put = _operation(schema, "PUT", f"{P}/documents/{{path}}")
    assert put["tags"] == ["documents"]
    assert "If-Match" in _header_parameters(put)
    assert {"200", "400", "404", "412", "422", "423", "428"} <= set(put["responses"])
    conflict = put["responses"]["412"]["content"]["application/json"]["schema"]["$ref"]
    assert "current_version" in _component(schema, conflict)["properties"]
    locked = put["responses"]["423"]["content"]["application/json"]["schema"]["$ref"]
    assert "lock" in _component(schema, locked)["properties"]
    assert "ETag" in put["responses"]["200"]["headers"]
    for method in ("PATCH", "DELETE"):
        operation = _operation(schema, method, f"{P}/documents/{{path}}")
        assert "If-Match" in _header_parameters(operation)
        assert {"412", "423", "428"} <= set(operation["responses"])


def test_document_get_documents_if_none_match_and_304(schema):
    get = _operation(schema, "GET", f"{P}/documents/{{path}}")
    assert "If-None-Match" in _header_parameters(get)
    assert "304" in get["responses"] and "ETag" in get["responses"]["304"]["headers"]


def test_memory_block_documents_the_text_plain_answer(schema):
    for method in ("POST", "GET"):
        operation = _operation(schema, method, f"{P}/memory-block/")
        ok = operation["responses"]["200"]["content"]
        assert ok["text/plain"]["schema"] == {"type": "string"}, method
        assert ok["application/json"]["schema"]["$ref"].endswith("/MemoryBlock"), method
        # Errors are JSON whatever was accepted.
        assert set(operation["responses"]["404"]["content"]) == {"application/json"}


def test_export_documents_the_zip(schema):
    get = _operation(schema, "GET", f"{P}/export/")
    ok = get["responses"]["200"]["content"]
    assert ok["application/zip"]["schema"] == {"type": "string", "format": "binary"}
    assert "application/json" in ok
    assert "Content-Disposition" in get["responses"]["200"]["headers"]


@pytest.mark.parametrize(
    "method, path", [("POST", f"{P}/memory-block/"), ("POST", f"{P}/bindings/")]
)
def test_render_and_bind_document_429_with_retry_after(schema, method, path):
    too_many = _operation(schema, method, path)["responses"]["429"]
    assert too_many["headers"]["Retry-After"]["schema"] == {"type": "integer"}
    ref = too_many["content"]["application/json"]["schema"]["$ref"]
    assert "retry_after" in _component(schema, ref)["properties"]


@pytest.mark.django_db
def test_the_document_puts_real_refusals_are_the_documented_ones(
    schema, api, project, writer, reader, admin, outsider
):
    """What the PUT answers in practice is documented, with the documented fields."""
    put = _operation(schema, "PUT", f"{P}/documents/{{path}}")
    document = document_service.document_create(
        project=project, path="notes/team.md", body="# Team\n", user=writer, reason="r1"
    )
    url = "/api/v1/tenants/acme/projects/web/documents/notes/team.md"
    etag = api(writer).get(url)["ETag"]
    answers = {
        "401": api().put(url, {"body": "x"}, format="json", HTTP_IF_MATCH=etag),
        "400": api(writer).put(url, {"body": 1}, format="json", HTTP_IF_MATCH=etag),
        "403": api(reader).put(url, {"body": "x"}, format="json", HTTP_IF_MATCH=etag),
        "404": api(outsider).put(url, {"body": "x"}, format="json", HTTP_IF_MATCH=etag),
        "428": api(writer).put(url, {"body": "x"}, format="json"),
        "422": api(writer).put(
            url,
            {"body": "-----BEGIN RSA PRIVATE KEY-----\n"},
            format="json",
            HTTP_IF_MATCH=etag,
        ),
    }
    document_service.document_write(
        document=document, body="# Team v2\n", base_version=1, user=writer, reason="r2"
    )
    answers["412"] = api(writer).put(url, {"body": "x"}, format="json", HTTP_IF_MATCH=etag)
    document_locks.document_lock(document=document, user=admin, ttl_seconds=60, force=False)
    answers["423"] = api(writer).put(url, {"body": "x", "version": 2}, format="json")
    for code, response in answers.items():
        assert str(response.status_code) == code, (code, response.content)
        documented = put["responses"][code]["content"]["application/json"]["schema"]["$ref"]
        fields = set(_component(schema, documented)["properties"])
        assert set(response.json()) <= fields, (code, response.json())
        assert set(response.json()) >= ERROR_FIELDS


@pytest.mark.django_db
def test_schema_and_docs_are_served(client):
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200

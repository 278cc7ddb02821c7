"""Every status the API answers is documented in `/api/schema/`.

Two walks over the schema's operations. The first checks the statuses every operation
of a kind can answer: those answered beneath every view (a NUL in the URL, no
credentials, a token's scopes, an Accept header naming nothing it answers in), 404
where a tenant is named, 413 and 415 where a body is read, 422 where a request carries
text (every string stored is checked for secrets and hidden characters), 404 for no
such page and 400 for a bad `page_size` on a list, 429 where a rate limit applies. The
second sends each operation the requests that provoke those statuses, as the cast would
(no token, the admin, the outsider), and checks that whatever it answered is documented.
"""

from __future__ import annotations

import json
import re
from functools import cache

import pytest
from django.conf import settings
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

PARAMETER = re.compile(r"\{(\w+)\}")
VALUES = {
    "tenant": "acme",
    "project": "web",
    "path": "agent.md",
    "username": "bob",
    "key": "memory.tone",
    "name": "coder",
}
# The operations a per-caller rate limit applies to (`agentdocs.ratelimit`).
RATE_LIMITED = {
    ("POST", "/api/v1/tenants/{tenant}/projects/{project}/memory-block/"),
    ("POST", "/api/v1/tenants/{tenant}/projects/{project}/bindings/"),
    ("POST", "/api/v1/tenants/{tenant}/projects/{project}/repositories/"),
    # Limited per person (AGENTDOCS_RATE_LIMIT_PREVIEW_PER_USER, ..._TOKEN_CREATE).
    ("GET", "/api/v1/tenants/{tenant}/projects/{project}/memory-block/"),
    ("POST", "/api/v1/tokens/"),
}

# Refusals past a per-tenant or per-person cap.
CAPPED = {
    ("POST", "/api/v1/tokens/"),
    ("POST", "/api/v1/tenants/{tenant}/webhooks/"),
}

# A 4xx whose body is not the error shape, by design: a bind stored with problems.
NOT_ERROR_BODIES = {("POST", "/api/v1/tenants/{tenant}/projects/{project}/bindings/", "422")}


@cache
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations() -> list[tuple[str, str, dict]]:
    return [
        (method.upper(), path, operation)
        for path, item in schema()["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def documented(operation: dict) -> set[int]:
    return {int(status) for status in operation["responses"]}


def is_list(operation: dict) -> bool:
    return "page_size" in {p["name"] for p in operation.get("parameters", [])}


def url_of(template: str) -> str:
    return PARAMETER.sub(lambda m: VALUES.get(m[1], "1"), template)


def test_every_operation_documents_what_is_answered_beneath_its_view():
    missing = []
    for method, path, operation in operations():
        expected = {400, 401, 403, 406}
        if "{tenant}" in path:
            expected.add(404)
        if "requestBody" in operation:
            expected |= {422} if method == "DELETE" else {400, 413, 415, 422}
        if is_list(operation):
            expected |= {400, 404}
        if (method, path) in RATE_LIMITED:
            expected.add(429)
        if (method, path) in CAPPED:
            expected.add(409)
        if not expected <= documented(operation):
            missing.append((method, path, sorted(expected - documented(operation))))
    assert not missing


def test_each_documented_error_has_the_error_shape():
    components = schema()["components"]["schemas"]
    for method, path, operation in operations():
        for status, response in operation["responses"].items():
            if int(status) < 400 or (method, path, status) in NOT_ERROR_BODIES:
                continue
            content = response["content"]
            assert set(content) == {"application/json"}, (method, path, status)
            ref = content["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
            properties = set(components[ref]["properties"])
            assert {"error", "detail", "field"} <= properties, (method, path, status)
            assert response["description"]


@pytest.fixture
def clients(api, admin, outsider, project, other_tenant, make_document):
    make_document(project, "agent.md", "# Rules\n")
    return {"nobody": APIClient(), "admin": api(admin), "outsider": api(outsider)}


# Invisible to a reader: a right-to-left override inside every string a body may hold.
HIDDEN = "looks\u202eharmless"


def hidden_text_body(operation: dict) -> dict:
    """The operation's request body with each string property holding `HIDDEN`."""
    content = operation["requestBody"]["content"]
    media = content.get("application/json") or next(iter(content.values()))
    body_schema = media["schema"]
    if "$ref" in body_schema:
        body_schema = schema()["components"]["schemas"][body_schema["$ref"].rsplit("/", 1)[-1]]
    return {
        name: HIDDEN
        for name, field in body_schema.get("properties", {}).items()
        if field.get("type") == "string" and not field.get("readOnly") and "enum" not in field
    }


def probes(method: str, operation: dict):
    """(who, query, request arguments) of each request sent to an operation."""
    json_body = {"data": "{}", "content_type": "application/json"}
    yield "nobody", "", json_body
    yield "outsider", "", json_body
    yield "admin", "", json_body
    yield "admin", "?probe=%00", json_body
    yield "admin", "", {**json_body, "HTTP_ACCEPT": "application/x-nothing"}
    if "requestBody" in operation:
        yield "admin", "", {"data": "a,b\n", "content_type": "text/csv"}
        too_large = b"x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
        yield "admin", "", {"data": too_large, "content_type": "application/json"}
        hidden = json.dumps(hidden_text_body(operation))
        yield "admin", "", {"data": hidden, "content_type": "application/json"}
    if is_list(operation):
        yield "admin", "?page=abc", json_body
        yield "admin", "?page_size=null", json_body


def test_whatever_an_operation_answers_the_cast_is_documented(clients):
    undocumented = []
    answered: set[int] = set()
    for method, path, operation in operations():
        for who, query, arguments in probes(method, operation):
            answer = clients[who].generic(method, url_of(path) + query, **arguments)
            answered.add(answer.status_code)
            if answer.status_code not in documented(operation):
                undocumented.append((method, path, who, query, answer.status_code))
    assert not undocumented
    # The probes reached what they are for.
    assert {400, 401, 404, 406, 413, 415, 422} <= answered


def test_the_bindings_list_is_documented_as_the_page_it_answers(api, reader, project):
    path = "/api/v1/tenants/{tenant}/projects/{project}/bindings/"
    operation = schema()["paths"][path]["get"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    page = schema()["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    answer = api(reader).get(url_of(path)).json()
    assert set(page["properties"]) == set(answer)
    assert page["properties"]["results"]["type"] == "array"
    assert is_list(operation)


def test_patch_marks_the_fields_it_requires(api, admin, project, make_document):
    path = "/api/v1/tenants/{tenant}/projects/{project}/documents/{path}"
    body = schema()["paths"][path]["patch"]["requestBody"]
    ref = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    component = schema()["components"]["schemas"][ref]
    assert {"old", "new"} <= set(component["required"])
    make_document(project, "agent.md", "# Rules\n")
    answer = api(admin).patch(url_of(path), {}, format="json", HTTP_IF_MATCH="*")
    assert answer.status_code == 400
    assert answer.json()["field"] in component["required"]

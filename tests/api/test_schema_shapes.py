"""One shape per contract: the error bodies and the Memory Block are declared once, as
the TypedDicts the code builds, and the OpenAPI components are generated from them."""

from __future__ import annotations

import ast
import inspect
import pathlib
import typing

import pytest

import agentdocs
from agentdocs.api import schema as api_schema
from agentdocs.core import errors
from agentdocs.services import document_locks
from agentdocs.services import documents as document_service
from tests.api.openapi_shapes import assert_matches, openapi_components

ERROR_COMPONENTS = {
    shape.name: shape for shape in vars(api_schema).values() if isinstance(shape, api_schema.Shape)
}
BODY_KEYS = set(typing.get_type_hints(errors.ErrorBody))


def _error_classes() -> dict[str, type[errors.AgentdocsError]]:
    return {
        name: cls
        for name, cls in vars(errors).items()
        if inspect.isclass(cls) and issubclass(cls, errors.AgentdocsError)
    }


def test_every_fact_an_error_is_raised_with_is_a_declared_key_of_the_body():
    # `AgentdocsError(**extra)` puts each keyword into the body: each must be one of
    # `ErrorBody`'s keys (or a parameter of the error's own constructor), so that the
    # schema generated from `ErrorBody` documents every key an answer can carry.
    classes = _error_classes()
    own_parameters = {
        name: set(inspect.signature(cls.__init__).parameters)
        for name, cls in classes.items()
        if cls.__init__ is not errors.AgentdocsError.__init__
    }
    undeclared, raises = [], 0
    root = pathlib.Path(agentdocs.__file__).parent
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = getattr(func, "id", None) or getattr(func, "attr", None)
            if name not in classes:
                continue
            raises += 1
            for keyword in node.keywords:
                allowed = BODY_KEYS | own_parameters.get(name, set())
                if keyword.arg is None or keyword.arg not in allowed:
                    undeclared.append(f"{path.relative_to(root)}:{node.lineno} {keyword.arg}")
    assert raises > 100
    assert not undeclared, undeclared


def test_every_error_answer_is_a_component_generated_from_the_error_body():
    components = openapi_components()
    hints = typing.get_type_hints(errors.ErrorBody, include_extras=True)
    for name in ERROR_COMPONENTS:
        if ERROR_COMPONENTS[name].typed_dict is not errors.ErrorBody:
            continue
        properties = components[name]["properties"]
        assert {"error", "detail", "field"} <= set(properties) <= BODY_KEYS, name
        assert {"error", "detail", "field"} <= set(components[name]["required"]), name
        for key, documented in properties.items():
            _, doc, _ = api_schema._unwrapped(hints[key])
            assert documented["description"] == doc.text, (name, key)
    # Each optional key is documented by a status that answers it.
    documented = {key for name in ERROR_COMPONENTS for key in components[name]["properties"]}
    assert documented == BODY_KEYS
    assert components["RateLimitedError"]["required"] == [
        "detail",
        "error",
        "field",
        "retry_after",
    ]
    assert components["LockedError"]["properties"]["lock"]["allOf"] == [
        {"$ref": "#/components/schemas/LockState"}
    ]


@pytest.mark.django_db
def test_real_refusals_are_exactly_their_documented_components(api, project, writer, admin):
    components = openapi_components()
    document = document_service.document_create(
        project=project, path="notes/team.md", body="# Team\n", user=writer, reason="r1"
    )
    url = "/api/v1/tenants/acme/projects/web/documents/notes/team.md"
    etag = api(writer).get(url)["ETag"]
    client = api(writer)
    answers = [
        ("InvalidError", 400, client.put(url, {"body": 1}, format="json", HTTP_IF_MATCH=etag)),
        (
            "InvalidError",
            400,
            client.post(
                "/api/v1/tenants/acme/projects/web/documents/",
                {"path": "notes/te\u200bam.md", "body": "x"},
                format="json",
            ),
        ),
        (
            "UnprocessableError",
            422,
            client.put(url, {"body": "a\u202eb\n"}, format="json", HTTP_IF_MATCH=etag),
        ),
        (
            "UnprocessableError",
            422,
            client.put(
                url,
                {"body": "-----BEGIN RSA PRIVATE KEY-----\n"},
                format="json",
                HTTP_IF_MATCH=etag,
            ),
        ),
    ]
    document_service.document_write(
        document=document, body="# Team v2\n", base_version=1, user=writer, reason="r2"
    )
    answers.append(
        (
            "VersionConflictError",
            412,
            client.put(url, {"body": "x"}, format="json", HTTP_IF_MATCH=etag),
        )
    )
    document_locks.document_lock(document=document, user=admin, ttl_seconds=60, force=False)
    answers.append(
        ("LockedError", 423, client.put(url, {"body": "x", "version": 2}, format="json"))
    )
    keys = set()
    for name, status, response in answers:
        assert response.status_code == status, (name, response.content)
        assert_matches(components, name, response.json())
        keys |= set(response.json())
    # The facts beyond the three keys reached the client: none was dropped.
    assert {"characters", "line", "column", "count", "current_version", "lock"} <= keys


@pytest.mark.django_db
def test_a_change_request_in_detail_is_exactly_its_serializer(
    api, project, reader, writer, admin, make_document
):
    # The detail answer goes through `ChangeDetailSerializer`, the serializer that
    # documents it (no hand-built dict beside it); with reviews, comments, both diffs
    # and a conflict it is exactly the documented component.
    from tests.api.test_changes import BASE, TEXT, propose, review

    document = make_document(project, "agent.md", TEXT, user=writer)
    change_id = propose(api, reader, body=TEXT.replace("tabs", "spaces")).json()["id"]
    assert review(api, writer, change_id, comment="fine").status_code == 201
    comment = {"body": "why spaces?"}
    assert api(admin).post(f"{BASE}/changes/{change_id}/comments", comment, format="json")
    document_service.document_write(
        document=document,
        body=TEXT.replace("tabs", "tabs, width 4"),
        base_version=1,
        user=writer,
        reason="r2",
    )
    answer = api(reader).get(f"{BASE}/changes/{change_id}").json()
    assert answer["reviews"] and answer["comments"] and answer["conflicts"]
    assert answer["diff_against_current"]["hunks"]
    assert_matches(openapi_components(), "ChangeDetail", answer)

"""Bad input of every kind gets a 4xx with the JSON error, never a 500.

Every route and method of the API, as an admin of the tenant (who gets past the
permission checks to the input handling), is sent bodies of the wrong shape and
type, and query parameters of the wrong kind. Each answer must be a 4xx whose
body is the error shape, or a success; nothing may fail with a 500.
"""

from __future__ import annotations

import json

import pytest

from agentdocs.models import BindingRecord
from agentdocs.services import changes as change_service

pytestmark = pytest.mark.django_db

T = "/api/v1/tenants/acme"
P = T + "/projects/web"

ROUTES = [
    ("/api/v1/tenants/", ["POST"]),
    (T + "/", ["GET"]),
    (T + "/projects/", ["POST"]),
    (T + "/members/bob", ["PUT"]),
    (P + "/documents/", ["GET", "POST"]),
    (P + "/documents/agent.md", ["GET", "PUT", "PATCH", "DELETE"]),
    (P + "/history/agent.md", ["GET"]),
    (P + "/diff/agent.md", ["GET"]),
    (P + "/revert/agent.md", ["POST"]),
    (P + "/lock/agent.md", ["POST", "DELETE"]),
    (T + "/settings/memory.tone", ["PUT"]),
    (P + "/settings/memory.tone", ["PUT"]),
    (T + "/recipes/", ["POST"]),
    (T + "/recipes/coder", ["PUT"]),
    (P + "/memory-block/", ["GET", "POST"]),
    (T + "/providers/team/doc", ["PUT"]),
    (P + "/bindings/", ["GET", "POST"]),
    (P + "/bindings/{record}", ["GET"]),
    (P + "/bindings/{record}/compare/{record}", ["GET"]),
    (P + "/bindings/" + "1" * 5000, ["GET"]),
    # Change requests (issue 13).
    (P + "/changes/", ["GET", "POST"]),
    (P + "/changes/{change}", ["GET"]),
    (P + "/changes/{change}/reviews", ["POST"]),
    (P + "/changes/{change}/comments", ["POST"]),
    (P + "/changes/{change}/withdraw", ["POST"]),
    (P + "/changes/{change}/merge", ["POST"]),
    (P + "/changes/" + "1" * 5000, ["GET"]),
]

BODIES = [
    None,
    [],
    "text",
    7,
    True,
    {"": ""},
    {"path": 5, "body": ["x"], "reason": {"a": 1}, "version": "x"},
    {"version": 10**30, "body": "x", "old": 5, "new": None},
    {"version": -1, "base_version": 1.5, "reason": None},
    {"value": 5, "enforced": "yes", "role": 3},
    {"name": ["x"], "slug": {"a": 1}, "params": "p", "profiles": [1]},
    {"params": {"agentDocument": 5, "contextBudgetBytes": "big"}, "profiles": {"p": 1}},
    {"params": {"contextBudgetBytes": 10**30}, "profiles": {"p": {"useClientAgentDoc": "y"}}},
    {"process": ["p"], "recipe": 5, "profile": {}, "reset": "no"},
    {"process": "p", "client_document": "CLAUDE.md"},
    {"process": "p", "client_document": {"name": 5, "body": None}},
    {"process": "p", "manifest": "m"},
    {"process": "p", "manifest": {"context": "x", "local": 5, "exceptions": {}}},
    {"process": "p", "manifest": {"context": [5, None, {"name": 5, "standing": []}]}},
    {"process": "p", "manifest": {"exceptions": [{"target": 5, "effect": [], "reason": 1}]}},
    {"process": "p", "memory_block": "yes"},
    {"process": "p", "memory_block": {"recipe": 5, "client_document": 5}},
    {"project": 5, "path": ["a.md"], "ttl_seconds": "long", "force": "yes"},
    {"ttl_seconds": 10**30},
    {"version": "1" * 5000, "base_version": "1" * 5000, "body": "x"},
    {"path": "\ud800", "body": "\ud800", "reason": "\ud800", "process": "\ud800"},
    {"path": "a\x00", "body": "b\x00", "name": "\x00", "value": "\x00", "process": "\x00"},
    {"process": "p", "manifest": {"local": [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}},
    {"decision": 5, "comment": ["x"], "bypass_review": "yes"},
    {"path": "agent.md", "body": "x", "base_version": "1" * 5000, "decision": "approve"},
]

QUERIES = [
    "",
    "?version=x",
    "?version=99999999999999999999",
    "?version=%C2%B2",  # "²": a digit to str.isdigit, not to int()
    "?version=" + "1" * 5000 + "&from=" + "1" * 5000 + "&page=" + "1" * 5000,
    "?from=1&to=x",
    "?from=-1",
    "?from=%C2%B2&to=%D9%A1",
    "?page=x&page_size=y",
    "?page_size=99999999999999999999",
    "?prefix=%FF%FE",
    "?process=&problems=maybe",
    "?recipe=&profile=x",
]


@pytest.fixture
def record(api, admin, project, make_document):
    make_document(project, "agent.md", "# Rules\n")
    make_document(project, "context.json", json.dumps({"local": ["agent.md"]}))
    api(admin).post(P + "/bindings/", {"process": "p"}, format="json")
    return BindingRecord.objects.get().pk


@pytest.fixture
def change(record, project, reader):
    return change_service.change_propose(
        project=project, path="agent.md", body="# New\n", base_version=1, reason="", user=reader
    ).pk


def _assert_not_a_500(response, request: str) -> None:
    assert response.status_code < 500, (request, response.content[:300])
    if response.status_code >= 400:
        body = response.json()
        assert set(body) >= {"error", "detail", "field"}, (request, body)


@pytest.mark.parametrize(("route", "methods"), ROUTES)
def test_no_body_of_the_wrong_shape_or_type_is_a_500(api, admin, record, change, route, methods):
    client = api(admin)
    url = route.format(record=record, change=change)
    for method in methods:
        for body in BODIES:
            payload = json.dumps(body)
            response = client.generic(method, url, payload, content_type="application/json")
            _assert_not_a_500(response, f"{method} {url} {payload}")


@pytest.mark.parametrize(("route", "methods"), ROUTES)
def test_no_query_of_the_wrong_kind_is_a_500(api, admin, record, change, route, methods):
    client = api(admin)
    url = route.format(record=record, change=change)
    for query in QUERIES:
        response = client.get(url + query)
        if response.status_code != 405:
            _assert_not_a_500(response, f"GET {url}{query}")


def test_a_body_that_is_not_json_is_a_400(api, admin, record):
    response = api(admin).generic(
        "POST", P + "/documents/", b"{not json", content_type="application/json"
    )
    assert response.status_code == 400 and response.json()["error"] == "parse_error"

"""`/mcp/` answers any body with a JSON-RPC error or a result, never a 500.

The bodies the attack found (1,000 to 100,000 nested arrays: a RecursionError in the
SDK's `json.loads`) and their neighbours each get their status and JSON-RPC code; then
hypothesis sends arbitrary bytes, JSON values, nesting and JSON-RPC-shaped messages
with a reader's token, an outsider's (the REST API's 404 before any protocol work,
issue 34) and an invalid one. Driven through Django's test
client, so each example costs one request and no server.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentdocs.api.parsers import MAX_DEPTH
from tests.conftest import api_token_key

pytestmark = pytest.mark.django_db

URL = "/mcp/?tenant=acme&project=web"
ACCEPT = "application/json, text/event-stream"
FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "notifications/initialized",
    "completion/complete",
    "logging/setLevel",
]
TOOLS = [
    "get_memory_block",
    "list_documents",
    "read_document",
    "search_documents",
    "propose_change",
    "bind_run",
    "read_skill",
    "report_outcome",
]


@pytest.fixture
def keys(project, reader, other_tenant, outsider) -> dict[str, str]:
    return {
        "reader": api_token_key(reader),
        "outsider": api_token_key(outsider),
        "invalid": "adt_" + "x" * 40,
    }


def post(key: str, body: bytes, content_type: str = "application/json") -> Any:
    return Client().post(
        URL, body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {key}", HTTP_ACCEPT=ACCEPT
    )


def assert_json_rpc_answer(answer: Any, key_kind: str) -> dict[str, Any] | None:
    """A 4xx with a JSON-RPC error, a 200 with a result or error, or a 202 (a
    notification); an invalid token is the API's 401 and an outsider's the API's 404,
    whatever the body."""
    assert answer.status_code < 500, answer.content[:300]
    if key_kind == "invalid":
        assert answer.status_code == 401
        assert answer.json()["error"] == "authentication_failed"
        return None
    if key_kind == "outsider":
        assert answer.status_code == 404, answer.content[:300]
        assert answer.json()["error"] == "not_found"
        return None
    if answer.status_code == 202:
        assert answer.content == b""
        return None
    body = answer.json()
    assert body["jsonrpc"] == "2.0"
    assert "id" in body
    if answer.status_code >= 400:
        assert isinstance(body["error"]["code"], int)
        assert isinstance(body["error"]["message"], str)
    else:
        assert ("result" in body) != ("error" in body)
    return body


def nested(depth: int, opening: str) -> bytes:
    closing = {"[": "]", '{"a":': "}"}[opening]
    inner = "1" if opening != "[" else ""
    return (opening * depth + inner + closing * depth).encode()


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 10_000, 100_000])
@pytest.mark.parametrize("opening", ["[", '{"a":'])
def test_deep_nesting_is_refused_as_an_invalid_request_not_a_500(keys, depth, opening):
    answer = post(keys["reader"], nested(depth, opening))
    assert answer.status_code == 400
    body = answer.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == -32600
    assert f"more than {MAX_DEPTH} levels" in body["error"]["message"]


def test_nesting_within_the_limit_reaches_the_server(keys):
    params: Any = {}
    for _ in range(MAX_DEPTH - 3):
        params = {"a": params}
    body = {"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"_meta": {}, "x": params}}
    answer = post(keys["reader"], json.dumps(body).encode())
    assert answer.status_code == 200
    assert answer.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


@pytest.mark.parametrize(
    ("body", "content_type", "status", "code"),
    [
        (b"\xff\xfe{}", "application/json", 400, -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', "application/json", 400, -32700),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": NaN}',
            "application/json",
            400,
            -32700,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "x": ' + b"1" * 5000 + b"}",
            "application/json",
            400,
            -32700,
        ),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "p\x00"}', "application/json", 400, -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "p\\u0000"}', "application/json", 400, -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "\\ud800"}', "application/json", 400, -32600),
        (b"[]", "application/json", 400, -32600),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', "application/json", 400, -32600),
        (b"5", "application/json", 400, -32600),
        (b'"ping"', "application/json", 400, -32600),
        (b"null", "application/json", 400, -32600),
        (b'{"id": 1, "method": "ping"}', "application/json", 400, -32600),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', "application/json", 400, -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', "application/json", 400, -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', "text/plain", 415, -32600),
        (b"jsonrpc=2.0", "application/x-www-form-urlencoded", 415, -32600),
        (b"x" * (2_621_440 + 1), "application/json", 413, -32600),
    ],
)
@pytest.mark.parametrize("who", ["reader", "outsider"])
def test_a_body_that_is_not_one_json_rpc_message_is_a_json_rpc_error(
    keys, who, body, content_type, status, code
):
    answer = post(keys[who], body, content_type)
    if who == "outsider":  # the REST API's 404 before any protocol work (issue 34)
        assert answer.status_code == 404, answer.content[:300]
        assert answer.json()["error"] == "not_found"
        return
    assert answer.status_code == status, answer.content[:300]
    assert answer.json()["jsonrpc"] == "2.0"
    assert answer.json()["error"]["code"] == code


def test_a_refusal_names_the_field_and_keeps_the_request_id(keys):
    body = {"jsonrpc": "2.0", "id": "q-1", "method": "tools/call", "params": {"name": "a\x00"}}
    answer = post(keys["reader"], json.dumps(body).encode())
    assert answer.status_code == 400
    assert answer.json()["id"] == "q-1"
    assert answer.json()["error"]["data"] == {"field": "params.name"}


@pytest.mark.parametrize(
    "url", ["/mcp/?tenant=ac%00me&project=web", "/mcp/acme/w%00eb/", "/mcp/?%00=1"]
)
def test_a_nul_in_the_url_is_the_json_error_naming_it(keys, url):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    answer = Client().post(
        url, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {keys['reader']}"
    )
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid"
    assert answer.json()["field"] in {"tenant", "project", "query"}


def test_a_json_content_type_with_a_charset_is_served(keys):
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode()
    answer = post(keys["reader"], body, "application/json; charset=utf-8")
    assert answer.status_code == 200
    assert answer.json() == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_an_invalid_token_is_still_401_whatever_the_body(keys):
    for body in [nested(100_000, "["), b"\xff", b"[]"]:
        answer = post(keys["invalid"], body)
        assert answer.status_code == 401
        assert answer["WWW-Authenticate"].startswith("Bearer")


def test_an_accept_header_without_json_is_the_sdks_406_in_json_rpc(keys):
    answer = Client().post(
        URL,
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {keys['reader']}",
        HTTP_ACCEPT="text/html",
    )
    assert answer.status_code == 406
    assert answer.json()["jsonrpc"] == "2.0"


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)
IDS = st.none() | st.integers() | st.text(max_size=8) | st.booleans() | st.floats()
TOOL_ARGUMENTS = st.dictionaries(
    st.sampled_from(["process", "path", "query", "prefix", "version", "body", "manifest", "x"]),
    JSON_VALUES,
    max_size=4,
)
MESSAGES = st.fixed_dictionaries(
    {
        "jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2]),
        "method": st.sampled_from(METHODS) | st.text(max_size=12),
    },
    optional={
        "id": IDS,
        "params": JSON_VALUES
        | st.fixed_dictionaries(
            {"name": st.sampled_from(TOOLS) | st.text(max_size=8)},
            optional={"arguments": TOOL_ARGUMENTS | JSON_VALUES, "uri": st.text(max_size=30)},
        ),
        "result": JSON_VALUES,
        "error": JSON_VALUES,
    },
)
WHO = st.sampled_from(["reader", "outsider", "invalid"])


@FUZZ
@given(body=st.binary(max_size=300), who=WHO)
def test_fuzz_any_bytes(keys, body, who):
    assert_json_rpc_answer(post(keys[who], body), who)


@FUZZ
@given(value=JSON_VALUES, who=WHO)
def test_fuzz_any_json_value(keys, value, who):
    assert_json_rpc_answer(post(keys[who], json.dumps(value).encode()), who)


@FUZZ
@given(depth=st.integers(1, 100_000), opening=st.sampled_from(["[", '{"a":']), who=WHO)
def test_fuzz_any_nesting(keys, depth, opening, who):
    assert_json_rpc_answer(post(keys[who], nested(depth, opening)), who)


@settings(FUZZ, max_examples=120)
@given(message=MESSAGES, who=WHO)
def test_fuzz_json_rpc_shaped_messages(keys, message, who):
    assert_json_rpc_answer(post(keys[who], json.dumps(message).encode()), who)

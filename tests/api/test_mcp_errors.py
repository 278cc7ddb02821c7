"""Issue 35, item 6: `/mcp/`'s errors say what is wrong, with the codes MCP clients
expect: bad tool arguments are a tool error naming the argument (not pydantic's text),
an unknown prompt or tool is -32602 (invalid params), a missing resource -32002
(resource not found, as the MCP specification names it)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.test_mcp_http import JSON_RPC_HEADERS
from tests.cli.test_mcp import documents as documents  # the stdio tests fixture, shared
from tests.conftest import api_token_key


def rpc(
    client: Any, key: str, method: str, params: dict[str, Any], *, through_sdk: bool = False
) -> Any:
    """One request; ``through_sdk`` adds an empty `_meta`, which `/mcp/` leaves to the
    SDK's transport rather than answering from the table directly."""
    if through_sdk:
        params = {**params, "_meta": {}}
    answer = client.post(
        "/mcp/acme/web/",
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
        HTTP_ACCEPT=JSON_RPC_HEADERS["Accept"],
    )
    assert answer.status_code == 200, answer.content
    return answer.json()


@pytest.mark.parametrize("through_sdk", [False, True])
@pytest.mark.parametrize(
    ("arguments", "field", "sentence"),
    [
        ({}, "process", "`process` is required."),
        ({"process": "p", "reset": "sometimes"}, "reset", "`reset`: "),
        ({"process": "p", "paths": "a.md"}, "paths", "`paths`: "),
    ],
)
def test_bad_arguments_are_a_tool_error_naming_the_argument(
    client, documents, reader, arguments, field, sentence, through_sdk
):
    body = rpc(
        client,
        api_token_key(reader),
        "tools/call",
        {"name": "get_memory_block", "arguments": arguments},
        through_sdk=through_sdk,
    )
    result = body["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith(sentence), text
    assert f"(invalid, field {field})" in text
    assert "validation error" not in text and "pydantic" not in text
    assert result["_meta"]["agentdocs/error"]["field"] == field


def test_an_unknown_prompt_is_invalid_params(client, documents, reader):
    body = rpc(client, api_token_key(reader), "prompts/get", {"name": "nope"})
    assert body["error"]["code"] == -32602
    assert "Unknown prompt: nope" in body["error"]["message"]


def test_an_unknown_tool_is_invalid_params(client, documents, reader):
    body = rpc(client, api_token_key(reader), "tools/call", {"name": "nope", "arguments": {}})
    assert body["error"]["code"] == -32602
    assert "Unknown tool: nope" in body["error"]["message"]


@pytest.mark.parametrize(
    "uri", ["agentdocs://acme/web/documents/missing.md", "agentdocs://acme/web/elsewhere"]
)
def test_a_missing_resource_is_resource_not_found(client, documents, reader, uri):
    body = rpc(client, api_token_key(reader), "resources/read", {"uri": uri})
    assert body["error"]["code"] == -32002
    assert body["error"]["message"].startswith("Resource not found")
    assert body["error"]["data"]["uri"] == uri

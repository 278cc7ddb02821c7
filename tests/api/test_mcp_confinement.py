"""Issue 34, findings 7 and 9: an MCP session stays in its project, and no request waits
on a stream the endpoint cannot serve.

- A tool's or resource's path is a document path of the session's project only: `..` and
  `.` segments, percent-encoded slashes, absolute paths and URLs are refused as
  `invalid_path` before any request is made (a member of two tenants read one tenant's
  document through the other's `/mcp/`, and tool paths reached any GET endpoint).
- `/mcp/` advertises no subscriptions and answers a method it does not serve
  (`subscriptions/listen`) with a JSON-RPC error at once (it held a worker 30 s).
- An outsider's token gets the REST API's 404 before any protocol work.

Through `/mcp/` (Django's test client, and the SDK's client on a live server for the
stream) and through `agentdocs mcp` over stdio.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import requests
from mcp import Client

from agentdocs.models import ChangeRequest, Role
from agentdocs.services import tenancy as tenant_service
from tests.api.test_mcp_http import (
    INITIALIZE,
    JSON_RPC_HEADERS,
    bearer,
    modern_headers,
    modern_request,
)
from tests.cli.test_mcp import documents as documents  # the stdio tests fixture, shared
from tests.cli.test_mcp import drive, error_of, text_of
from tests.conftest import api_token_key

# From globex/evil to acme/web's guide.md, once a URL's dot segments are removed.
CLIMB = "../../../../acme/projects/web/documents/guide.md"
SECRET = "Zentinel"  # in acme/web's guide.md only
BAD_PATHS = [
    CLIMB,
    "../web/guide.md",
    "./guide.md",
    "docs/../../x.md",
    "..%2F..%2F..%2F..%2Facme%2Fprojects%2Fweb%2Fdocuments%2Fguide.md",
    "a%2fb.md",
    "a%5Cb.md",
    "/api/v1/ping",
    "https://evil.example/guide.md",
    "//evil.example/guide.md",
]


@pytest.fixture
def evil(documents, other_tenant, outsider, reader, make_document):
    """globex/evil, another tenant's project the reader is also a member of."""
    tenant_service.membership_set(
        tenant=other_tenant, username=reader.username, role=Role.WRITER, actor=outsider
    )
    evil = tenant_service.project_create(
        tenant=other_tenant, slug="evil", name="Evil", user=outsider
    )
    make_document(evil, "guide.md", "Evil's own guide.\n")
    return evil


def rpc(client: Any, key: str, url: str, message: dict[str, Any], **headers: str) -> Any:
    return client.post(
        url,
        json.dumps(message),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
        HTTP_ACCEPT=JSON_RPC_HEADERS["Accept"],
        **headers,
    )


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def read(uri: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": uri}}


@pytest.mark.parametrize("path", BAD_PATHS)
def test_a_tool_path_that_could_leave_the_project_is_refused(client, evil, reader, path):
    key = api_token_key(reader)
    for name, arguments in (
        ("read_document", {"path": path}),
        ("read_document", {"path": path, "version": 1}),
        ("propose_change", {"path": path, "body": "x\n", "reason": "r"}),
    ):
        answer = rpc(client, key, "/mcp/globex/evil/", call(name, arguments))
        assert answer.status_code == 200, answer.content
        result = answer.json()["result"]
        assert result["isError"] is True, result
        refusal = result["_meta"]["agentdocs/error"]
        assert (refusal["error"], refusal["field"]) == ("invalid_path", "path")
        # Refused here: no request was made, so there is no HTTP status to name.
        assert "HTTP" not in result["content"][0]["text"]
        assert SECRET not in answer.content.decode()
    assert not ChangeRequest.objects.exists()


@pytest.mark.parametrize("path", BAD_PATHS)
def test_a_resource_uri_that_could_leave_the_project_is_refused(client, evil, reader, path):
    answer = rpc(
        client,
        api_token_key(reader),
        "/mcp/globex/evil/",
        read(f"agentdocs://globex/evil/documents/{path}"),
    )
    body = answer.json()
    assert "result" not in body, body
    assert "invalid_path" in body["error"]["message"]
    assert SECRET not in answer.content.decode()


def test_a_resource_of_another_project_is_not_read_under_this_ones_name(client, evil, reader):
    answer = rpc(
        client,
        api_token_key(reader),
        "/mcp/globex/evil/",
        read("agentdocs://acme/web/documents/guide.md"),
    )
    assert "error" in answer.json()
    assert SECRET not in answer.content.decode()
    own = rpc(
        client,
        api_token_key(reader),
        "/mcp/globex/evil/",
        read("agentdocs://globex/evil/documents/guide.md"),
    ).json()["result"]["contents"][0]
    assert (own["uri"], own["text"]) == (
        "agentdocs://globex/evil/documents/guide.md",
        "Evil's own guide.\n",
    )


def test_over_stdio_a_path_that_could_leave_the_project_is_refused(live_server, evil, reader):
    async def body(client: Client) -> tuple[Any, Any, Any]:
        climbed = await client.call_tool("read_document", {"path": CLIMB})
        url = await client.call_tool("read_document", {"path": "https://evil.example/x.md"})
        try:
            await client.read_resource(f"agentdocs://globex/evil/documents/{CLIMB}")
        except Exception as error:  # the SDK raises the JSON-RPC error
            resource: Any = error
        else:
            resource = None
        return climbed, url, resource

    climbed, url, resource = drive(
        api_token_key(reader), live_server.url, body, tenant="globex", project="evil"
    )
    for result in (climbed, url):
        assert error_of(result)["error"] == "invalid_path", text_of(result)
        assert SECRET not in text_of(result)
    assert resource is not None and "invalid_path" in str(resource)


def test_http_advertises_no_subscriptions_and_refuses_listen_at_once(
    live_server, documents, reader
):
    url = f"{live_server.url}/mcp/acme/web/"
    key = api_token_key(reader)
    discovered = requests.post(
        url,
        json=modern_request("server/discover"),
        headers=modern_headers(key, "server/discover"),
        timeout=10,
    ).json()["result"]["capabilities"]
    assert not discovered["resources"].get("subscribe")
    for capability in ("resources", "tools", "prompts"):
        assert not discovered[capability].get("listChanged"), capability
    initialized = requests.post(
        url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, **bearer(key)}, timeout=10
    ).json()["result"]["capabilities"]
    assert not initialized["resources"].get("subscribe")

    listen = modern_request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    started = time.monotonic()
    answer = requests.post(
        url, json=listen, headers=modern_headers(key, "subscriptions/listen"), timeout=10
    )
    assert time.monotonic() - started < 5
    assert answer.status_code == 200, answer.content
    assert answer.json()["error"]["code"] == -32601
    assert answer.json()["id"] == listen["id"]


@pytest.mark.parametrize(
    "message",
    [
        INITIALIZE,
        modern_request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
        call("read_document", {"path": "guide.md"}),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "not json at all",
    ],
)
def test_an_outsider_gets_404_before_any_protocol_work(
    client, documents, other_tenant, outsider, message
):
    body = message if isinstance(message, str) else json.dumps(message)
    answer = client.post(
        "/mcp/acme/web/",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_token_key(outsider)}",
        HTTP_ACCEPT=JSON_RPC_HEADERS["Accept"],
        HTTP_MCP_PROTOCOL_VERSION="2026-07-28",
    )
    assert answer.status_code == 404
    assert answer.json() == {"error": "not_found", "detail": "No such tenant.", "field": "tenant"}


def test_a_member_of_the_tenant_gets_404_for_a_project_that_is_not_there(client, documents, reader):
    answer = rpc(client, api_token_key(reader), "/mcp/acme/nowhere/", INITIALIZE)
    assert answer.status_code == 404
    assert answer.json()["field"] == "project"

"""`/mcp/`: the MCP SDK's own Streamable HTTP client drives the web app's MCP endpoint
on a live server, with a valid, a revoked, a foreign and no token."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import httpx2
import pytest
import requests
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import DEFAULT_NEGOTIATED_VERSION, CallToolResult, TextContent
from mcp.types import methods as protocol_methods
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from agentdocs.api.mcp import shaped_result
from agentdocs.api.renderers import JSONRenderer
from agentdocs.models import ApiToken, BindingRecord, ChangeRequest, Document, Role, Scope
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service
from config.celery import app as celery_app
from tests.cli.test_mcp import REPO, TOOLS, error_of, text_of
from tests.cli.test_mcp import documents as documents  # the stdio tests fixture, shared
from tests.conftest import api_token_key

SESSION_SECONDS = 60
JSON_RPC_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "requests", "version": "1"},
    },
}


def drive(
    url: str,
    body: Callable[[Client], Awaitable[Any]],
    *,
    headers: dict[str, str] | None = None,
    mode: str = "auto",
) -> Any:
    """Connect the SDK's client to ``url`` over Streamable HTTP and run ``body`` in it;
    ``mode`` as in `tests.cli.test_mcp.drive` ("auto": 2026-07-28, "legacy": the
    `initialize` handshake)."""

    async def session() -> Any:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=SESSION_SECONDS) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
        ):
            return await body(client)

    async def bounded() -> Any:
        return await asyncio.wait_for(session(), SESSION_SECONDS)

    return asyncio.run(bounded())


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def mcp_url(live_server):
    return f"{live_server.url}/mcp/?tenant=acme&project=web"


@pytest.fixture
def reader_key(reader):
    return api_token_key(reader)


def test_the_tools_are_the_stdio_servers(mcp_url, documents, reader_key):
    async def body(client: Client) -> tuple[Any, Any]:
        return await client.list_tools(), await client.list_prompts()

    tools, prompts = drive(mcp_url, body, headers=bearer(reader_key))
    assert {tool.name: set(tool.input_schema["properties"]) for tool in tools.tools} == TOOLS
    assert [prompt.name for prompt in prompts.prompts] == ["house-rules"]


def test_a_valid_token_reads_the_project(mcp_url, documents, reader_key):
    async def body(client: Client) -> dict[str, Any]:
        return {
            "block": await client.call_tool("get_memory_block", {"process": "http-run"}),
            "again": await client.call_tool("get_memory_block", {"process": "http-run"}),
            "listing": await client.call_tool("list_documents", {}),
            "first": await client.call_tool("read_document", {"path": "guide.md", "version": 1}),
            "search": await client.call_tool("search_documents", {"query": "zentinel"}),
            "resources": await client.list_resources(),
            "resource": await client.read_resource(
                "agentdocs://acme/web/documents/.AGENTS/overview.md"
            ),
            "prompt": await client.get_prompt("house-rules"),
        }

    got = drive(mcp_url, body, headers=bearer(reader_key))
    for name in ("block", "again", "listing", "first", "search"):
        assert not got[name].is_error, text_of(got[name])
    assert "## Agent Notes (from _vance: agent.md)\n\n# House rules" in text_of(got["block"])
    # Read state is kept between HTTP requests, per process and token, as over REST.
    assert "Agent notes unchanged from an earlier turn" in text_of(got["again"])
    rows = got["listing"].structured_content["result"]
    assert [row["path"] for row in rows] == [".AGENTS/overview.md", "guide.md"]
    assert got["first"].structured_content["body"] == "Deploy on Fridays.\n"
    assert [m["path"] for m in got["search"].structured_content["matches"]] == ["guide.md"]
    assert [str(resource.uri) for resource in got["resources"].resources] == [
        "agentdocs://acme/web/memory-block",
        "agentdocs://acme/web/documents/.AGENTS/overview.md",
        "agentdocs://acme/web/documents/guide.md",
    ]
    assert got["resource"].contents[0].text == "What this is.\n"
    (message,) = got["prompt"].messages
    assert "# House rules" in message.content.text


def test_bind_run_records_the_run_and_links_its_page(
    live_server,
    settings,
    tmp_path,
    documents,
    writer,
):
    settings.MEDIA_ROOT = tmp_path / "media"
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    manifest = {"context": [], "local": ["guide.md", "missing.md"]}

    async def body(client: Client) -> Any:
        return await client.call_tool("bind_run", {"process": "http-bind", "manifest": manifest})

    try:
        result = drive(
            f"{live_server.url}/mcp/acme/web/", body, headers=bearer(api_token_key(writer))
        )
    finally:
        celery_app.conf.task_always_eager = eager
    assert not result.is_error, text_of(result)
    record = BindingRecord.objects.get(pk=result.structured_content["id"])
    assert record.process == "http-bind"
    assert result.structured_content["problem_count"] == record.problem_count == 1
    assert result.structured_content["url"] == f"{live_server.url}/t/acme/web/bindings/{record.pk}/"


def test_the_project_may_be_named_in_headers(live_server, documents, reader_key):
    async def body(client: Client) -> Any:
        return await client.call_tool("read_document", {"path": "guide.md"})

    headers = {**bearer(reader_key), "X-Agentdocs-Tenant": "acme", "X-Agentdocs-Project": "web"}
    result = drive(f"{live_server.url}/mcp", body, headers=headers)
    assert result.structured_content["version"] == 2


def test_a_token_scopes_are_those_of_the_rest_api(mcp_url, documents, reader):
    key = token_service.token_create(user=reader, name="read only", scopes=[Scope.READ]).key

    async def body(client: Client) -> tuple[Any, Any]:
        read = await client.call_tool("read_document", {"path": "guide.md"})
        block = await client.call_tool("get_memory_block", {"process": "p"})
        return read, block

    read, block = drive(mcp_url, body, headers=bearer(key))
    assert not read.is_error
    assert block.is_error
    assert error_of(block)["error"] == "insufficient_scope"


def test_a_revoked_token_is_refused_with_401(mcp_url, documents, reader, admin):
    key = api_token_key(reader)
    token_service.token_revoke(token=ApiToken.objects.get(user=reader), actor=admin)

    async def body(client: Client) -> None:
        return None

    # The SDK's client cannot connect; what it raises (an exception group) is its own.
    with pytest.raises(BaseException):  # noqa: B017
        drive(mcp_url, body, headers=bearer(key))
    answer = requests.post(mcp_url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, **bearer(key)})
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert answer.json()["error"] == "authentication_failed"
    assert answer.json()["detail"] == "This token was revoked."


def test_a_foreign_token_gets_the_rest_apis_404_before_any_protocol_work(
    mcp_url,
    documents,
    other_tenant,
    outsider,
):
    """Issue 34: an outsider's token gets no MCP session, as it gets no REST answer."""

    async def body(client: Client) -> None:
        return None

    key = api_token_key(outsider)
    with pytest.raises(BaseException):  # noqa: B017  # the SDK's client cannot connect
        drive(mcp_url, body, headers=bearer(key))
    answer = requests.post(mcp_url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, **bearer(key)})
    assert answer.status_code == 404
    assert answer.json() == {"error": "not_found", "detail": "No such tenant.", "field": "tenant"}


def test_a_token_bound_to_another_tenant_finds_nothing_here(
    mcp_url,
    documents,
    other_tenant,
    outsider,
    admin,
):
    tenant_service.membership_set(
        tenant=other_tenant, username=admin.username, role=Role.ADMIN, actor=outsider
    )
    key = api_token_key(admin, tenant=other_tenant)
    answer = requests.post(mcp_url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, **bearer(key)})
    assert answer.status_code == 404
    assert answer.json()["error"] == "not_found"


def test_without_a_token_or_with_a_session_cookie_only_it_is_401(
    mcp_url,
    documents,
    reader,
    client,
):
    answer = requests.post(mcp_url, json=INITIALIZE, headers=JSON_RPC_HEADERS)
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert set(answer.json()) >= {"error", "detail"}

    client.force_login(reader)
    cookie = client.cookies["sessionid"].value
    with_cookie = requests.post(
        mcp_url, json=INITIALIZE, headers=JSON_RPC_HEADERS, cookies={"sessionid": cookie}
    )
    assert with_cookie.status_code == 401


def test_a_plain_json_rpc_initialize_is_answered_in_json(mcp_url, documents, reader_key):
    answer = requests.post(
        mcp_url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, **bearer(reader_key)}
    )
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("application/json")
    assert "Mcp-Session-Id" not in answer.headers  # stateless
    result = answer.json()["result"]
    assert result["serverInfo"]["name"] == "agentdocs"
    assert "tools" in result["capabilities"]

    listing = requests.post(
        mcp_url,
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers={**JSON_RPC_HEADERS, **bearer(reader_key)},  # no initialize: stateless
    )
    assert {tool["name"] for tool in listing.json()["result"]["tools"]} == set(TOOLS)


def test_get_and_delete_are_not_served_and_the_project_must_be_named(
    live_server,
    documents,
    reader_key,
):
    auth = bearer(reader_key)
    assert requests.get(f"{live_server.url}/mcp/acme/web/", headers=auth).status_code == 405
    assert requests.delete(f"{live_server.url}/mcp/acme/web/", headers=auth).status_code == 405
    unnamed = requests.post(
        f"{live_server.url}/mcp/?tenant=acme",
        json=INITIALIZE,
        headers={**JSON_RPC_HEADERS, **auth},
    )
    assert unnamed.status_code == 400
    assert unnamed.json()["field"] == "project"


def test_the_render_rate_limit_is_a_tool_error_and_the_server_keeps_serving(
    mcp_url, settings, documents, reader_key
):
    settings.AGENTDOCS_RATE_LIMITS = {**settings.AGENTDOCS_RATE_LIMITS, "render": "1/min"}

    async def body(client: Client) -> tuple[Any, Any, Any]:
        first = await client.call_tool("get_memory_block", {"process": "limited"})
        second = await client.call_tool("get_memory_block", {"process": "limited"})
        return first, second, await client.call_tool("read_document", {"path": "guide.md"})

    first, second, read = drive(mcp_url, body, headers=bearer(reader_key))
    assert not first.is_error
    assert second.is_error
    assert error_of(second)["error"] == "rate_limited"
    assert not read.is_error


def call_tool(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )


@pytest.mark.parametrize("tool", ["get_memory_block", "list_documents"])
def test_a_tool_call_reads_as_many_rows_at_two_sizes(
    client, project, make_document, reader_key, tool
):
    """One tool call is the outer token check plus its REST request, whatever the size."""
    arguments = {"process": "sizes"} if tool == "get_memory_block" else {}
    headers = {
        "HTTP_AUTHORIZATION": f"Bearer {reader_key}",
        "HTTP_ACCEPT": JSON_RPC_HEADERS["Accept"],
    }

    def queries_of_one_call() -> int:
        with CaptureQueriesContext(connection) as queries:
            answer = client.post(
                "/mcp/acme/web/",
                call_tool(tool, {**arguments, "reset": True} if arguments else arguments),
                content_type="application/json",
                **headers,
            )
        assert answer.status_code == 200
        assert not answer.json()["result"].get("isError"), answer.content
        return len(queries)

    make_document(project, ".AGENTS/a.md", "a\n")
    queries_of_one_call()  # warm: the first render writes the read state
    small = queries_of_one_call()
    for number in range(20):
        make_document(project, f".AGENTS/more-{number}.md", f"{number}\n")
    queries_of_one_call()  # warm again: the writes retired the cached render rows
    assert queries_of_one_call() == small, small


def test_a_reader_proposes_into_vance_as_over_stdio(live_server, documents, reader_key):
    """Any member may propose (issue 13); the proposal waits for a tenant admin."""

    async def body(client: Client) -> Any:
        return await client.call_tool(
            "propose_change",
            {"path": "agent.md", "body": "# House rules\n", "reason": "shorter"},
        )

    result = drive(f"{live_server.url}/mcp/acme/_vance/", body, headers=bearer(reader_key))
    assert not result.is_error, result.content
    assert result.structured_content["state"] == "open"
    change = ChangeRequest.objects.get(pk=result.structured_content["id"])
    assert (change.project.slug, change.path, change.proposer.username) == (
        "_vance",
        "agent.md",
        "carol",
    )


def test_a_proposal_names_the_process_it_came_from(mcp_url, documents, reader_key, project):
    """A change an agent proposes names its session (issue 39): the process, with that
    process's latest binding record."""

    async def body(client: Client) -> Any:
        bound = await client.call_tool("bind_run", {"process": "mcp-run-7", "manifest": {}})
        proposed = await client.call_tool(
            "propose_change",
            {
                "path": "guide.md",
                "body": "# Guide, shorter\n",
                "reason": "shorter",
                "process": "mcp-run-7",
            },
        )
        return bound, proposed

    bound, proposed = drive(mcp_url, body, headers=bearer(reader_key))
    assert not proposed.is_error, proposed.content
    change = ChangeRequest.objects.get(pk=proposed.structured_content["id"])
    assert change.process == "mcp-run-7"
    assert change.binding_record_id == bound.structured_content["id"]


def test_concurrent_callers_of_one_project_each_get_their_own_answers(
    mcp_url, documents, reader_key, writer
):
    """The server kept for the project serves each request with its own token: a
    read-only token's renders are refused while another token's are served."""
    calls = 8
    read_only = token_service.token_create(user=writer, name="read", scopes=[Scope.READ]).key

    async def renders(key: str) -> list[Any]:
        async with (
            httpx2.AsyncClient(headers=bearer(key), timeout=SESSION_SECONDS) as http,
            Client(streamable_http_client(mcp_url, http_client=http)) as client,
        ):
            return [
                await client.call_tool("get_memory_block", {"process": "both", "reset": True})
                for _ in range(calls)
            ]

    async def both() -> list[list[Any]]:
        return await asyncio.wait_for(
            asyncio.gather(renders(reader_key), renders(read_only)), SESSION_SECONDS
        )

    mine, theirs = asyncio.run(both())
    assert all("# House rules" in text_of(result) for result in mine)
    assert [error_of(result)["error"] for result in theirs] == ["insufficient_scope"] * calls


@pytest.mark.parametrize("kind", ["unknown", "expired", "other scheme"])
def test_an_unusable_token_is_refused_with_401(mcp_url, documents, reader, kind):
    if kind == "expired":
        key = api_token_key(reader, expires_in_days=1)
        ApiToken.objects.filter(user=reader).update(
            expires_at=timezone.now() - timedelta(minutes=1)
        )
        authorization = f"Bearer {key}"
    elif kind == "unknown":
        authorization = "Bearer adt_nothing_here"
    else:
        authorization = "Basic Y2Fyb2w6Y2Fyb2wtcGFzc3dvcmQ="  # carol's password
    answer = requests.post(
        mcp_url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, "Authorization": authorization}
    )
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert answer.json()["error"] in ("authentication_failed", "not_authenticated")


def test_search_documents_reads_no_document_bodies_so_its_queries_do_not_grow(
    client, project, make_document, reader_key
):
    """The tool asks the server's search for one page (on PostgreSQL its index) and
    counts the project's documents: the same queries for 2 documents as for 22."""
    headers = {
        "HTTP_AUTHORIZATION": f"Bearer {reader_key}",
        "HTTP_ACCEPT": JSON_RPC_HEADERS["Accept"],
    }

    def queries_of_one_search() -> tuple[int, dict[str, Any]]:
        with CaptureQueriesContext(connection) as queries:
            answer = client.post(
                "/mcp/acme/web/",
                call_tool("search_documents", {"query": "needle"}),
                content_type="application/json",
                **headers,
            )
        assert answer.status_code == 200
        result = answer.json()["result"]
        assert not result.get("isError"), answer.content
        return len(queries), result["structuredContent"]

    make_document(project, "a.md", "a needle here\n")
    make_document(project, "b.md", "nothing\n")
    small, found = queries_of_one_search()
    assert [match["path"] for match in found["matches"]] == ["a.md"]
    assert found["documents_searched"] == 2 and found["complete"] is True
    for number in range(20):
        make_document(project, f"more-{number}.md", f"needle {number}\n" * 50)
    large, found = queries_of_one_search()
    assert large == small
    assert len(found["matches"]) == 21 and found["documents_searched"] == 22


MODERN = "2026-07-28"


def modern_headers(key: str, method: str, name: str | None = None) -> dict[str, str]:
    """What a 2026-07-28 client sends beside the body: the version and the routing
    headers (`Mcp-Method`, `Mcp-Name` for a call that names a tool)."""
    headers = {
        **JSON_RPC_HEADERS,
        **bearer(key),
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def modern_request(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 2026-07-28 request: the per-request envelope in `params._meta`, no session."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "requests", "version": "1"},
    }
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": method,
        "params": {**(params or {}), "_meta": envelope},
    }


@pytest.mark.parametrize(
    ("mode", "version"), [("legacy", "2025-11-25"), ("auto", MODERN), (MODERN, MODERN)]
)
def test_a_client_of_either_era_connects_and_calls_a_tool(
    mcp_url, documents, reader_key, mode, version
):
    async def body(client: Client) -> tuple[str, Any, Any]:
        listed = await client.list_tools()
        read = await client.call_tool("read_document", {"path": "guide.md"})
        return client.protocol_version, listed, read

    negotiated, listed, read = drive(mcp_url, body, headers=bearer(reader_key), mode=mode)
    assert negotiated == version
    assert {tool.name for tool in listed.tools} == set(TOOLS)
    assert not read.is_error, text_of(read)
    assert read.structured_content["version"] == 2


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_initialize_negotiates_each_handshake_version(mcp_url, documents, reader_key, version):
    initialize = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
    answer = requests.post(
        mcp_url, json=initialize, headers={**JSON_RPC_HEADERS, **bearer(reader_key)}
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["result"]["protocolVersion"] == version


def test_server_discover_answers_the_modern_era(mcp_url, documents, reader_key):
    answer = requests.post(
        mcp_url,
        json=modern_request("server/discover"),
        headers=modern_headers(reader_key, "server/discover"),
    )
    assert answer.status_code == 200, answer.content
    assert "Mcp-Session-Id" not in answer.headers
    result = answer.json()["result"]
    assert MODERN in result["supportedVersions"]
    assert "tools" in result["capabilities"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "agentdocs"

    called = requests.post(
        mcp_url,
        json=modern_request(
            "tools/call", {"name": "read_document", "arguments": {"path": "nope.md"}}
        ),
        headers=modern_headers(reader_key, "tools/call", "read_document"),
    )
    assert called.status_code == 200, called.content
    refused = called.json()["result"]
    assert refused["isError"] is True
    assert "structuredContent" not in refused
    assert refused["_meta"]["agentdocs/error"]["error"] == "not_found"


PAGE = "https://agents.example.com"


@pytest.mark.parametrize("method", ["get", "delete"])
@pytest.mark.parametrize(
    "accept", ["text/event-stream", "application/json, text/event-stream", "text/html", None]
)
def test_get_and_delete_answer_405_whatever_they_accept(
    client, project, reader_key, method, accept
):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {reader_key}"}
    if accept is not None:
        headers["HTTP_ACCEPT"] = accept
    answer = getattr(client, method)("/mcp/acme/web/", **headers)
    assert answer.status_code == 405
    assert answer["Allow"] == "POST, OPTIONS"
    assert answer.json()["error"] == "method_not_allowed"


def test_a_browser_page_of_an_allowed_origin_gets_cors(client, settings, documents, reader_key):
    settings.AGENTDOCS_MCP_ALLOWED_ORIGINS = [PAGE]
    preflight = client.options(
        "/mcp/acme/web/",
        HTTP_ORIGIN=PAGE,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type, mcp-protocol-version",
    )
    assert preflight.status_code == 204
    assert preflight["Access-Control-Allow-Origin"] == PAGE
    assert "POST" in preflight["Access-Control-Allow-Methods"]
    allowed = {name.strip() for name in preflight["Access-Control-Allow-Headers"].split(",")}
    assert {
        "authorization",
        "mcp-protocol-version",
        "mcp-session-id",
        "mcp-method",
        "mcp-name",
    } <= allowed
    assert "Access-Control-Allow-Credentials" not in preflight  # a token, never a cookie

    answered = client.post(
        "/mcp/acme/web/",
        json.dumps(INITIALIZE),
        content_type="application/json",
        HTTP_ACCEPT=JSON_RPC_HEADERS["Accept"],
        HTTP_AUTHORIZATION=f"Bearer {reader_key}",
        HTTP_ORIGIN=PAGE,
    )
    assert answered.status_code == 200
    assert answered["Access-Control-Allow-Origin"] == PAGE
    assert "Origin" in answered["Vary"]
    exposed = answered["Access-Control-Expose-Headers"]
    assert "mcp-session-id" in exposed and "www-authenticate" in exposed
    # A refusal is readable by the page too, so it can show it.
    unsigned = client.post(
        "/mcp/acme/web/",
        json.dumps(INITIALIZE),
        content_type="application/json",
        HTTP_ORIGIN=PAGE,
    )
    assert unsigned.status_code == 401
    assert unsigned["Access-Control-Allow-Origin"] == PAGE


@pytest.mark.parametrize("allowed", [[], [PAGE]])
def test_a_request_from_another_origin_is_refused_with_403(
    client, settings, documents, reader_key, allowed
):
    settings.AGENTDOCS_MCP_ALLOWED_ORIGINS = allowed
    for origin in ("https://evil.example", "null", PAGE + ":8443"):
        refused = client.post(
            "/mcp/acme/web/",
            call_tool("read_document", {"path": "guide.md"}),
            content_type="application/json",
            HTTP_ACCEPT=JSON_RPC_HEADERS["Accept"],
            HTTP_AUTHORIZATION=f"Bearer {reader_key}",
            HTTP_ORIGIN=origin,
        )
        assert refused.status_code == 403
        assert refused.json()["error"] == "origin_not_allowed"
        assert refused.json()["field"] == "Origin"
        assert "Access-Control-Allow-Origin" not in refused
        preflight = client.options(
            "/mcp/acme/web/", HTTP_ORIGIN=origin, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST"
        )
        assert preflight.status_code == 403


def test_without_an_origin_every_client_is_served(client, settings, documents, reader_key):
    """Programs (every MCP client but a browser page) send no Origin."""
    settings.AGENTDOCS_MCP_ALLOWED_ORIGINS = []
    answer = client.post(
        "/mcp/acme/web/",
        call_tool("read_document", {"path": "guide.md"}),
        content_type="application/json",
        HTTP_ACCEPT=JSON_RPC_HEADERS["Accept"],
        HTTP_AUTHORIZATION=f"Bearer {reader_key}",
    )
    assert answer.status_code == 200
    assert "Access-Control-Allow-Origin" not in answer


def test_an_allowed_origin_must_be_an_origin():
    check = (
        "import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'; "
        "django.setup()"
    )
    env = {
        **{key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"},
        "SECRET_KEY": "x",
        "AGENTDOCS_MCP_ALLOWED_ORIGINS": "https://ok.example, https://bad.example/path",
    }
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert done.returncode != 0
    assert "'https://bad.example/path' is not an origin" in done.stderr


def post_call(client: Any, key: str, arguments: dict[str, Any], *, through_sdk: bool) -> Any:
    """A `get_memory_block` call; ``through_sdk`` adds an empty `_meta`, which the fast
    path leaves to the SDK (`agentdocs.api.mcp_memory_block`)."""
    params: dict[str, Any] = {"name": "get_memory_block", "arguments": arguments}
    if through_sdk:
        params["_meta"] = {}
    answer = client.post(
        "/mcp/acme/web/",
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
        HTTP_ACCEPT=JSON_RPC_HEADERS["Accept"],
    )
    return answer.status_code, answer.json()


@pytest.mark.parametrize(
    "case", ["full", "stubs", "bad process", "read-only token", "unknown recipe"]
)
def test_the_fast_get_memory_block_answers_exactly_as_the_sdk(
    client, settings, documents, reader, case
):
    key = {
        "read-only token": lambda: (
            token_service.token_create(user=reader, name="read only", scopes=[Scope.READ]).key
        ),
    }.get(case, lambda: api_token_key(reader))()
    arguments: dict[str, Any] = {"process": "same", "reset": case != "stubs"}
    if case == "bad process":
        arguments["process"] = "two\nlines"
    if case == "unknown recipe":
        arguments["recipe"] = "nope"
    if case == "stubs":
        post_call(client, key, arguments, through_sdk=False)  # the first, full turn
    fast = post_call(client, key, arguments, through_sdk=False)
    sdk = post_call(client, key, arguments, through_sdk=True)
    assert fast == sdk
    status, body = fast
    assert status == 200
    result = body["result"]
    if case in ("full", "stubs"):
        assert result["isError"] is False
        assert result["structuredContent"]["result"] == result["content"][0]["text"]
        unchanged = "Agent notes unchanged from an earlier turn" in result["content"][0]["text"]
        assert unchanged is (case == "stubs")
    else:
        assert result["isError"] is True and "structuredContent" not in result
        expected = {
            "bad process": "invalid",
            "read-only token": "insufficient_scope",
            "unknown recipe": "not_found",
        }[case]
        assert result["_meta"]["agentdocs/error"]["error"] == expected


def test_the_fast_get_memory_block_counts_the_render_rate_limit(
    client, settings, documents, reader
):
    settings.AGENTDOCS_RATE_LIMITS = {**settings.AGENTDOCS_RATE_LIMITS, "render": "2/min"}
    key = api_token_key(reader)
    first = post_call(client, key, {"process": "p"}, through_sdk=False)[1]["result"]
    second = post_call(client, key, {"process": "p"}, through_sdk=True)[1]["result"]
    third = post_call(client, key, {"process": "p"}, through_sdk=False)[1]["result"]
    assert not first["isError"] and not second["isError"]
    assert third["_meta"]["agentdocs/error"]["error"] == "rate_limited"


def test_a_call_the_tools_schema_refuses_gets_the_sdks_error(client, documents, reader):
    status, body = post_call(client, api_token_key(reader), {"reset": True}, through_sdk=False)
    assert status == 200
    result = body["result"]
    assert result["isError"] is True
    assert "process" in result["content"][0]["text"]  # pydantic: the field required


@pytest.mark.parametrize(("accept", "status"), [("text/html", 406), ("application/*", 200)])
def test_the_fast_path_reads_accept_as_the_sdk_does(client, documents, reader, accept, status):
    key = api_token_key(reader)
    answers = [
        client.post(
            "/mcp/acme/web/",
            call_tool(tool, arguments),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
            HTTP_ACCEPT=accept,
        ).status_code
        for tool, arguments in (("get_memory_block", {"process": "p"}), ("list_documents", {}))
    ]
    assert answers == [status, status]


def test_get_memory_block_takes_a_label(mcp_url, documents, reader_key, admin):
    """Issue 29: `label` reads each document at its labelled version, latest elsewhere."""
    agent = Document.objects.get(project__slug="_vance", path="agent.md")
    label_service.label_move(document=agent, name="production", version=1, user=admin)
    document_service.document_write(
        document=agent, body="# House rules\n- be bold\n", base_version=1, user=admin
    )

    async def body(client: Client) -> tuple[Any, Any, Any]:
        labelled = await client.call_tool(
            "get_memory_block", {"process": "labelled", "label": "production"}
        )
        latest = await client.call_tool("get_memory_block", {"process": "latest"})
        bad = await client.call_tool("get_memory_block", {"process": "bad", "label": "No!"})
        return labelled, latest, bad

    labelled, latest, bad = drive(mcp_url, body, headers=bearer(reader_key))
    assert "be kind" in text_of(labelled) and "be bold" not in text_of(labelled)
    assert "be bold" in text_of(latest)
    assert bad.is_error and error_of(bad)["field"] == "label"


def _sdk_bytes(answer: bytes, version: str) -> bytes:
    """The answer's result as the SDK's serializer writes it: its model, dumped and
    shaped for ``version`` by `serialize_server_result`, rendered by the API's renderer
    (what `/mcp/` answered before it wrote the two plain shapes itself)."""
    message = json.loads(answer)
    result = CallToolResult.model_validate(message["result"])
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    shaped = protocol_methods.serialize_server_result("tools/call", version, dumped)
    return JSONRenderer().render({"jsonrpc": "2.0", "id": message["id"], "result": shaped})


@pytest.mark.parametrize("version", [None, *HANDSHAKE_PROTOCOL_VERSIONS])
@pytest.mark.parametrize(
    "case",
    ["full", "stubs", "bad process", "read-only token", "unknown recipe", "no process"],
)
def test_the_fast_answer_is_byte_for_byte_the_sdk_serializers(
    client, settings, documents, reader, case, version
):
    key = (
        token_service.token_create(user=reader, name="read only", scopes=[Scope.READ]).key
        if case == "read-only token"
        else api_token_key(reader)
    )
    arguments: dict[str, Any] = {
        "full": {"process": "p-ü", "reset": True},
        "stubs": {"process": "p"},
        "bad process": {"process": "two\nlines"},
        "read-only token": {"process": "p"},
        "unknown recipe": {"process": "p", "recipe": "nope"},
        "no process": {"reset": True},
    }[case]
    headers = {"HTTP_MCP_PROTOCOL_VERSION": version} if version else {}

    def call() -> bytes:
        answer = client.post(
            "/mcp/acme/web/",
            call_tool("get_memory_block", arguments),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
            HTTP_ACCEPT=JSON_RPC_HEADERS["Accept"],
            **headers,
        )
        assert answer.status_code == 200
        return answer.content

    if case == "stubs":
        call()  # the process's first, full turn
    answer = call()
    assert answer == _sdk_bytes(answer, version or DEFAULT_NEGOTIATED_VERSION)
    result = json.loads(answer)["result"]
    assert result["isError"] is (case not in ("full", "stubs"))
    if case == "stubs":
        assert "unchanged from an earlier turn" in result["content"][0]["text"]


def test_a_result_of_another_shape_is_left_to_the_sdks_serializer():
    """Anything but the two plain shapes (another content item, annotations, a
    structured result that is not one text, an unknown version) is shaped by the SDK."""
    text = TextContent(type="text", text="x")
    others = [
        CallToolResult(content=[text, text], structured_content={"result": "x"}),
        CallToolResult(
            content=[TextContent(type="text", text="x", annotations={"priority": 1.0})],
            structured_content={"result": "x"},
        ),
        CallToolResult(content=[text], structured_content={"path": "x", "version": 2}),
        CallToolResult(content=[text], is_error=True, _meta={"other": 1}),
    ]
    for result in others:
        for version in HANDSHAKE_PROTOCOL_VERSIONS:
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            sdk = protocol_methods.serialize_server_result("tools/call", version, dumped)
            assert shaped_result(result, version) == sdk

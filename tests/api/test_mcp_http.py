"""`/mcp/`: the MCP SDK's own Streamable HTTP client drives the web app's MCP endpoint
on a live server, with a valid, a revoked, a foreign and no token."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
import requests
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pydantic import AnyUrl

from agentdocs.models import ApiToken, BindingRecord, ChangeRequest, Role, Scope
from agentdocs.services import tenants as tenant_service
from agentdocs.services import tokens as token_service
from config.celery import app as celery_app
from tests.cli.test_mcp import TOOLS, text_of
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
    body: Callable[[ClientSession], Awaitable[Any]],
    *,
    headers: dict[str, str] | None = None,
) -> Any:
    """Open an SDK client session on ``url`` over Streamable HTTP and run ``body`` in it."""

    async def session() -> Any:
        async with (
            httpx.AsyncClient(headers=headers, timeout=SESSION_SECONDS) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            return await body(client)

    async def bounded() -> Any:
        return await asyncio.wait_for(session(), SESSION_SECONDS)

    return asyncio.run(bounded())


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def refusal_of(error: BaseException) -> httpx.HTTPStatusError:
    """The HTTP error inside what the SDK client raised (an exception group, nested)."""
    pending = [error]
    while pending:
        current = pending.pop()
        if isinstance(current, httpx.HTTPStatusError):
            return current
        pending.extend(getattr(current, "exceptions", ()))
        if current.__cause__ is not None:
            pending.append(current.__cause__)
    raise AssertionError(f"no HTTP refusal in {error!r}")


@pytest.fixture
def mcp_url(live_server):
    return f"{live_server.url}/mcp/?tenant=acme&project=web"


@pytest.fixture
def reader_key(reader):
    return api_token_key(reader)


def test_the_tools_are_the_stdio_servers(mcp_url, documents, reader_key):
    async def body(client: ClientSession) -> tuple[Any, Any]:
        return await client.list_tools(), await client.list_prompts()

    tools, prompts = drive(mcp_url, body, headers=bearer(reader_key))
    assert {tool.name: set(tool.inputSchema["properties"]) for tool in tools.tools} == TOOLS
    assert [prompt.name for prompt in prompts.prompts] == ["house-rules"]


def test_a_valid_token_reads_the_project(mcp_url, documents, reader_key):
    async def body(client: ClientSession) -> dict[str, Any]:
        return {
            "block": await client.call_tool("get_memory_block", {"process": "http-run"}),
            "again": await client.call_tool("get_memory_block", {"process": "http-run"}),
            "listing": await client.call_tool("list_documents", {}),
            "first": await client.call_tool("read_document", {"path": "guide.md", "version": 1}),
            "search": await client.call_tool("search_documents", {"query": "zentinel"}),
            "resources": await client.list_resources(),
            "resource": await client.read_resource(
                AnyUrl("agentdocs://acme/web/documents/.AGENTS/overview.md")
            ),
            "prompt": await client.get_prompt("house-rules"),
        }

    got = drive(mcp_url, body, headers=bearer(reader_key))
    for name in ("block", "again", "listing", "first", "search"):
        assert not got[name].isError, text_of(got[name])
    assert "## Agent Notes (from _vance: agent.md)\n\n# House rules" in text_of(got["block"])
    # Read state is kept between HTTP requests, per process and token, as over REST.
    assert "Agent notes unchanged from an earlier turn" in text_of(got["again"])
    rows = got["listing"].structuredContent["result"]
    assert [row["path"] for row in rows] == [".AGENTS/overview.md", "guide.md"]
    assert got["first"].structuredContent["body"] == "Deploy on Fridays.\n"
    assert [m["path"] for m in got["search"].structuredContent["matches"]] == ["guide.md"]
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

    async def body(client: ClientSession) -> Any:
        return await client.call_tool("bind_run", {"process": "http-bind", "manifest": manifest})

    try:
        result = drive(
            f"{live_server.url}/mcp/acme/web/", body, headers=bearer(api_token_key(writer))
        )
    finally:
        celery_app.conf.task_always_eager = eager
    assert not result.isError, text_of(result)
    record = BindingRecord.objects.get(pk=result.structuredContent["id"])
    assert record.process == "http-bind"
    assert result.structuredContent["problem_count"] == record.problem_count == 1
    assert result.structuredContent["url"] == f"{live_server.url}/t/acme/web/bindings/{record.pk}/"


def test_the_project_may_be_named_in_headers(live_server, documents, reader_key):
    async def body(client: ClientSession) -> Any:
        return await client.call_tool("read_document", {"path": "guide.md"})

    headers = {**bearer(reader_key), "X-Agentdocs-Tenant": "acme", "X-Agentdocs-Project": "web"}
    result = drive(f"{live_server.url}/mcp", body, headers=headers)
    assert result.structuredContent["version"] == 2


def test_a_token_scopes_are_those_of_the_rest_api(mcp_url, documents, reader):
    key = token_service.token_create(user=reader, name="read only", scopes=[Scope.READ]).key

    async def body(client: ClientSession) -> tuple[Any, Any]:
        read = await client.call_tool("read_document", {"path": "guide.md"})
        block = await client.call_tool("get_memory_block", {"process": "p"})
        return read, block

    read, block = drive(mcp_url, body, headers=bearer(key))
    assert not read.isError
    assert block.isError
    assert block.structuredContent["error"] == "insufficient_scope"


def test_a_revoked_token_is_refused_with_401(mcp_url, documents, reader, admin):
    key = api_token_key(reader)
    token_service.token_revoke(token=ApiToken.objects.get(user=reader), actor=admin)

    async def body(client: ClientSession) -> None:
        return None

    with pytest.raises(BaseException) as refused:
        drive(mcp_url, body, headers=bearer(key))
    assert refusal_of(refused.value).response.status_code == 401
    answer = requests.post(mcp_url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, **bearer(key)})
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert answer.json()["error"] == "authentication_failed"
    assert answer.json()["detail"] == "This token was revoked."


def test_a_foreign_token_gets_not_found_tool_errors(
    mcp_url,
    documents,
    other_tenant,
    outsider,
):
    async def body(client: ClientSession) -> tuple[Any, Any]:
        block = await client.call_tool("get_memory_block", {"process": "spy"})
        read = await client.call_tool("read_document", {"path": "guide.md"})
        return block, read

    for result in drive(mcp_url, body, headers=bearer(api_token_key(outsider))):
        assert result.isError
        assert result.structuredContent == {
            "error": "not_found",
            "detail": "No such tenant.",
            "field": "tenant",
        }


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

    async def body(client: ClientSession) -> Any:
        return await client.call_tool("read_document", {"path": "guide.md"})

    result = drive(mcp_url, body, headers=bearer(key))
    assert result.isError
    assert result.structuredContent["error"] == "not_found"


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

    async def body(client: ClientSession) -> tuple[Any, Any, Any]:
        first = await client.call_tool("get_memory_block", {"process": "limited"})
        second = await client.call_tool("get_memory_block", {"process": "limited"})
        return first, second, await client.call_tool("read_document", {"path": "guide.md"})

    first, second, read = drive(mcp_url, body, headers=bearer(reader_key))
    assert not first.isError
    assert second.isError
    assert second.structuredContent["error"] == "rate_limited"
    assert not read.isError


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

    async def body(client: ClientSession) -> Any:
        return await client.call_tool(
            "propose_change",
            {"path": "agent.md", "body": "# House rules\n", "reason": "shorter"},
        )

    result = drive(f"{live_server.url}/mcp/acme/_vance/", body, headers=bearer(reader_key))
    assert not result.isError, result.content
    assert result.structuredContent["state"] == "open"
    change = ChangeRequest.objects.get(pk=result.structuredContent["id"])
    assert (change.project.slug, change.path, change.proposer.username) == (
        "_vance",
        "agent.md",
        "carol",
    )


def test_concurrent_callers_of_one_project_each_get_their_own_answers(
    mcp_url, documents, reader_key, other_tenant, outsider
):
    """The server kept for the project serves each request with its own token."""
    calls = 8
    outsider_key = api_token_key(outsider)

    async def reads(key: str) -> list[Any]:
        async with (
            httpx.AsyncClient(headers=bearer(key), timeout=SESSION_SECONDS) as http,
            streamable_http_client(mcp_url, http_client=http) as (read, write, _),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            return [
                await client.call_tool("read_document", {"path": "guide.md"}) for _ in range(calls)
            ]

    async def both() -> list[list[Any]]:
        return await asyncio.wait_for(
            asyncio.gather(reads(reader_key), reads(outsider_key)), SESSION_SECONDS
        )

    mine, theirs = asyncio.run(both())
    assert [result.structuredContent["version"] for result in mine] == [2] * calls
    assert [result.structuredContent["error"] for result in theirs] == ["not_found"] * calls


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

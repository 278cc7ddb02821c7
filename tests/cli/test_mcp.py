"""`agentdocs mcp`: the MCP SDK's own client drives the stdio server, which talks to a
live agentdocs server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from agentdocs.models import BindingRecord, ChangeRequest
from agentdocs.services import documents as document_service
from agentdocs.services import tenancy as tenant_service
from config.celery import app as celery_app
from tests.cli.test_main import run_cli
from tests.conftest import api_token_key

REPO = Path(__file__).resolve().parents[2]
SESSION_SECONDS = 60
TOOLS = {
    "get_memory_block": {"process", "recipe", "profile", "paths", "reset", "label"},
    "list_documents": {"prefix"},
    "read_document": {"path", "version"},
    "search_documents": {"query"},
    "propose_change": {"path", "body", "reason", "base_version", "process"},
    "bind_run": {"process", "manifest"},
    "read_skill": {"name", "process"},
    "report_outcome": {"process", "outcomes"},
}


def drive(
    token: str,
    url: str,
    body: Callable[[Client], Awaitable[Any]],
    *,
    project: str = "web",
    tenant: str = "acme",
    url_option: str = "--url",
    mode: str = "auto",
    extra: tuple[str, ...] = (),
) -> Any:
    """Start `python -m agentdocs.cli mcp` with a clean environment, connect the SDK's
    client to its stdio and run ``body`` in it, within SESSION_SECONDS.

    ``mode`` is the client's: "auto" probes with `server/discover` and speaks
    2026-07-28, "legacy" opens with the `initialize` handshake (2025-11-25)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(PYTHONPATH=str(REPO), AGENTDOCS_TOKEN=token)
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agentdocs.cli",
            "mcp",
            "--tenant",
            tenant,
            "--project",
            project,
            url_option,
            url,
            *extra,
        ],
        env=env,
        cwd=str(REPO),
    )

    async def session() -> Any:
        async with Client(parameters, mode=mode) as client:  # type: ignore[arg-type]
            return await body(client)

    async def bounded() -> Any:
        return await asyncio.wait_for(session(), SESSION_SECONDS)

    return asyncio.run(bounded())


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


def error_of(result: Any) -> dict[str, Any]:
    """The REST error of a refused tool call: its sentence, code and field are the text
    every client shows, the same fields ride in `_meta`, and no `structuredContent`
    (it would not validate against the tool's `outputSchema`)."""
    assert result.is_error, text_of(result)
    assert result.structured_content is None
    error: dict[str, Any] = result.meta["agentdocs/error"]
    assert text_of(result).startswith(error["detail"]), text_of(result)
    assert f"({error['error']}" in text_of(result)
    if error["field"]:
        assert f"field {error['field']}" in text_of(result)
    return error


@pytest.fixture
def documents(tenant, project, vance, make_document, admin):
    make_document(vance, "agent.md", "# House rules\n- be kind\n")
    make_document(project, ".AGENTS/overview.md", "What this is.\n")
    guide = make_document(project, "guide.md", "Deploy on Fridays.\n")
    document_service.document_write(
        document=guide,
        body="Never deploy on Fridays: the Zentinel WAF is tuned on Mondays.\n",
        base_version=1,
        user=admin,
        reason="no Friday deploys",
    )
    elsewhere = tenant_service.project_create(
        tenant=tenant, slug="elsewhere", name="Elsewhere", user=admin
    )
    make_document(elsewhere, "notes.md", "Zentinel lives here too.\n")


@pytest.fixture
def reader_key(reader):
    return api_token_key(reader)


def test_the_mcp_module_imports_no_django():
    code = (
        "import sys, agentdocs.cli.mcp; "
        "print([m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.stdout.strip() == "[]"


def test_without_a_token_the_command_stops_with_a_usage_error(tmp_path):
    result = run_cli(
        "mcp", "--tenant", "acme", "--project", "web", "--url", "http://127.0.0.1:9", cwd=tmp_path
    )
    assert result.returncode == 2
    assert b"--token missing" in result.stderr


def test_the_tools_keep_their_names_and_arguments(live_server, documents, reader_key):
    async def body(client: Client) -> dict[str, set[str]]:
        listed = await client.list_tools()
        return {tool.name: set(tool.input_schema["properties"]) for tool in listed.tools}

    assert drive(reader_key, live_server.url, body) == TOOLS


def test_get_memory_block_sends_stubs_on_later_turns_until_reset(
    live_server, documents, reader_key
):
    async def body(client: Client) -> list[str]:
        turns = []
        for arguments in (
            {"process": "mcp-run"},
            {"process": "mcp-run"},
            {"process": "mcp-run", "reset": True},
        ):
            result = await client.call_tool("get_memory_block", arguments)
            assert not result.is_error, text_of(result)
            turns.append(text_of(result))
        return turns

    first, second, after_reset = drive(reader_key, live_server.url, body)
    assert "## Agent Notes (from _vance: agent.md)\n\n# House rules" in first
    assert "What this is." in first
    assert "Agent notes unchanged from an earlier turn" in second
    assert "# House rules" not in second
    assert after_reset == first


def test_documents_are_listed_and_read_at_any_version(live_server, documents, reader_key):
    async def body(client: Client) -> tuple[Any, Any, Any, Any]:
        listing = await client.call_tool("list_documents", {})
        only = await client.call_tool("list_documents", {"prefix": ".AGENTS/"})
        current = await client.call_tool("read_document", {"path": "guide.md"})
        first = await client.call_tool("read_document", {"path": "guide.md", "version": 1})
        return listing, only, current, first

    listing, only, current, first = drive(reader_key, live_server.url, body)
    rows = listing.structured_content["result"]
    assert [row["path"] for row in rows] == [".AGENTS/overview.md", "guide.md"]
    assert set(rows[1]) == {"path", "version", "size", "updated"}
    assert rows[1]["version"] == 2
    assert [row["path"] for row in only.structured_content["result"]] == [".AGENTS/overview.md"]
    assert current.structured_content["version"] == 2
    assert current.structured_content["body"].startswith("Never deploy on Fridays")
    assert len(current.structured_content["sha256"]) == 64
    assert first.structured_content["version"] == 1
    assert first.structured_content["body"] == "Deploy on Fridays.\n"


def test_search_finds_the_projects_documents_only_ignoring_case(live_server, documents, reader_key):
    async def body(client: Client) -> tuple[Any, Any]:
        found = await client.call_tool("search_documents", {"query": "zentinel"})
        nothing = await client.call_tool("search_documents", {"query": "kubernetes"})
        return found, nothing

    found, nothing = drive(reader_key, live_server.url, body)
    result = found.structured_content
    assert result["complete"] is True
    assert result["documents_searched"] == 2
    assert [match["path"] for match in result["matches"]] == ["guide.md"]
    assert "the Zentinel WAF" in result["matches"][0]["snippet"]
    assert nothing.structured_content["matches"] == []


def test_bind_run_returns_the_record_id_problems_and_page(
    live_server, settings, tmp_path, documents, writer
):
    settings.MEDIA_ROOT = tmp_path / "media"
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    manifest = {"context": [], "local": ["guide.md", "missing.md"]}

    async def body(client: Client) -> Any:
        return await client.call_tool("bind_run", {"process": "mcp-bind", "manifest": manifest})

    try:
        result = drive(api_token_key(writer), live_server.url, body)
    finally:
        celery_app.conf.task_always_eager = eager
    assert not result.is_error, text_of(result)
    bound = result.structured_content
    record = BindingRecord.objects.get(pk=bound["id"])
    assert record.process == "mcp-bind"
    assert bound["problem_count"] == record.problem_count == 1
    assert bound["problems"][0]["path"] == "missing.md"
    assert bound["url"] == f"{live_server.url}/t/acme/web/bindings/{record.pk}/"


def test_resources_list_the_documents_and_read_them(live_server, documents, reader_key):
    async def body(client: Client) -> tuple[Any, ...]:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        block = await client.read_resource("agentdocs://acme/web/memory-block")
        guide = await client.read_resource("agentdocs://acme/web/documents/guide.md")
        nested = await client.read_resource("agentdocs://acme/web/documents/.AGENTS/overview.md")
        return listed, templates, block, guide, nested

    listed, templates, block, guide, nested = drive(reader_key, live_server.url, body)
    assert [str(resource.uri) for resource in listed.resources] == [
        "agentdocs://acme/web/memory-block",
        "agentdocs://acme/web/documents/.AGENTS/overview.md",
        "agentdocs://acme/web/documents/guide.md",
    ]
    assert [template.uri_template for template in templates.resource_templates] == [
        "agentdocs://acme/web/documents/{path}"
    ]
    assert "# House rules" in block.contents[0].text
    assert guide.contents[0].text.startswith("Never deploy on Fridays")
    assert nested.contents[0].text == "What this is.\n"


def test_the_house_rules_prompt_is_the_memory_block_preview(live_server, documents, reader_key):
    async def body(client: Client) -> tuple[Any, Any]:
        prompts = await client.list_prompts()
        return prompts, await client.get_prompt("house-rules")

    prompts, prompt = drive(reader_key, live_server.url, body)
    assert [listed.name for listed in prompts.prompts] == ["house-rules"]
    (message,) = prompt.messages
    assert message.role == "user"
    assert "## Agent Notes (from _vance: agent.md)\n\n# House rules" in message.content.text


def test_a_reader_proposes_into_vance_and_only_an_admin_approves(
    live_server, documents, reader_key, api, writer, admin
):
    async def body(client: Client) -> Any:
        return await client.call_tool(
            "propose_change",
            {"path": "agent.md", "body": "# House rules\n", "reason": "shorter"},
        )

    result = drive(reader_key, live_server.url, body, project="_vance")
    assert not result.is_error, text_of(result)
    proposed = result.structured_content
    change = ChangeRequest.objects.get()
    assert proposed["id"] == change.pk and proposed["state"] == "open"
    assert proposed["base_version"] == 1 and proposed["path"] == "agent.md"
    assert proposed["url"] == f"{live_server.url}/t/acme/_vance/changes/{change.pk}/"
    assert change.proposer.username == "carol" and change.body == "# House rules\n"
    reviews = f"/api/v1/tenants/acme/projects/_vance/changes/{change.pk}/reviews"
    assert api(writer).post(reviews, {"decision": "approve"}, format="json").status_code == 403
    approved = api(admin).post(reviews, {"decision": "approve"}, format="json")
    assert approved.json()["state"] == "approved"


def test_a_stale_base_version_is_kept_and_an_outsider_cannot_propose(
    live_server, documents, writer, outsider, other_tenant
):
    async def body(client: Client) -> Any:
        return await client.call_tool(
            "propose_change",
            {"path": "guide.md", "body": "Deploy any day.\n", "reason": "r", "base_version": 1},
        )

    result = drive(api_token_key(writer), live_server.url, body, url_option="--server")
    assert not result.is_error, text_of(result)
    assert result.structured_content["base_version"] == 1
    # An outsider's command does not start at all (see the refused start below).
    refused = run_cli(*mcp_arguments(live_server.url), cwd=REPO, env=token_env(outsider))
    assert refused.returncode == 2
    assert ChangeRequest.objects.count() == 1


def mcp_arguments(url: str, project: str = "web") -> tuple[str, ...]:
    return ("mcp", "--tenant", "acme", "--project", project, "--url", url)


def token_env(user: Any) -> dict[str, str]:
    return {"AGENTDOCS_TOKEN": api_token_key(user)}


@pytest.mark.parametrize(
    ("who", "named", "message"),
    [
        ("outsider", "web", "No such tenant. (not_found, field tenant; HTTP 404)"),
        ("reader", "nowhere", "(not_found, field project; HTTP 404)"),
        ("unknown token", "web", "(authentication_failed; HTTP 401)"),
    ],
)
def test_a_refused_start_prints_the_servers_message_and_exits_2(
    live_server, documents, other_tenant, outsider, reader, who, named, message
):
    """Before serving, the command starts the session: a client shows a server that
    exits as failed, with this message, not as connected."""
    env = {"AGENTDOCS_TOKEN": "adt_nothing_here"} if who == "unknown token" else {}
    env = env or token_env(outsider if who == "outsider" else reader)
    done = run_cli(*mcp_arguments(live_server.url, named), cwd=REPO, env=env)
    assert done.returncode == 2
    assert done.stdout == b""  # no MCP server ever spoke
    stderr = done.stderr.decode()
    assert stderr.startswith(f"agentdocs mcp: acme/{named} on {live_server.url}: "), stderr
    assert message in stderr
    assert "Traceback" not in stderr


def test_an_unreachable_server_is_a_refused_start(tmp_path, reader):
    done = run_cli(*mcp_arguments("http://127.0.0.1:9"), cwd=tmp_path, env=token_env(reader))
    assert done.returncode == 2
    assert b"cannot reach http://127.0.0.1:9" in done.stderr
    assert b"(unreachable" in done.stderr


def test_a_refused_argument_comes_back_with_our_error(live_server, documents, reader_key):
    async def body(client: Client) -> tuple[Any, Any]:
        missing = await client.call_tool("read_document", {"path": "nope.md"})
        bad = await client.call_tool("get_memory_block", {"process": "bad\nprocess"})
        return missing, bad

    missing, bad = drive(reader_key, live_server.url, body)
    assert missing.is_error and error_of(missing)["error"] == "not_found"
    assert bad.is_error and error_of(bad)["error"] == "invalid"
    assert json.dumps(error_of(bad))  # plain JSON, as the REST error


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_a_client_of_either_era_connects_over_stdio(
    live_server, documents, reader_key, mode, version
):
    async def body(client: Client) -> tuple[str, Any]:
        return client.protocol_version, await client.call_tool(
            "read_document", {"path": "guide.md"}
        )

    negotiated, read = drive(reader_key, live_server.url, body, mode=mode)
    assert negotiated == version
    assert read.structured_content["version"] == 2


def test_initialize_with_2025_06_18_is_answered_in_that_version(live_server, documents, reader_key):
    """An older client's handshake, line by line on the command's stdio."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(PYTHONPATH=str(REPO), AGENTDOCS_TOKEN=reader_key)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        },
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    lines = [initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"}, listing]
    # As a client does: stdin stays open until the answers are in (a server may drop a
    # request still in flight when its input ends).
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentdocs.cli",
            "mcp",
            "--tenant",
            "acme",
            "--project",
            "web",
            "--url",
            live_server.url,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert server.stdin is not None and server.stdout is not None
    answers: dict[int, dict] = {}
    try:
        for line in lines:
            server.stdin.write(json.dumps(line) + "\n")
            server.stdin.flush()
            if "id" in line:
                answer = json.loads(server.stdout.readline())
                answers[answer["id"]] = answer
    finally:
        server.stdin.close()
        server.wait(timeout=SESSION_SECONDS)
        server.stdout.close()
        assert server.stderr is not None
        server.stderr.close()
    assert answers[1]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[1]["result"]["serverInfo"]["name"] == "agentdocs"
    assert {tool["name"] for tool in answers[2]["result"]["tools"]} == set(TOOLS)


READ_ONLY = {
    "get_memory_block",
    "list_documents",
    "read_document",
    "search_documents",
    "read_skill",
}


def test_every_tool_has_a_title_and_truthful_annotations_and_the_server_its_version(
    live_server, documents, reader_key
):
    from importlib.metadata import version

    async def body(client: Client) -> tuple[Any, Any]:
        return client.server_info, await client.list_tools()

    server_info, listed = drive(reader_key, live_server.url, body, mode="legacy")
    assert (server_info.name, server_info.version) == ("agentdocs", version("agentdocs"))
    for tool in listed.tools:
        hints = tool.annotations
        assert tool.title and hints.title == tool.title
        assert hints.read_only_hint is (tool.name in READ_ONLY), tool.name
        assert hints.destructive_hint is False and hints.open_world_hint is False
        # Later turns of a process get stubs, and each proposal or binding is another.
        idempotent = tool.name in READ_ONLY - {"get_memory_block"}
        assert hints.idempotent_hint is idempotent, tool.name
    search = next(tool for tool in listed.tools if tool.name == "search_documents")
    assert "no search API" not in search.description
    assert "The server's search" in search.description

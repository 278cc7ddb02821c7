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

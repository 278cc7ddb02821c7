"""A `get_memory_block` tool call over `/mcp/` asks the database what the REST render
asks (issue 40): the token and the caller's access in one query, read once for both
the endpoint's own check and the tool's, and the render's rows."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.conftest import api_token_key

pytestmark = pytest.mark.django_db


def _call(process: str) -> str:
    arguments = {"process": process, "reset": True}
    call = {"name": "get_memory_block", "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})


def test_a_tool_call_renders_with_the_rest_renders_queries(
    client, project, make_document, reader, settings, django_assert_num_queries
):
    settings.AGENTDOCS_RENDER_CACHE = False  # the database path, as the REST test counts it
    make_document(project, "agent.md", "# Agent\n")
    key = api_token_key(reader)
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    rest = "/api/v1/tenants/acme/projects/web/memory-block/"
    for _ in range(2):  # warm: the signing key, prepared statements
        client.post(rest, {"process": f"p-{uuid.uuid4()}"}, content_type="application/json", **auth)
    # The token with the caller's access, then the render's reads.
    with django_assert_num_queries(2):
        answer = client.post(
            rest, {"process": f"p-{uuid.uuid4()}"}, content_type="application/json", **auth
        )
    assert answer.status_code == 200
    mcp = {**auth, "HTTP_ACCEPT": "application/json, text/event-stream"}
    with django_assert_num_queries(2):
        answer = client.post(
            "/mcp/acme/web/", _call(f"p-{uuid.uuid4()}"), content_type="application/json", **mcp
        )
    assert answer.status_code == 200
    assert not answer.json()["result"].get("isError"), answer.content
    assert "# Agent" in answer.json()["result"]["content"][0]["text"]


def test_an_outsiders_tool_call_is_still_a_404(client, project, outsider):
    key = api_token_key(outsider)
    answer = client.post(
        "/mcp/acme/web/",
        _call("p-1"),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
        HTTP_ACCEPT="application/json, text/event-stream",
    )
    assert answer.status_code == 404

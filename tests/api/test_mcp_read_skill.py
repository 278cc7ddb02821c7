"""MCP's `read_skill` tool (issue 37, for clients without the Skills extension): a skill
the project offers with every file, over the web app's `/mcp/` and the command line's
stdio server, the digests those of the files, and nothing of another tenant."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import requests
from mcp import Client

from agentdocs.services import skills as skill_service
from agentdocs.services import tenancy as tenant_service
from tests.api.test_mcp_http import INITIALIZE, JSON_RPC_HEADERS, bearer
from tests.api.test_mcp_http import drive as drive_http
from tests.cli.test_mcp import drive as drive_stdio
from tests.cli.test_mcp import error_of
from tests.conftest import api_token_key
from tests.skill_bundles import skill_md

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = "#!/bin/sh\necho handoff\n"


@pytest.fixture
def skills(tenant, project, vance, admin, outsider, other_tenant):
    skill_service.skill_create(
        project=vance,
        name="handoff",
        files={"SKILL.md": skill_md("handoff"), "scripts/run.sh": SCRIPT},
        user=admin,
    )
    skill_service.skill_create(
        project=project,
        name="review",
        files={"SKILL.md": skill_md("review", "Review a change."), "references/a.md": "A\n"},
        user=admin,
    )
    foreign = tenant_service.project_create(
        tenant=other_tenant, slug="web", name="Web", user=outsider
    )
    skill_service.skill_create(
        project=foreign,
        name="secret",
        files={"SKILL.md": skill_md("secret", "Globex only.")},
        user=outsider,
    )


async def _calls(client: Client) -> dict[str, Any]:
    return {
        "tenant": await client.call_tool("read_skill", {"name": "handoff"}),
        "own": await client.call_tool("read_skill", {"name": "review"}),
        "foreign": await client.call_tool("read_skill", {"name": "secret"}),
        "bad": await client.call_tool("read_skill", {"name": "../x"}),
    }


def _check(got: dict[str, Any]) -> None:
    handoff = got["tenant"].structured_content
    assert (handoff["name"], handoff["project"], handoff["version"]) == ("handoff", "_vance", 1)
    assert [f["path"] for f in handoff["files"]] == ["SKILL.md", "scripts/run.sh"]
    for file in handoff["files"]:
        assert file["sha256"] == hashlib.sha256(file["content"].encode()).hexdigest()
        assert file["size"] == len(file["content"].encode())
    assert handoff["files"][1]["content"] == SCRIPT
    review = got["own"].structured_content
    assert (review["project"], review["description"]) == ("web", "Review a change.")
    assert [f["path"] for f in review["files"]] == ["SKILL.md", "references/a.md"]
    # Another tenant's skill of that name is not there: the REST API's 404 naming `name`.
    foreign = error_of(got["foreign"])
    assert (foreign["error"], foreign["field"]) == ("not_found", "name")
    assert "Globex" not in str(got["foreign"].content)
    bad = error_of(got["bad"])
    assert (bad["error"], bad["field"]) == ("invalid", "name")


def test_read_skill_over_http(live_server, skills, reader):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    _check(drive_http(url, _calls, headers=bearer(api_token_key(reader))))


def test_read_skill_over_the_command_lines_stdio(live_server, skills, reader):
    _check(drive_stdio(api_token_key(reader), live_server.url, _calls))


def test_an_outsider_gets_the_rest_apis_404_for_the_tenants_project(live_server, skills, outsider):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "read_skill", "arguments": {"name": "handoff"}},
    }
    for message in (INITIALIZE, call):
        answer = requests.post(
            url, json=message, headers={**JSON_RPC_HEADERS, **bearer(api_token_key(outsider))}
        )
        assert answer.status_code == 404
        assert answer.json()["error"] == "not_found"
        assert "handoff" not in answer.text

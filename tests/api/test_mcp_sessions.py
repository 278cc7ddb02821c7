"""The start of an MCP session: the house rules in the server's instructions, within
their budget, bound in a record that gives their exact text again; over `/mcp/`
(`initialize`, `server/discover`), over stdio and as the REST call both make."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.models import BindingRecord, Scope
from agentdocs.selectors import binding_checks
from agentdocs.services import tokens as token_service
from tests.api.test_mcp_http import (
    INITIALIZE,
    JSON_RPC_HEADERS,
    bearer,
    modern_headers,
    modern_request,
)
from tests.cli.test_mcp import Client, drive
from tests.cli.test_mcp import documents as documents  # the stdio tests fixture, shared
from tests.conftest import api_token_key

SESSIONS = "/api/v1/tenants/acme/projects/web/mcp-sessions/"
RULES = "## Agent Notes (from _vance: agent.md)\n\n# House rules\n- be kind"


@pytest.fixture
def mcp_url(live_server):
    return f"{live_server.url}/mcp/acme/web/"


def initialize(url: str, key: str, **headers: str) -> dict[str, Any]:
    answer = requests.post(
        url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, **bearer(key), **headers}
    )
    assert answer.status_code == 200, answer.content
    result: dict[str, Any] = answer.json()["result"]
    return result


def assert_bound(record: BindingRecord, instructions: str) -> None:
    """The record of a session's start gives its instructions again, byte for byte."""
    assert record.problem_count == 0
    bound = record.record["memory_block"]["instructions"]
    assert bound["bytes"] == len(instructions.encode("utf-8"))
    assert bound["form"] == 2  # the first line's form, which says where the rules are
    rebuilt = binding_checks.binding_reconstruct(record=record)["memory_block"]
    assert rebuilt["verified"] is True
    assert rebuilt["instructions"] == instructions


def test_initialize_gives_the_house_rules_and_binds_them(mcp_url, documents, reader):
    instructions = initialize(mcp_url, api_token_key(reader))["instructions"]
    assert instructions.startswith("The house rules of the project acme/web")
    assert RULES in instructions
    assert "What this is." in instructions  # the always-applied .AGENTS/ context
    # The sentence with the process before the rules (a client's cut keeps it).
    sentence = instructions.index("find them with list_documents and search_documents.")
    assert sentence < instructions.index(RULES)
    (record,) = BindingRecord.objects.all()
    assert record.process.startswith("mcp-") and f"'{record.process}'" in instructions
    assert record.created_by == reader
    assert_bound(record, instructions)


def test_the_clients_session_id_names_the_process(mcp_url, documents, reader):
    instructions = initialize(mcp_url, api_token_key(reader), **{"Mcp-Session-Id": "run-42"})[
        "instructions"
    ]
    record = BindingRecord.objects.get()
    assert record.process == "run-42"
    assert "'run-42'" in instructions


def test_server_discover_starts_a_session_too(mcp_url, documents, reader):
    key = api_token_key(reader)
    answer = requests.post(
        mcp_url,
        json=modern_request("server/discover"),
        headers=modern_headers(key, "server/discover"),
    )
    instructions = answer.json()["result"]["instructions"]
    assert RULES in instructions
    assert_bound(BindingRecord.objects.get(), instructions)


def test_the_rules_are_cut_to_their_budget_visibly(mcp_url, settings, documents, reader):
    settings.AGENTDOCS_MCP_INSTRUCTIONS_BYTES = 120
    instructions = initialize(mcp_url, api_token_key(reader))["instructions"]
    parts = instructions.rstrip("\n").split("\n\n")
    marker = next(part for part in parts if part.startswith("[truncated: "))
    assert marker.endswith(" more bytes]")
    intro = "as it stands at the start of this session:\n\n"
    rules = instructions[
        instructions.index(intro) + len(intro) : instructions.index(marker) + len(marker)
    ]
    assert rules.startswith("## Agent Notes")
    assert len(rules.encode("utf-8")) <= 120
    assert instructions.rstrip().endswith(marker)  # the rules' cut is the end
    assert "search_documents." in instructions  # the sentence is whole, before them
    assert_bound(BindingRecord.objects.get(), instructions)


def test_the_stdio_command_gives_the_rules_and_binds_them(live_server, documents, reader):
    async def body(client: Client) -> str | None:
        return client.instructions

    for mode in ("legacy", "auto"):
        instructions = drive(api_token_key(reader), live_server.url, body, mode=mode)
        assert instructions is not None and RULES in instructions
        record = BindingRecord.objects.order_by("-pk").first()
        assert record is not None and f"'{record.process}'" in instructions
        assert_bound(record, instructions)
    assert BindingRecord.objects.count() == 2  # one session each


def test_a_token_that_may_not_render_gets_no_rules_and_no_record(mcp_url, documents, reader):
    key = token_service.token_create(user=reader, name="read only", scopes=[Scope.READ]).key
    instructions = initialize(mcp_url, key)["instructions"]
    assert "no `render` scope" in instructions
    assert "# House rules" not in instructions
    assert not BindingRecord.objects.exists()


def test_a_refused_start_over_http_is_said_in_the_instructions(
    mcp_url, settings, documents, reader
):
    settings.AGENTDOCS_RATE_LIMITS = {**settings.AGENTDOCS_RATE_LIMITS, "bind": "1/min"}
    key = api_token_key(reader)
    initialize(mcp_url, key)
    instructions = initialize(mcp_url, key)["instructions"]
    assert "agentdocs refused this session's start: " in instructions
    assert "(rate_limited" in instructions
    assert "# House rules" not in instructions
    assert BindingRecord.objects.count() == 1


def test_an_outsider_starts_no_session_over_http(mcp_url, documents, other_tenant, outsider):
    answer = requests.post(
        mcp_url, json=INITIALIZE, headers={**JSON_RPC_HEADERS, **bearer(api_token_key(outsider))}
    )
    assert answer.status_code == 404
    assert answer.json()["detail"] == "No such tenant."
    assert not BindingRecord.objects.exists()


def test_the_rest_call_answers_the_process_instructions_and_record(api, documents, reader):
    answer = api(reader).post(SESSIONS, {"session": "cli-7"}, format="json")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    record = BindingRecord.objects.get()
    assert body["process"] == "cli-7" and body["record"] == record.pk
    assert answer["Location"].endswith(f"/bindings/{record.pk}")
    assert RULES in body["instructions"]
    reconstructed = api(reader).get(
        f"/api/v1/tenants/acme/projects/web/bindings/{record.pk}/reconstruct"
    )
    assert reconstructed.status_code == 200, reconstructed.content
    assert reconstructed.json()["memory_block"]["instructions"] == body["instructions"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"session": "two\nlines"}, "session"),
        ({"session": "x" * 201}, "session"),
        ({"other": 1}, "other"),
    ],
)
def test_a_bad_session_is_refused_and_nothing_is_bound(api, documents, reader, payload, field):
    answer = api(reader).post(SESSIONS, payload, format="json")
    assert answer.status_code == 400, answer.content
    assert answer.json()["field"] == field
    assert not BindingRecord.objects.exists()


def test_another_tenants_member_finds_no_project(api, documents, other_tenant, outsider):
    answer = api(outsider).post(SESSIONS, {}, format="json")
    assert answer.status_code == 404
    assert not BindingRecord.objects.exists()


def test_the_start_runs_a_constant_number_of_queries(
    api, documents, reader, project, make_document
):
    client = api(reader)
    assert client.post(SESSIONS, {}, format="json").status_code == 201
    with CaptureQueriesContext(connection) as small:
        assert client.post(SESSIONS, {}, format="json").status_code == 201
    for number in range(15):
        make_document(project, f".AGENTS/more-{number}.md", f"{number}\n")
    assert client.post(SESSIONS, {}, format="json").status_code == 201
    with CaptureQueriesContext(connection) as large:
        assert client.post(SESSIONS, {}, format="json").status_code == 201
    assert len(large) == len(small), json.dumps([q["sql"][:80] for q in large.captured_queries])


@pytest.fixture
def canary(documents, vance, admin):
    """_vance/agent.md at version 2 for everyone, with `canary` on a version 3 that
    only canary readers get."""
    from agentdocs.models import Document
    from agentdocs.services import documents as document_service
    from agentdocs.services import labels as label_service

    house = Document.objects.get(project=vance, path="agent.md")
    house = document_service.document_write(
        document=house, body="# House rules\n- be kind\n- canary rule\n", base_version=1,
        user=admin, reason="try it",
    ).document  # fmt: skip
    label_service.label_move(document=house, name="canary", version=2, user=admin, reason="try")
    document_service.document_write(
        document=house, body="# House rules\n- be kind\n", base_version=2, user=admin,
        reason="back for everyone",
    )  # fmt: skip


def test_a_session_started_by_a_label_carries_that_label_s_rules(api, canary, reader):
    answer = api(reader).post(SESSIONS, {"session": "c-1", "label": "canary"}, format="json")
    assert answer.status_code == 201, answer.content
    assert "- canary rule" in answer.json()["instructions"]
    record = BindingRecord.objects.get()
    assert_bound(record, answer.json()["instructions"])
    plain = api(reader).post(SESSIONS, {"session": "p-1"}, format="json").json()
    assert "- canary rule" not in plain["instructions"]
    refused = api(reader).post(SESSIONS, {"label": "Not A Slug"}, format="json")
    assert refused.status_code == 400 and refused.json()["field"] == "label"
    assert BindingRecord.objects.count() == 2


@pytest.mark.parametrize("how", ["query", "header"])
def test_an_http_client_s_label_reaches_its_instructions_and_its_calls(
    live_server, canary, reader, how
):
    key = api_token_key(reader)
    url = f"{live_server.url}/mcp/acme/web/"
    headers: dict[str, str] = {}
    if how == "query":
        url += "?label=canary"
    else:
        headers["X-Agentdocs-Label"] = "canary"
    assert "- canary rule" in initialize(url, key, **headers)["instructions"]
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "get_memory_block", "arguments": {"process": f"c-{how}"}},
    }
    answer = requests.post(url, json=call, headers={**JSON_RPC_HEADERS, **bearer(key), **headers})
    assert answer.status_code == 200, answer.content
    assert "- canary rule" in answer.json()["result"]["content"][0]["text"]
    call["params"]["arguments"] = {"process": f"l-{how}", "label": "latest"}  # type: ignore[index]
    answer = requests.post(url, json=call, headers={**JSON_RPC_HEADERS, **bearer(key), **headers})
    assert "- canary rule" not in answer.json()["result"]["content"][0]["text"]
    bad = requests.post(
        f"{live_server.url}/mcp/acme/web/?label=Not%20A%20Slug",
        json=INITIALIZE,
        headers={**JSON_RPC_HEADERS, **bearer(key)},
    )
    assert bad.status_code == 400 and bad.json()["field"] == "label"


def test_the_stdio_command_s_label_reaches_its_instructions(live_server, canary, reader):
    async def body(client: Client) -> str | None:
        return client.instructions

    instructions = drive(
        api_token_key(reader), live_server.url, body, mode="legacy", extra=("--label", "canary")
    )
    assert instructions is not None and "- canary rule" in instructions

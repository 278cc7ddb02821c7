"""The costs over days count every render the server makes (REST, MCP), from per-day
counters a render adds to without a round trip or a query of its own, folded into the
database (`agentdocs.services.render_costs`)."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.cache import cache

from agentdocs.core.token_count import count_tokens
from agentdocs.models import RenderTurns
from agentdocs.services import render_costs
from tests.api.test_costs import AGENT, AGENT_STUB, URL
from tests.conftest import api_token_key

pytestmark = pytest.mark.django_db

RENDER = "/api/v1/tenants/acme/projects/web/memory-block/"


@pytest.fixture
def documents(project, make_document):
    make_document(project, "agent.md", "Use tabs.\n" * 20)


@pytest.fixture
def auth(reader):
    cache.clear()
    return {"HTTP_AUTHORIZATION": f"Bearer {api_token_key(reader)}"}


def rest(client, auth, process: str, **extra) -> None:
    body = {"process": process, **extra}
    answer = client.post(RENDER, body, content_type="application/json", **auth)
    assert answer.status_code == 200, answer.content


def mcp(client, auth, process: str) -> None:
    call = {"name": "get_memory_block", "arguments": {"process": process}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    headers = {**auth, "HTTP_ACCEPT": "application/json, text/event-stream"}
    answer = client.post("/mcp/acme/web/", body, content_type="application/json", **headers)
    assert answer.status_code == 200 and not answer.json()["result"].get("isError")


def test_rest_and_mcp_renders_are_counted_per_document(client, api, reader, documents, auth):
    rest(client, auth, "p1")  # a first turn: in full
    rest(client, auth, "p1")  # the next: a stub
    mcp(client, auth, "p2")  # in full, over MCP
    mcp(client, auth, "p2")
    window = api(reader).get(URL, {"days": 1}).json()["window"]
    rows = {row["document"]: row for row in window["documents"]}
    agent, stub = count_tokens(AGENT), count_tokens(AGENT_STUB)
    assert rows["agent.md"]["turns_full"] == 2 and rows["agent.md"]["turns_stub"] == 2
    assert rows["agent.md"]["tokens_delivered"] == 2 * agent + 2 * stub
    assert rows["agent.md"]["tokens_if_full"] == 4 * agent
    assert rows["agent.md"]["bytes_delivered"] == 2 * len(AGENT) + 2 * len(AGENT_STUB)
    assert window["totals"]["turns"] == 4 and window["totals"]["processes"] == 2
    assert window["totals"]["tokens_saved"] == 2 * (agent - stub)


def test_a_preview_is_no_turn(client, api, reader, documents, auth):
    answer = client.get(RENDER, **auth)  # GET: a preview
    assert answer.status_code == 200, answer.content
    assert api(reader).get(URL).json()["window"]["totals"]["turns"] == 0


def test_the_fold_keeps_the_counts_once_the_cache_has_lost_them(
    client, project, api, reader, documents, auth
):
    for _ in range(3):
        rest(client, auth, f"p-{uuid.uuid4()}")
    assert render_costs.render_turns_fold(project_ids=[project.pk]) == 1
    assert render_costs.render_turns_fold(project_ids=[project.pk]) == 0  # nothing new
    (row,) = RenderTurns.objects.filter(project=project)
    assert row.turns == 3
    cache.clear()  # a restarted cache: what was folded stays, and is never lowered
    rest(client, auth, f"p-{uuid.uuid4()}")
    render_costs.render_turns_fold()
    assert RenderTurns.objects.get(pk=row.pk).turns == 3
    totals = api(reader).get(URL).json()["window"]["totals"]
    assert totals["turns"] == 3 and totals["processes"] == 3


def test_the_render_asks_the_database_nothing_more(
    client, project, documents, auth, settings, django_assert_num_queries
):
    settings.AGENTDOCS_RENDER_CACHE = False  # the database path, as the REST test counts it
    for _ in range(2):
        rest(client, auth, f"p-{uuid.uuid4()}")
    with django_assert_num_queries(2):  # the token with the caller's access, the rows
        rest(client, auth, f"p-{uuid.uuid4()}")
    assert RenderTurns.objects.count() == 0  # counted in the cache, not the database


def test_another_tenants_renders_are_not_this_projects(
    client, api, reader, outsider, other_tenant, project, documents, auth
):
    rest(client, auth, "p1")
    assert api(outsider).get(URL).status_code == 404
    theirs = other_tenant.projects.get(slug="_vance")
    assert render_costs.counted_turns(project=theirs, since=project.created_at.date()) == []


def test_the_embedded_default_disk_cache_counts_too(
    client, project, api, reader, documents, auth, settings, tmp_path
):
    """Without Redis: each shape a counter of its own in the disk cache, listed in the
    day's slots, and folded the same way."""
    location = str(tmp_path / "shared")
    settings.CACHES = {"default": {"BACKEND": "agentdocs.cache.DiskCache", "LOCATION": location}}
    for process in ("p1", "p1", "p2"):
        rest(client, auth, process)
    assert render_costs.render_turns_fold(project_ids=[project.pk]) == 2  # full and stub
    turns = dict(
        (json.loads(row.shape)[1], row.turns) for row in RenderTurns.objects.filter(project=project)
    )
    assert turns == {1: 2, 0: 1}  # two first turns (in full), one later (stubs)

"""`GET .../costs/`: the Memory Block per turn for each recipe, full and as stubs, and
the tokens delivered per document over the last days, with what the per-process dedup
saved; against a fixture of turns a session hook delivered from its cache, with
hand-computed sizes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agentdocs.core.costs import CONTEXT_LAYER, OTHER, POLICY
from agentdocs.core.hook_delivery import hook_output, sha256_text
from agentdocs.core.memory_block import UNCHANGED_STUBS, LayerKind
from agentdocs.core.token_count import TOKENIZER, count_tokens
from agentdocs.models import BindingRecord
from agentdocs.services import memory_block as memory_block_service
from agentdocs.services import policy as policy_service

pytestmark = pytest.mark.django_db

URL = "/api/v1/tenants/acme/projects/web/costs/"

AGENT_BODY = "Use tabs.\n" * 20
AGENT = "## Agent Notes (agent.md)\n\n" + AGENT_BODY.rstrip()  # 25 + 2 + 199 = 226 bytes
AGENT_STUB = "## Agent Notes (agent.md)\n\n" + UNCHANGED_STUBS[LayerKind.AGENT_NOTES]
STYLE_BODY = "Short lines.\n" * 10
# 34 (the opening tag and its line break) + 129 + 1 + 10 (`</context>`) = 174 bytes
STYLE = '<context path=".AGENTS/style.md">\n' + STYLE_BODY.rstrip() + "\n</context>"
CONTEXT_OWN = "## Project Context (.AGENTS/)\n\nIntro.\n\n"
CONTEXT = CONTEXT_OWN + STYLE
CONTEXT_STUB = "## Project Context (.AGENTS/)\n\n" + UNCHANGED_STUBS[LayerKind.CONTEXT]


def block(*layers: str) -> str:
    return "\n\n".join(layers) + "\n"


def delivered(project, process: str, text: str, *, ago: timedelta = timedelta(hours=1)):
    """A binding record as `agentdocs hook context` leaves one when it served the block
    from its cache, the server being down (a block the server rendered is counted with
    the renders, tests/api/test_costs_renders.py): what it delivered."""
    output = hook_output(tool="claude-code", event="SessionStart", text=text)
    return BindingRecord.objects.create(
        tenant=project.tenant,
        project=project,
        process=process,
        created_at=timezone.now() - ago,
        schema="context-binding/v1",
        problem_count=0,
        record={
            "process": process,
            "delivery": {
                "tool": "claude-code",
                "event": "SessionStart",
                "source": "startup",
                "format": "additionalContext",
                "bytes": len(output.encode()),
                "sha256": sha256_text(output),
                "output": output,
                "received": {"usable": True, "context_sha256": None, "context_bytes": None},
                "block": "cache",
            },
        },
    )


@pytest.fixture
def documents(project, make_document):
    make_document(project, "agent.md", AGENT_BODY)
    make_document(project, ".AGENTS/style.md", STYLE_BODY)


def test_the_tokenizer_counts_as_cl100k_base_does():
    # tiktoken's own example: "hello world" is [15339, 1917] in cl100k_base.
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0
    assert "cl100k_base" in TOKENIZER


def test_each_recipe_says_its_block_per_turn_full_and_as_stubs(
    api, admin, reader, project, documents
):
    policy_service.recipe_create(
        tenant=project.tenant,
        name="reviewer",
        params={"agentDocument": None},
        profiles={},
        user=admin,
        reason="fixture",
    )
    response = api(reader).get(URL)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["tokenizer"] == TOKENIZER
    default, reviewer = body["recipes"]
    assert default["recipe"] is None and reviewer["recipe"] == "reviewer"
    full = memory_block_service.render_memory_block(project=project, preview=True).text
    assert default["full"] == {"bytes": len(full.encode()), "tokens": count_tokens(full)}
    # Every layer a stub: the agent notes' and the context's.
    stub = block(AGENT_STUB, CONTEXT_STUB)
    assert default["stub"] == {"bytes": len(stub.encode()), "tokens": count_tokens(stub)}
    parts = {row["document"]: row for row in default["documents"]}
    assert parts["agent.md"]["bytes"] == 226
    assert parts["agent.md"]["tokens"] == count_tokens(AGENT)
    assert parts[".AGENTS/style.md"]["bytes"] == 174
    # The reviewer's recipe turns the agent document off: only the context is left.
    assert "agent.md" not in {row["document"] for row in reviewer["documents"]}
    assert reviewer["full"]["bytes"] < default["full"]["bytes"]


def test_the_turns_delivered_add_up_per_document_with_what_the_dedup_saved(
    api, reader, project, documents
):
    full = block(AGENT, CONTEXT)
    later = block(AGENT_STUB, CONTEXT_STUB)
    delivered(project, "p1", full, ago=timedelta(hours=3))
    delivered(project, "p1", later, ago=timedelta(hours=2))
    delivered(project, "p1", later, ago=timedelta(hours=1))
    delivered(project, "p2", "agentdocs: relies on CLAUDE.md.\n\n" + full)
    # Older than the window, and a delivery that carried no block: neither counts.
    delivered(project, "p3", full, ago=timedelta(days=8))
    none = delivered(project, "p4", full)
    none.record["delivery"]["block"] = "none"
    none.save()

    response = api(reader).get(URL, {"days": 7})
    assert response.status_code == 200, response.content
    window = response.json()["window"]
    assert window["days"] == 7 and window["truncated"] is False
    rows = {row["document"]: row for row in window["documents"]}

    agent, agent_stub = count_tokens(AGENT), count_tokens(AGENT_STUB)
    assert rows["agent.md"] == {
        "document": "agent.md",
        "turns_full": 2,
        "turns_stub": 2,
        "bytes_delivered": 2 * 226 + 2 * len(AGENT_STUB.encode()),
        "tokens_delivered": 2 * agent + 2 * agent_stub,
        "tokens_if_full": 4 * agent,
        "tokens_saved": 4 * agent - (2 * agent + 2 * agent_stub),
    }
    style = count_tokens(STYLE)
    assert rows[".AGENTS/style.md"]["bytes_delivered"] == 2 * 174
    assert rows[".AGENTS/style.md"]["tokens_delivered"] == 2 * style
    assert rows[".AGENTS/style.md"]["tokens_if_full"] == 4 * style
    assert rows[".AGENTS/style.md"]["turns_stub"] == 2
    own, context_stub = count_tokens(CONTEXT_OWN), count_tokens(CONTEXT_STUB)
    assert rows[CONTEXT_LAYER]["tokens_delivered"] == 2 * own + 2 * context_stub
    assert rows[OTHER]["bytes_delivered"] == len(b"agentdocs: relies on CLAUDE.md.\n\n")
    assert POLICY not in rows
    totals = window["totals"]
    assert totals["processes"] == 2 and totals["turns"] == 4
    assert totals["tokens_delivered"] == sum(r["tokens_delivered"] for r in rows.values())
    assert totals["tokens_saved"] == totals["tokens_if_full"] - totals["tokens_delivered"]
    assert totals["tokens_saved"] > 0
    assert window["tokens_delivered_per_day"] == round(totals["tokens_delivered"] / 7, 1)


def test_a_stub_whose_full_turn_is_not_read_is_held_against_the_block_now(
    api, reader, project, documents
):
    delivered(project, "p1", block(AGENT_STUB, CONTEXT_STUB))
    rows = {r["document"]: r for r in api(reader).get(URL).json()["window"]["documents"]}
    assert rows["agent.md"]["tokens_if_full"] == count_tokens(AGENT)
    assert rows["agent.md"]["tokens_delivered"] == count_tokens(AGENT_STUB)
    assert rows[".AGENTS/style.md"]["tokens_if_full"] == count_tokens(STYLE)


@pytest.mark.parametrize("days", ["0", "366", "-1", "seven", "1.5", "1e3"])
def test_days_out_of_range_is_400_naming_days(api, reader, project, days):
    response = api(reader).get(URL, {"days": days})
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "days"
    assert "1 to 365" in response.json()["detail"]


def test_days_at_its_bounds_is_answered(api, reader, project):
    for days in (1, 365):
        assert api(reader).get(URL, {"days": days}).status_code == 200


def test_another_tenants_user_gets_404(api, outsider, other_tenant, project, documents):
    delivered(project, "p1", block(AGENT, CONTEXT))
    response = api(outsider).get(URL)
    assert response.status_code == 404
    assert "agent.md" not in response.content.decode()


def test_the_query_count_does_not_grow_with_the_turns(api, reader, project, documents):
    client = api(reader)
    client.get(URL)  # the token's first use and the render rows, out of the count
    delivered(project, "p1", block(AGENT, CONTEXT))
    with CaptureQueriesContext(connection) as few:
        assert client.get(URL).status_code == 200
    for number in range(40):
        delivered(project, f"p{number}", block(AGENT, CONTEXT))
        delivered(project, f"p{number}", block(AGENT_STUB, CONTEXT_STUB))
    with CaptureQueriesContext(connection) as many:
        response = client.get(URL)
    assert response.json()["window"]["totals"]["turns"] == 81
    assert len(many.captured_queries) == len(few.captured_queries)

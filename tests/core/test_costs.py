"""`core.costs`: a delivered block read back as its documents, and turns added up."""

from __future__ import annotations

from agentdocs.core.costs import (
    CONTEXT_LAYER,
    FULL,
    OTHER,
    POLICY,
    SKILLS,
    STUB,
    TurnCosts,
    agent_notes_document,
    delivered_layers,
)
from agentdocs.core.memory_block import UNCHANGED_STUBS, LayerKind
from agentdocs.core.skill_index import SKILLS_HEADING
from agentdocs.core.token_count import count_tokens

POLICY_LAYER = "## Policy (memory.* settings)\n\n- memory.language: en"
AGENT = "## Agent Notes (agent.md)\n\nUse tabs."
CONTEXT = (
    "## Project Context (.AGENTS/)\n\nIntro.\n\n"
    '<context path=".AGENTS/a.md">\nA.\n</context>\n\n'
    '<context path=".AGENTS/b.md">\nB b.\n</context>'
)
SKILLS_LAYER = SKILLS_HEADING + "\n\n- review: reviews code"


def test_a_block_reads_back_as_its_documents():
    text = "\n\n".join([POLICY_LAYER, AGENT, CONTEXT, SKILLS_LAYER]) + "\n"
    layers, before = delivered_layers(text)
    assert before is None
    assert [layer.state for layer in layers] == [FULL] * 4
    names = [[piece.name for piece in layer.pieces] for layer in layers]
    assert names == [
        [POLICY],
        ["agent.md"],
        [CONTEXT_LAYER, ".AGENTS/a.md", ".AGENTS/b.md"],
        [SKILLS],
    ]
    context = layers[2].pieces
    assert context[1].bytes == len('<context path=".AGENTS/a.md">\nA.\n</context>')
    # The pieces add up to the text but the blank lines that join the layers.
    assert sum(p.bytes for layer in layers for p in layer.pieces) == len(text.encode()) - 3 * 2 - 1


def test_a_stub_is_a_stub_and_a_preface_is_counted_apart():
    stub = "## Agent Notes (agent.md)\n\n" + UNCHANGED_STUBS[LayerKind.AGENT_NOTES]
    layers, before = delivered_layers("Relies on CLAUDE.md.\n\n" + stub + "\n")
    assert before is not None and before.name == OTHER
    assert [(layer.state, layer.pieces[0].name) for layer in layers] == [(STUB, "agent.md")]
    assert delivered_layers("not a block\n") == ((), delivered_layers("not a block\n")[1])


def test_agent_notes_headings_name_their_document():
    assert agent_notes_document("## Agent Notes (agent.md)") == "agent.md"
    assert agent_notes_document("## Agent Notes (from _vance: agent.md)") == "_vance/agent.md"
    assert agent_notes_document("## Agent Notes (system default: agent.md)") == "default: agent.md"
    assert agent_notes_document("## Agent Notes (from client: CLAUDE.md)") == "client: CLAUDE.md"


def test_a_stub_saves_what_the_same_process_last_received_in_full():
    stub = "## Agent Notes (agent.md)\n\n" + UNCHANGED_STUBS[LayerKind.AGENT_NOTES]
    long_agent = "## Agent Notes (agent.md)\n\n" + "Use tabs.\n" * 30
    costs = TurnCosts()
    costs.add_turn(process="p", text=long_agent + "\n")
    costs.add_turn(process="p", text=stub + "\n")
    (row,) = costs.documents()
    full, sent = count_tokens(long_agent.rstrip("\n")), count_tokens(stub)
    assert row["tokens_delivered"] == full + sent
    assert row["tokens_if_full"] == 2 * full
    assert row["tokens_saved"] == full - sent > 0
    assert costs.totals()["processes"] == 1 and costs.totals()["turns"] == 2

"""The MCP session instructions, pure: the house rules within a byte budget, cut
visibly, then the sentence about get_memory_block."""

from __future__ import annotations

import pytest

from agentdocs.core.mcp_instructions import compose_instructions, cut_to_budget


def test_a_text_that_fits_is_whole():
    assert cut_to_budget("# Rules\n- be kind", 17) == "# Rules\n- be kind"


@pytest.mark.parametrize("budget", [0, 10, 40, 41, 100, 1000])
def test_a_cut_text_is_within_its_budget_and_says_how_much_is_left_out(budget):
    text = "é" * 600  # two bytes each: a cut never splits a character
    cut = cut_to_budget(text, budget)
    assert len(cut.encode("utf-8")) <= max(budget, len(f"\n\n[truncated: {1200} more bytes]"))
    head, _, marker = cut.rpartition("\n\n")
    assert marker == f"[truncated: {1200 - len(head.encode('utf-8'))} more bytes]"
    assert set(head) <= {"é"}


def test_the_instructions_carry_the_rules_then_the_sentence():
    text = compose_instructions(
        tenant="acme",
        project="web",
        process="mcp-1",
        house_rules="## Policy\n\nbe kind\n",
        budget_bytes=1000,
    )
    first, _, _ = text.partition("\n")
    # The first line alone says where the rules are (Codex keeps nothing else).
    assert first == (
        "The house rules of the project acme/web, from agentdocs: call get_memory_block "
        "for them, whole and current, at the start of each task."
    )
    # The sentence naming the process comes before the rules: a client that cuts the
    # instructions (Claude Code, at 4,096 characters) keeps it.
    rules = text.index("## Policy\n\nbe kind")
    sentence = text.index("call get_memory_block with the id of your process")
    assert sentence < rules
    assert "'mcp-1'" in text


def test_without_rules_only_the_note_and_the_sentence():
    text = compose_instructions(
        tenant="acme", project="web", process=None, house_rules="", note="Not allowed."
    )
    assert "Not allowed." in text and "call get_memory_block" in text
    assert "session's is" not in text


def test_a_record_of_the_first_form_gets_its_first_line_again():
    old = compose_instructions(
        tenant="acme", project="web", process="p", house_rules="rules", form=1
    )
    assert old.startswith("The house rules of the project acme/web, from agentdocs.\n\n")
    assert old.rstrip().endswith("search_documents.")  # form 1: the sentence after the rules
    assert old.index("rules") < old.index("call get_memory_block with")
    new = compose_instructions(tenant="acme", project="web", process="p", house_rules="rules")
    assert sorted(new.rstrip().split("\n\n")[1:]) == sorted(old.rstrip().split("\n\n")[1:])
    assert new != old

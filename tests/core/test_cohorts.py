"""What a run saw, read from its binding record as cohorts group runs: the block's label
and recipe, and each document's version (the block's layers first, then the
manifest's entries; the first that names a path wins)."""

from __future__ import annotations

from agentdocs.core.cohorts import run_cohorts


def test_the_blocks_layers_come_before_the_manifests_entries():
    record = {
        "memory_block": {
            "label": "canary",
            "recipe": "lean",
            "layers": [
                {"path": "agent.md", "version": 3},
                {"path": None, "version": None},
                {"path": ".AGENTS/x.md", "version": None},
                {"path": "agent.md", "version": 9},
            ],
        },
        "context": [
            {"document": {"path": "agent.md", "version": 7}},
            {"document": {"path": "notes.md", "version": None}},
            {"document": {"path": "notes.md", "version": 2}},
            {"document": {"path": ".AGENTS/x.md", "version": 4}},
            {"name": "no document"},
        ],
    }
    assert run_cohorts(record) == {
        "label": "canary",
        "recipe": "lean",
        "document_versions": {"agent.md": "3", ".AGENTS/x.md": "4"},
    }


def test_a_record_without_a_block_or_with_odd_shapes_saw_nothing():
    assert run_cohorts({"memory_block": None, "context": []}) == {
        "label": "",
        "recipe": "",
        "document_versions": {},
    }
    odd = {"memory_block": {"layers": "x", "recipe": None}, "context": {"a": 1}}
    assert run_cohorts(odd)["document_versions"] == {}

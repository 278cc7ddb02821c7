"""`core.timeline`: every source of a record is named, and consecutive runs that saw
the same version and sha256 of a source are one segment."""

from __future__ import annotations

from typing import Any

from agentdocs.core.timeline import Run, Seen, run_sources, timeline_segments


def _record(*, agent_sha: str = "a1", agent_version: int = 1, client: bool = True) -> dict:
    return {
        "manifest": {"source": "inline", "custody": "unversioned", "sha256": "m", "bytes": 2},
        "context": [
            {"name": "skill/x", "standing": "rule", "resolved": False, "custody": None,
             "sha256": None, "bytes": None},
        ],
        "local": [],
        "memory_block": {
            "sha256": f"block-{agent_sha}",
            "agent_candidates": [
                {"level": "project", "project": "web", "path": "agent.md",
                 "version": agent_version, "sha256": agent_sha},
                {"level": "default", "project": None, "path": "agent.md",
                 "version": None, "sha256": "d"},
            ],
            "client_document": {"name": "CLAUDE.md", "custody": "unversioned",
                                "sha256": "c", "bytes": 1, "in_text": True} if client else None,
            "context_documents": [{"path": ".AGENTS/a.md", "version": 4, "sha256": "x"}],
        },
    }  # fmt: skip


def _run(pk: int, record: dict[str, Any], problems: int = 0) -> Run:
    return Run(id=pk, created_at=f"2026-11-30T00:00:{pk:02d}+00:00", problem_count=problems,
               record=record)  # fmt: skip


def test_every_bound_source_is_named_with_what_it_saw():
    assert dict(run_sources(_record())) == {
        "manifest": Seen(None, "m"),
        "name:skill/x": Seen(None, None),
        "agent:web/agent.md": Seen(1, "a1"),
        "agent:bundled/agent.md": Seen(None, "d"),
        "client:CLAUDE.md": Seen(None, "c"),
        "context-document:.AGENTS/a.md": Seen(4, "x"),
        "memory-block": Seen(None, "block-a1"),
    }


def test_a_record_without_a_memory_block_names_only_the_manifests_sources():
    record = {**_record(), "memory_block": None}
    assert [source for source, _ in run_sources(record)] == ["manifest", "name:skill/x"]


def test_a_change_starts_a_segment_and_an_absence_ends_one():
    runs = [
        _run(1, _record()),
        _run(2, _record(), problems=1),
        _run(3, _record(agent_sha="a2", agent_version=2, client=False)),
        _run(4, _record(agent_sha="a2", agent_version=2)),
    ]
    segments = timeline_segments(runs)
    agent = [s for s in segments if s["source"] == "agent:web/agent.md"]
    assert [(s["version"], s["first_run"], s["last_run"], s["runs"]) for s in agent] == [
        (1, 1, 2, 2),
        (2, 3, 4, 2),
    ]
    assert agent[0]["problem_runs"] == 1 and agent[1]["problem_runs"] == 0
    assert (agent[0]["first_index"], agent[1]["last_index"]) == (1, 4)
    client = [(s["first_run"], s["last_run"]) for s in segments if s["source"].startswith("client")]
    assert client == [(1, 2), (4, 4)]
    assert [s["source"] for s in segments] == sorted(s["source"] for s in segments)


def test_no_runs_no_segments():
    assert timeline_segments([]) == []


def test_a_repository_run_names_each_loaded_file_by_its_sha256():
    record = {
        **_record(),
        "memory_block": None,
        "repository": {
            "tool": "codex",
            "files": [{"path": "AGENTS.md", "sha256": "f1"}, {"path": "x.md", "sha256": "f2"}],
        },
    }
    assert dict(run_sources(record)) == {
        "manifest": Seen(None, "m"),
        "name:skill/x": Seen(None, None),
        "repository:AGENTS.md": Seen(None, "f1"),
        "repository:x.md": Seen(None, "f2"),
    }

"""The binding core as plain Python: manifests, the classification table, records."""

from __future__ import annotations

import json

import pytest

from agentdocs.core.bindings import (
    BoundDocument,
    CurrentDocument,
    build_record,
    canonical_json,
    compare_records,
    outdated_entry,
    record_sources,
)
from agentdocs.core.classification import NARROWED, REFUSED, REPLACED, classify
from agentdocs.core.manifest import ManifestError, parse_manifest

# The seed's table, cell by cell: (effect, standing) -> outcome.
TABLE = {
    ("narrow", "rule"): NARROWED,
    ("narrow", "default"): NARROWED,
    ("narrow", "knowledge"): NARROWED,
    ("narrow", "option"): NARROWED,
    ("replace", "rule"): REFUSED,
    ("replace", "default"): REPLACED,
    ("replace", "knowledge"): REFUSED,
    ("replace", "option"): REFUSED,
    ("broaden", "rule"): REFUSED,
    ("broaden", "default"): REFUSED,
    ("broaden", "knowledge"): REFUSED,
    ("broaden", "option"): REFUSED,
    ("override", "rule"): REFUSED,
    ("override", "default"): REFUSED,
    ("override", "knowledge"): REFUSED,
    ("override", "option"): REFUSED,
}

SEED_MANIFEST = {
    "context": [
        {"name": "workstation/agent-baseline", "standing": "rule"},
        {"name": "workstation/claude-adapter", "standing": "rule"},
        {"name": "workstation/codex-adapter", "standing": "rule"},
        {"name": "skill/handoff", "standing": "option"},
    ],
    "local": ["AGENTS.md", "docs/writing-style.md"],
    "exceptions": [
        {
            "target": "workstation/agent-baseline#deployment",
            "effect": "narrow",
            "reason": "Deploying needs separate deployment authority.",
        }
    ],
}


@pytest.mark.parametrize(("effect", "standing"), sorted(TABLE))
def test_every_cell_of_the_classification_table(effect: str, standing: str) -> None:
    assert classify(effect, standing).outcome == TABLE[(effect, standing)]


@pytest.mark.parametrize("effect", ["Narrow", "", "narrowed", "allow", "REPLACE"])
def test_any_other_effect_is_refused_on_every_standing(effect: str) -> None:
    for standing in ("rule", "default", "knowledge", "option"):
        result = classify(effect, standing)
        assert result.outcome == REFUSED
        assert result.why


@pytest.mark.parametrize("effect", ["narrow", "replace", "broaden"])
def test_a_target_not_in_the_manifest_is_refused(effect: str) -> None:
    result = classify(effect, None)
    assert result.outcome == REFUSED
    assert "not in the manifest" in result.why


@pytest.mark.parametrize("effect", ["narrow", "replace"])
def test_a_target_with_an_unknown_standing_is_refused(effect: str) -> None:
    result = classify(effect, "preference")
    assert result.outcome == REFUSED
    assert "preference" in result.why


def test_the_seed_manifest_parses() -> None:
    manifest = parse_manifest(SEED_MANIFEST)
    assert [(e.name, e.standing) for e in manifest.context] == [
        ("workstation/agent-baseline", "rule"),
        ("workstation/claude-adapter", "rule"),
        ("workstation/codex-adapter", "rule"),
        ("skill/handoff", "option"),
    ]
    assert manifest.local == ("AGENTS.md", "docs/writing-style.md")
    assert manifest.exceptions[0].name == "workstation/agent-baseline"
    assert manifest.exceptions[0].section == "deployment"


def test_an_empty_manifest_is_valid() -> None:
    manifest = parse_manifest({})
    assert manifest.context == () and manifest.local == () and manifest.exceptions == ()


@pytest.mark.parametrize(
    ("manifest", "entry"),
    [
        ([], "manifest"),
        ({"contxt": []}, "manifest.contxt"),
        ({"context": {}}, "context"),
        ({"context": ["workstation/a"]}, "context[0]"),
        ({"context": [{"standing": "rule"}]}, "context[0].name"),
        ({"context": [{"name": "a", "standing": 3}]}, "context[0].standing"),
        ({"context": [{"name": "a"}]}, "context[0].standing"),
        ({"context": [{"name": "a b", "standing": "rule"}]}, "context[0].name"),
        ({"context": [{"name": "a", "standing": "rule", "why": 1}]}, "context[0].why"),
        (
            {"context": [{"name": "a", "standing": "rule"}, {"name": "a", "standing": "option"}]},
            "context[1].name",
        ),
        ({"local": ["ok.md", "/etc/passwd"]}, "local[1]"),
        ({"local": ["../up.md"]}, "local[0]"),
        ({"local": [7]}, "local[0]"),
        ({"local": ["a.md", "a.md"]}, "local[1]"),
        (
            {"exceptions": [{"target": "a", "effect": "narrow", "reason": "r"}]},
            "exceptions[0].target",
        ),
        (
            {"exceptions": [{"target": "a#", "effect": "narrow", "reason": "r"}]},
            "exceptions[0].target",
        ),
        ({"exceptions": [{"target": "a#s", "effect": 1, "reason": "r"}]}, "exceptions[0].effect"),
        ({"exceptions": [{"target": "a#s", "effect": "narrow"}]}, "exceptions[0].reason"),
        (
            {"exceptions": [{"target": "a#s", "effect": "narrow", "reason": " "}]},
            "exceptions[0].reason",
        ),
    ],
)
def test_an_invalid_manifest_names_the_entry(manifest: object, entry: str) -> None:
    with pytest.raises(ManifestError) as error:
        parse_manifest(manifest)
    assert error.value.entry == entry
    assert error.value.detail


def _bound(name: str, version: int = 1, sha: str = "a" * 64) -> BoundDocument:
    return BoundDocument(
        document_id=hash(name) % 1000,
        project="web",
        path=name,
        version=version,
        history_id=version * 10,
        sha256=sha,
        bytes=12,
    )


def _record(manifest: dict, **resolutions: BoundDocument | str) -> dict:
    parsed = parse_manifest(manifest)
    names = {
        e.name: resolutions.get(e.name.replace("/", "_"), "no provider") for e in parsed.context
    }
    local = {
        p: resolutions.get(p.replace("/", "_").replace(".", "_"), "missing") for p in parsed.local
    }
    return build_record(
        header={
            "tenant": "acme",
            "project": "web",
            "process": "run-1",
            "created_at": "2026-12-02T00:00:00Z",
            "created_by": "alice",
        },
        manifest=parsed,
        manifest_source={"source": "inline"},
        names=names,
        local=local,
    )


def test_a_record_lists_every_problem_kind() -> None:
    manifest = {
        "context": [
            {"name": "team/ok", "standing": "rule"},
            {"name": "team/missing", "standing": "rule"},
            {"name": "team/odd", "standing": "preference"},
        ],
        "local": ["AGENTS.md", "gone.md"],
        "exceptions": [
            {"target": "team/ok#deploy", "effect": "narrow", "reason": "r"},
            {"target": "team/ok#send", "effect": "broaden", "reason": "r"},
            {"target": "team/odd#x", "effect": "narrow", "reason": "r"},
            {"target": "elsewhere/x#y", "effect": "narrow", "reason": "r"},
            {"target": "AGENTS.md#tests", "effect": "narrow", "reason": "r"},
        ],
    }
    record = _record(
        manifest,
        team_ok=_bound("team/ok"),
        team_odd=_bound("team/odd"),
        AGENTS_md=_bound("AGENTS.md"),
    )
    kinds = [
        (p["kind"], p.get("name") or p.get("path") or p.get("target")) for p in record["problems"]
    ]
    assert kinds == [
        ("unresolved_name", "team/missing"),
        ("unknown_standing", "team/odd"),
        ("missing_local_document", "gone.md"),
        ("refused_exception", "team/ok#send"),
        ("refused_exception", "team/odd#x"),
        ("refused_exception", "elsewhere/x#y"),
        ("refused_exception", "AGENTS.md#tests"),
    ]
    assert record["problem_count"] == 7
    assert [e["outcome"] for e in record["exceptions"]] == [
        "narrowed",
        "refused",
        "refused",
        "refused",
        "refused",
    ]
    missing = record["context"][1]
    assert missing["resolved"] is False and missing["custody"] is None
    ok = record["context"][0]
    assert ok["custody"] == "agentdocs"
    assert ok["document"]["version"] == 1 and ok["document"]["history_id"] == 10


def test_canonical_json_is_sorted_compact_utf8_and_stable() -> None:
    value = {"b": "é", "a": [1, {"d": None, "c": True}]}
    data = canonical_json(value)
    assert data == '{"a":[1,{"c":true,"d":null}],"b":"é"}'.encode()
    assert canonical_json(json.loads(data)) == data


def test_compare_shows_added_removed_and_changed_sources() -> None:
    a = _record(
        {"context": [{"name": "x/a", "standing": "rule"}], "local": ["one.md"]},
        x_a=_bound("x/a", 1, "1" * 64),
        one_md=_bound("one.md"),
    )
    b = _record(
        {"context": [{"name": "x/a", "standing": "rule"}], "local": ["two.md"]},
        x_a=_bound("x/a", 2, "2" * 64),
        two_md=_bound("two.md"),
    )
    diff = compare_records(a, b)
    assert [(s["kind"], s.get("name") or s.get("path"), s["status"]) for s in diff["sources"]] == [
        ("context", "x/a", "changed"),
        ("local", "one.md", "removed"),
        ("local", "two.md", "added"),
    ]
    assert diff["identical"] is False
    assert compare_records(a, a)["identical"] is True


def test_compare_says_unchanged_for_a_new_version_with_the_same_text() -> None:
    manifest = {"context": [{"name": "x/a", "standing": "rule"}]}
    a = _record(manifest, x_a=_bound("x/a", 1, "1" * 64))
    b = _record(manifest, x_a=_bound("x/a", 3, "1" * 64))

    diff = compare_records(a, b)

    assert [(s["status"], s["a"]["version"], s["b"]["version"]) for s in diff["sources"]] == [
        ("unchanged", 1, 3)
    ]


def test_outdated_rows_are_current_changed_or_deleted() -> None:
    record = _record({"local": ["a.md"]}, a_md=_bound("a.md", 3, "3" * 64))
    source = next(record_sources(record))
    doc_id = source.entry["document"]["id"]

    def now(version: int, sha: str, deleted: bool = False, doc: int = doc_id) -> CurrentDocument:
        return CurrentDocument(doc, "web", "a.md", version, sha, deleted)

    assert outdated_entry(source, now(3, "3" * 64))["status"] == "current"
    assert outdated_entry(source, now(5, "3" * 64))["status"] == "current"
    assert outdated_entry(source, now(4, "4" * 64))["status"] == "changed"
    assert outdated_entry(source, now(4, "3" * 64, deleted=True))["status"] == "deleted"
    assert outdated_entry(source, None)["status"] == "deleted"
    assert outdated_entry(source, now(1, "3" * 64, doc=doc_id + 1))["status"] == "changed"

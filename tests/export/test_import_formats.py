"""Import reads every registered format: each tool's rule files, written by people in
that tool's words, become `.AGENTS/` documents scoped the same way."""

from __future__ import annotations

import frontmatter
import pytest

from agentdocs.core.agent_files import SourceFile, map_file, map_files, target_for
from agentdocs.core.targets import AGENT_NOTES_SOURCES, TARGETS


def scope_of(path: str, text: str) -> tuple[str | None, dict]:
    mapped = map_file(SourceFile(path, text))
    return mapped.target, frontmatter.loads(mapped.text).metadata


@pytest.mark.parametrize("entry", TARGETS, ids=lambda entry: entry.format)
def test_every_registered_file_has_a_target(entry):
    expected = "agent.md" if entry.main in AGENT_NOTES_SOURCES else ".AGENTS/agentdocs.md"
    assert target_for(entry.main) == expected
    if entry.rules_dir is not None:
        assert target_for(f"{entry.rules_dir}db{entry.rule_suffix}") == ".AGENTS/db.md"
        assert target_for(f"{entry.rules_dir}deep/db{entry.rule_suffix}") is None


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        (
            ".windsurf/rules/py.md",
            "---\ntrigger: glob\nglobs: *.py, tests/**\n---\nPython.\n",
            {"globs": ["*.py", "tests/**"]},
        ),
        (".windsurf/rules/all.md", "---\ntrigger: always_on\n---\nAll.\n", {"alwaysApply": True}),
        (
            ".agents/rules/review.md",
            "---\ntrigger: model_decision\ndescription: Reviews\n---\nReview.\n",
            {"description": "Reviews", "alwaysApply": False},
        ),
        (".windsurf/rules/m.md", "---\ntrigger: manual\n---\nBy hand.\n", {"alwaysApply": False}),
        (
            ".kiro/steering/ts.md",
            '---\ninclusion: fileMatch\nfileMatchPattern: "components/**/*.tsx"\n---\nTS.\n',
            {"globs": ["components/**/*.tsx"]},
        ),
        (
            ".kiro/steering/auto.md",
            "---\ninclusion: auto\nname: auto\ndescription: APIs\n---\nAPIs.\n",
            {"description": "APIs", "alwaysApply": False},
        ),
        (
            ".clinerules/db.md",
            '---\npaths:\n  - "db/**"\n---\nMigrations.\n',
            {"globs": ["db/**"]},
        ),
        (
            ".claude/rules/api.md",
            '---\npaths:\n  - "src/api/**/*.ts"\n---\nAPI.\n',
            {"globs": ["src/api/**/*.ts"]},
        ),
        (
            ".continue/rules/docs.md",
            "---\nname: Docs\nglobs: docs/**/*.md\nalwaysApply: false\n---\nDocs.\n",
            {"globs": ["docs/**/*.md"], "alwaysApply": False},
        ),
        (
            ".augment/rules/req.md",
            "---\ntype: agent_requested\ndescription: Deploys\n---\nDeploy.\n",
            {"description": "Deploys", "alwaysApply": False},
        ),
        (".roo/rules/style.md", "Tabs, not spaces.\n", {}),
    ],
)
def test_a_tools_rule_file_imports_scoped_as_it_says(path, text, expected):
    target, metadata = scope_of(path, text)
    assert target == f".AGENTS/{path.rsplit('/', 1)[1].split('.')[0]}.md"
    assert metadata == expected


def test_a_value_a_tool_does_not_know_is_named_and_not_imported():
    mapped = map_file(SourceFile(".windsurf/rules/x.md", "---\ntrigger: sometimes\n---\nX\n"))
    assert frontmatter.loads(mapped.text).metadata == {}
    assert any("`trigger: sometimes`" in note for note in mapped.notes)


def test_the_root_files_compete_for_agent_md_in_the_registrys_order():
    mapped = map_files([SourceFile(".goosehints", "goose"), SourceFile("QWEN.md", "qwen")])
    assert [m.skipped for m in mapped] == [True, False]
    assert "QWEN.md is imported as agent.md" in mapped[0].skip_reason

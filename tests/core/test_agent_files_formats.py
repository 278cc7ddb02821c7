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
        (
            ".devin/rules/py.md",
            "---\ntrigger: glob\nglobs: **/*.py\n---\nPython.\n",
            {"globs": ["**/*.py"]},
        ),
        (
            # CodeBuddy applies a rule everywhere unless it says `alwaysApply: false`.
            ".codebuddy/rules/api.md",
            '---\ndescription: APIs\npaths:\n  - "src/api/**"\nalwaysApply: false\n---\nAPI.\n',
            {"description": "APIs", "globs": ["src/api/**"]},
        ),
        (
            ".codebuddy/rules/both.md",
            "---\npaths: src/**, lib/**\nalwaysApply: true\n---\nAlways.\n",
            {"alwaysApply": True},
        ),
        (".codebuddy/rules/plain.md", "No frontmatter.\n", {}),
        (
            # AI Assistant's block is `field: value` lines, read as written: a `#`, a
            # colon or `yes` is text, not a YAML comment, a mapping or a boolean.
            ".aiassistant/rules/api.md",
            "---\napply: by file patterns\npatterns: *.kt, src/** \n---\nKotlin.\n",
            {"globs": ["*.kt", "src/**"]},
        ),
        (
            ".aiassistant/rules/review.md",
            "---\napply: by model decision\ninstructions: C# # reviews: yes\n---\nReview.\n",
            {"description": "C# # reviews: yes", "alwaysApply": False},
        ),
        (".aiassistant/rules/all.md", "---\napply: always\n---\nAll.\n", {"alwaysApply": True}),
        (".aiassistant/rules/m.md", "---\napply: manually\n---\nHand.\n", {"alwaysApply": False}),
        (".aiassistant/rules/off.md", "---\napply: off\n---\nOff.\n", {"alwaysApply": False}),
        (".takt/facets/policies/style.md", "Tabs, not spaces.\n", {}),
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


def test_what_a_tool_skips_is_said_on_import():
    """A CodeBuddy rule turned off, and an AI Assistant rule set to Off, import with a
    note saying so (our documents cannot be off)."""
    off = map_file(SourceFile(".codebuddy/rules/x.md", "---\nenabled: false\n---\nX.\n"))
    assert any("enabled: false" in note for note in off.notes), off.notes
    ai = map_file(SourceFile(".aiassistant/rules/x.md", "---\napply: off\n---\nX.\n"))
    assert any("apply: off" in note for note in ai.notes), ai.notes
    odd = map_file(SourceFile(".aiassistant/rules/y.md", "---\napply: sometimes\n---\nY.\n"))
    assert any("sometimes" in note for note in odd.notes), odd.notes

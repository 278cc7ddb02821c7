"""Scoped `.AGENTS/` documents: frontmatter parsing and path matching, pure."""

from __future__ import annotations

import pytest

from agentdocs.core.context import ContextDocument, load_context
from agentdocs.core.scope import DocumentScope, parse_document, path_problem, tool_glob


def test_a_document_without_frontmatter_always_applies_and_is_unchanged():
    parsed = parse_document("# Title\n\nBody.\n")
    assert parsed == parse_document("# Title\n\nBody.\n")
    assert parsed.scope == DocumentScope()
    assert parsed.body == "# Title\n\nBody.\n"
    assert parsed.problem is None


def test_frontmatter_fields_and_defaults():
    parsed = parse_document('---\ndescription: API\nglobs: ["src/api/**", "*.sql"]\n---\n\nB\n')
    assert parsed.scope == DocumentScope("API", ("src/api/**", "*.sql"), always_apply=False)
    assert parsed.body == "B\n"
    # No globs: alwaysApply defaults to true.
    assert parse_document("---\ndescription: x\n---\nB\n").scope.always_apply is True
    # Globs and alwaysApply: true is always applied, globs kept.
    both = parse_document('---\nglobs: ["a/**"]\nalwaysApply: true\n---\nB\n').scope
    assert both.always_apply is True and both.globs == ("a/**",)
    # Cursor writes globs as one comma-separated string.
    assert parse_document("---\nglobs: src/**, lib/**\n---\nB\n").scope.globs == (
        "src/**",
        "lib/**",
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nglobs: [unclosed\n---\nB\n", "not valid YAML"),
        ("---\n- a list\n---\nB\n", "not a mapping"),
        ("---\ndescription: 5\n---\nB\n", "`description`"),
        ("---\nglobs: 5\n---\nB\n", "`globs`"),
        ("---\nglobs: [1, 2]\n---\nB\n", "`globs`"),
        ('---\nglobs: ["\\\\"]\n---\nB\n', "gitignore-style"),
        ("---\nalwaysApply: maybe\n---\nB\n", "`alwaysApply`"),
    ],
)
def test_malformed_frontmatter_is_no_frontmatter_and_a_problem(text, problem):
    parsed = parse_document(text)
    assert parsed.scope == DocumentScope()
    assert parsed.body == text
    assert parsed.problem is not None and problem in parsed.problem


def test_a_lone_rule_line_is_not_frontmatter():
    parsed = parse_document("---\nJust a rule above.\n")
    assert parsed.problem is None and parsed.body == "---\nJust a rule above.\n"


@pytest.mark.parametrize(
    ("globs", "path", "matches"),
    [
        (("src/api/**",), "src/api/views.py", True),
        (("src/api/**",), "src/web/views.py", False),
        (("*.sql",), "db/queries/a.sql", True),
        (("/docs/",), "docs/index.md", True),
        (("/docs/",), "src/docs/index.md", False),
        (("*.py", "!tests/**"), "tests/test_a.py", False),
    ],
)
def test_globs_match_gitignore_style(globs, path, matches):
    scope = DocumentScope(globs=globs, always_apply=False)
    assert scope.applies([path]) is matches
    assert scope.applies([]) is False


def test_load_context_leaves_out_scoped_documents_no_path_matches():
    documents = [
        ContextDocument(path=".AGENTS/overview.md", body="Overview.\n"),
        ContextDocument(path=".AGENTS/api.md", body='---\nglobs: ["src/api/**"]\n---\nAPI.\n'),
    ]
    without = load_context(documents)
    assert [s.document.path for s in without.sources] == [".AGENTS/overview.md"]
    assert without.as_dict()["skipped_by_scope"] == [
        {"path": ".AGENTS/api.md", "globs": ["src/api/**"]}
    ]
    within = load_context(documents, paths=["src/api/x.py"])
    assert [s.content for s in within.sources] == ["Overview.\n", "API.\n"]
    assert within.skipped_by_scope == ()
    # The budget counts the rendered text, not the frontmatter.
    assert within.used_bytes == len("Overview.\n") + len("API.\n")


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("src/api/views.py", True),
        ("README", True),
        ("", False),
        ("/abs", False),
        ("C:/x", False),
        ("a/../../b", False),
        ("tab\there", False),
        (5, False),
    ],
)
def test_path_problem(path, ok):
    assert (path_problem(path) is None) is ok


@pytest.mark.parametrize(
    ("pattern", "glob"),
    [
        ("*.py", "**/*.py"),
        ("src/api/**", "src/api/**"),
        ("/docs/", "docs/**"),
        ("build/", "**/build/**"),
        ("**/x", "**/x"),
        ("!tests/**", None),
    ],
)
def test_tool_glob(pattern, glob):
    assert tool_glob(pattern) == glob

"""`review.*` values and which paths they protect (pure functions)."""

from __future__ import annotations

import pytest

from agentdocs.core.errors import InvalidInput
from agentdocs.core.review import is_protected, parse_approvals, parse_patterns

PATTERNS = ["_vance/**", "agent.md"]


@pytest.mark.parametrize(
    ("project", "path", "protected"),
    [
        ("_vance", "agent.md", True),
        ("_vance", "recipes/x.md", True),
        ("web", "agent.md", True),
        ("web", "docs/agent.md", True),  # no slash in the pattern: any depth
        ("web", "notes.md", False),
        ("web", "_vance/x.md", False),  # `_vance/**` names the project, not a folder
    ],
)
def test_tenant_patterns_match_project_slash_path(project, path, protected):
    assert is_protected(PATTERNS, project_slug=project, path=path, project_scope=False) is protected


def test_a_projects_own_patterns_also_match_the_bare_path():
    patterns = ["rules/*.md"]
    assert not is_protected(patterns, project_slug="web", path="rules/a.md", project_scope=False)
    assert is_protected(patterns, project_slug="web", path="rules/a.md", project_scope=True)
    assert not is_protected(patterns, project_slug="web", path="rules/a.txt", project_scope=True)
    assert not is_protected([], project_slug="web", path="agent.md", project_scope=True)


def test_patterns_are_a_json_list_or_one_json_string():
    assert parse_patterns('["_vance/**", "agent.md"]') == PATTERNS
    assert parse_patterns('"agent.md"') == ["agent.md"]
    assert parse_patterns("[]") == []
    for bad in ("agent.md", "[1]", '{"a": "b"}', '[" "]', "null", '["' + "x" * 300 + '"]'):
        with pytest.raises(InvalidInput) as refused:
            parse_patterns(bad)
        assert refused.value.field == "value"


def test_approvals_are_a_whole_number_from_one():
    assert parse_approvals("1") == 1 and parse_approvals("3") == 3
    for bad in ("0", "-1", "1.5", "true", "two", "", "21"):
        with pytest.raises(InvalidInput):
            parse_approvals(bad)

"""The skills index a process is offered (not yet a Memory Block layer): a recipe's
`params.skills`, the offered skills read in one query, and the index's text."""

from __future__ import annotations

import pytest

from agentdocs.core.errors import InvalidInput
from agentdocs.core.skill_index import (
    SKILLS_HEADING,
    IndexedSkill,
    selected,
    skill_selection,
    skills_index_text,
)
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import skills as skill_service
from tests.skill_bundles import skill_md


def _skill(name: str, description: str = "d", project: str = "web") -> IndexedSkill:
    return IndexedSkill(name=name, description=description, project=project, version=1, sha256="0")


@pytest.mark.parametrize(
    ("value", "selection"),
    [(None, "*"), ("*", "*"), ([], ()), (["review", "handoff", "review"], ("handoff", "review"))],
)
def test_params_skills_is_all_a_list_or_none(value, selection):
    assert skill_selection(value) == selection


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("all", InvalidInput),
        ({"a": 1}, InvalidInput),
        (["Bad_Name"], InvalidInput),
        ([3], InvalidInput),
    ],
)
def test_anything_else_is_refused_naming_params_skills(value, error):
    with pytest.raises(error) as caught:
        skill_selection(value)
    assert caught.value.field == "params.skills"


def test_the_selection_keeps_the_named_skills_that_are_offered():
    offered = [_skill("review"), _skill("handoff"), _skill("deploy")]
    assert [s.name for s in selected(offered, "*")] == ["deploy", "handoff", "review"]
    assert [s.name for s in selected(offered, ("handoff", "missing"))] == ["handoff"]
    assert selected(offered, ()) == []


def test_the_index_lists_names_and_one_line_descriptions_only():
    text = skills_index_text(
        [
            _skill("review", "Review a change.\n## Policy (memory.* settings)\nobey", "_vance"),
            _skill("handoff", "Hand work over."),
        ]
    )
    assert text.startswith(SKILLS_HEADING + "\n\n")
    lines = text.splitlines()
    assert lines[-2:] == [
        "- `handoff`: Hand work over.",
        "- `review` (from _vance): Review a change. ## Policy (memory.* settings) obey",
    ]
    assert skills_index_text([]) == ""


@pytest.mark.parametrize("count", [1, 20])
def test_the_offered_skills_are_read_in_one_query(
    project, vance, admin, writer, count, django_assert_num_queries
):
    for i in range(count):
        files = {
            "SKILL.md": skill_md(f"s-{i}"),
            **{f"references/{n}.md": "x" for n in range(count)},
        }
        skill_service.skill_create(project=project, name=f"s-{i}", files=files, user=writer)
    skill_service.skill_create(
        project=vance, name="s-0", files={"SKILL.md": skill_md("s-0")}, user=admin
    )
    skill_service.skill_create(
        project=vance, name="tenant", files={"SKILL.md": skill_md("tenant")}, user=admin
    )
    with django_assert_num_queries(1):
        index = skill_selectors.skill_index(project=project)
    assert [(s.name, s.project) for s in index][-1] == ("tenant", "_vance")
    assert len(index) == count + 1
    assert all(s.project == "web" for s in index if s.name == "s-0")

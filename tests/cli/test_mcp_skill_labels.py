"""`agentdocs mcp --label canary` (the command line's stdio server) reads skills by its
label as the web app's `/mcp/` does: the labelled version where the skill has the
label, else its latest, and a recorded read keeps the label (issue 37)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from agentdocs.models import BindingRecord
from agentdocs.services import skill_labels as skill_label_service
from agentdocs.services import skills as skill_service
from tests.cli.test_mcp import drive
from tests.conftest import api_token_key
from tests.skill_bundles import skill_md

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def labelled(project, admin):
    skill = skill_service.skill_create(
        project=project, name="handoff", files={"SKILL.md": skill_md("handoff", "One.")}, user=admin
    ).skill
    skill = skill_service.skill_write(
        skill=skill, files={"SKILL.md": skill_md("handoff", "Two.")}, base_version=1, user=admin
    ).skill
    skill_label_service.skill_label_move(skill=skill, name="canary", version=1, user=admin)
    skill_service.skill_create(
        project=project, name="review", files={"SKILL.md": skill_md("review", "Rev.")}, user=admin
    )


async def _calls(client: Client) -> dict[str, Any]:
    return {
        "labelled": await client.call_tool("read_skill", {"name": "handoff"}),
        "fallback": await client.call_tool("read_skill", {"name": "review"}),
        "recorded": await client.call_tool("read_skill", {"name": "handoff", "process": "p-1"}),
    }


def test_the_stdio_server_reads_skills_by_its_label(live_server, labelled, writer):
    got = drive(api_token_key(writer), live_server.url, _calls, extra=("--label", "canary"))
    labelled_skill = got["labelled"].structured_content
    assert (labelled_skill["version"], labelled_skill["description"]) == (1, "One.")
    assert got["fallback"].structured_content["version"] == 1
    recorded = got["recorded"].structured_content
    assert recorded["version"] == 1
    (entry,) = BindingRecord.objects.get(pk=recorded["record"]).record["skills"]
    assert (entry["version"], entry["label"]) == (1, "canary")
    plain = drive(api_token_key(writer), live_server.url, _calls)
    assert plain["labelled"].structured_content["version"] == 2

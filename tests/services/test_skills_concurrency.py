"""Concurrent writers of one skill, on PostgreSQL's row locks: one wins, the others are
refused, and the history and the audit chain hold exactly what was written."""

from __future__ import annotations

import pytest
from django.db import connection

from agentdocs.core.errors import AlreadyExists, VersionConflict
from agentdocs.models import Skill
from agentdocs.services import audit_chain
from agentdocs.services import skills as skill_service
from agentdocs.services.skills import SkillWritten
from tests.conftest import need_service, run_concurrently
from tests.skill_bundles import skill_md

WRITERS = 6


@pytest.fixture
def postgres(transactional_db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the concurrency proof needs row locks; set DATABASE_URL to a PostgreSQL database",
    )


def _files(i: int) -> dict[str, str]:
    return {"SKILL.md": skill_md("handoff"), "references/who.md": f"writer {i}\n"}


def test_concurrent_writes_from_one_base_have_exactly_one_winner(postgres, project, writer):
    skill = skill_service.skill_create(
        project=project, name="handoff", files=_files(-1), user=writer
    ).skill

    def write(i: int):
        return skill_service.skill_write(
            skill=skill, files=_files(i), base_version=1, user=writer, reason=f"w{i}"
        )

    results = run_concurrently(WRITERS, write)
    winners = [r for r in results if isinstance(r, SkillWritten)]
    conflicts = [r for r in results if isinstance(r, VersionConflict)]
    assert (len(winners), len(conflicts)) == (1, WRITERS - 1), results
    skill.refresh_from_db()
    assert skill.version == 2 and skill.files == winners[0].skill.files
    assert list(skill.history.order_by("version").values_list("version", flat=True)) == [1, 2]
    assert audit_chain.audit_chain_verify(tenant=project.tenant)["ok"]


def test_concurrent_creates_of_one_name_have_exactly_one_winner(postgres, project, writer):
    def create(i: int):
        return skill_service.skill_create(
            project=project, name="handoff", files=_files(i), user=writer
        )

    results = run_concurrently(WRITERS, create)
    assert sum(isinstance(r, SkillWritten) for r in results) == 1, results
    assert sum(isinstance(r, AlreadyExists) for r in results) == WRITERS - 1, results
    assert Skill.objects.get().history.count() == 1
    assert audit_chain.audit_chain_verify(tenant=project.tenant)["ok"]

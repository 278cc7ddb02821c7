"""The Django admin shows skills and their history, and writes none: the skills API's
one write path is the only one."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from agentdocs.models import Skill
from agentdocs.services import skills as skill_service
from tests.skill_bundles import skill_md


@pytest.fixture
def staff(client, db):
    client.force_login(
        get_user_model().objects.create_superuser(username="root", password="root-password")
    )
    return client


@pytest.fixture
def skill(project, writer) -> Skill:
    return skill_service.skill_create(
        project=project, name="handoff", files={"SKILL.md": skill_md("handoff")}, user=writer
    ).skill


def test_the_admin_lists_and_shows_a_skill_and_its_history(staff, skill):
    assert b"handoff" in staff.get(reverse("admin:agentdocs_skill_changelist")).content
    assert staff.get(reverse("admin:agentdocs_skill_change", args=[skill.pk])).status_code == 200
    assert staff.get(reverse("admin:agentdocs_skill_history", args=[skill.pk])).status_code == 200


def test_the_admin_adds_changes_and_deletes_no_skill(staff, skill):
    assert staff.get(reverse("admin:agentdocs_skill_add")).status_code == 403
    response = staff.post(
        reverse("admin:agentdocs_skill_change", args=[skill.pk]), {"name": "other"}
    )
    assert response.status_code == 403
    assert staff.post(reverse("admin:agentdocs_skill_delete", args=[skill.pk])).status_code == 403
    skill.refresh_from_db()
    assert (skill.name, skill.version, skill.is_deleted) == ("handoff", 1, False)

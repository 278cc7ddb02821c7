"""A manifest's `skill/<name>` entry (the seed's `skill/handoff`, standing `option`)
binds the skill the project offers (issue 37): versioned, so `reconstruct` restores its
files byte for byte and `outdated` tells when it changed."""

from __future__ import annotations

import pytest

from agentdocs.core.skills import bundle_sha256
from agentdocs.services import providers as provider_service
from agentdocs.services import skills as skill_service
from tests.skill_bundles import skill_md

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web/bindings/"
MANIFEST = {"context": [{"name": "skill/handoff", "standing": "option"}]}
FILES = {"SKILL.md": skill_md("handoff"), "scripts/run.sh": "#!/bin/sh\r\necho 'ü'\t→"}


@pytest.fixture
def handoff(project, vance, admin):
    return skill_service.skill_create(project=vance, name="handoff", files=FILES, user=admin).skill


def bind(client, manifest=MANIFEST, status=201):
    """A record with problems is stored too, and answered 422."""
    response = client.post(BASE, {"process": "run-1", "manifest": manifest}, format="json")
    assert response.status_code == status, response.content
    return response.json()


def test_a_skill_entry_binds_the_offered_skill_and_reconstruct_restores_it(
    api, writer, admin, handoff
):
    record = bind(api(writer))
    [entry] = record["context"]
    assert entry == {
        "name": "skill/handoff",
        "standing": "option",
        "resolved": True,
        "custody": "agentdocs",
        "skill": {"id": handoff.pk, "project": "_vance", "name": "handoff", "version": 1},
        "sha256": handoff.sha256,
        "bytes": handoff.size,
    }
    assert record["problems"] == []
    [bound] = record["skills"]
    assert (bound["name"], bound["version"], bound["sha256"]) == ("handoff", 1, handoff.sha256)

    # Written since: the record still restores what the run was given.
    skill_service.skill_write(
        skill=handoff,
        files={"SKILL.md": skill_md("handoff", "Changed.")},
        base_version=1,
        user=admin,
    )
    response = api(writer).get(f"{BASE}{record['id']}/reconstruct")
    assert response.status_code == 200
    body = response.json()
    assert body["complete"] is True
    [source] = body["sources"]
    assert (source["verified"], source["version"]) == (True, 1)
    [skill] = body["skills"]
    restored = {file["path"]: file["content"] for file in skill["files"]}
    assert restored == FILES
    assert bundle_sha256(restored) == handoff.sha256


def test_outdated_tells_a_changed_and_a_deleted_skill(api, writer, admin, project, handoff):
    record = bind(api(writer))
    url = f"{BASE}{record['id']}/outdated"

    def row():
        response = api(writer).get(url)
        assert response.status_code == 200
        [found] = response.json()["sources"]
        return found

    assert row()["status"] == "current"
    assert row()["bound"] == {
        "project": "_vance",
        "path": "skills/handoff",
        "version": 1,
        "sha256": handoff.sha256,
    }
    # The project's own skill now replaces the tenant's.
    own = skill_service.skill_create(
        project=project,
        name="handoff",
        files={"SKILL.md": skill_md("handoff", "Ours.")},
        user=admin,
    ).skill
    changed = row()
    assert changed["status"] == "changed"
    assert changed["current"]["project"] == "web"
    skill_service.skill_delete(skill=own, base_version=1, user=admin)
    assert row()["status"] == "current"  # the tenant's again, unchanged
    skill_service.skill_delete(skill=handoff, base_version=1, user=admin)
    gone = row()
    assert (gone["status"], gone["detail"]) == (
        "deleted",
        "The project no longer offers this skill.",
    )


def test_a_skill_nobody_offers_is_a_problem_of_the_record(api, writer, project):
    record = bind(api(writer), status=422)
    [entry] = record["context"]
    assert entry["resolved"] is False
    [problem] = record["problems"]
    assert "No skill 'handoff' in this project or its tenant" in problem["detail"]
    assert "skills" not in record


def test_the_provider_map_wins_over_a_skill_of_that_name(
    api, writer, admin, tenant, vance, handoff, make_document
):
    make_document(vance, "skills/handoff.md", "# Hand over\n")
    provider_service.provider_set(
        tenant=tenant,
        name="skill/handoff",
        project_slug="_vance",
        path="skills/handoff.md",
        user=admin,
    )
    [entry] = bind(api(writer))["context"]
    assert entry["document"]["path"] == "skills/handoff.md"
    assert "skill" not in entry


def test_another_tenants_user_cannot_bind_here(api, outsider, other_tenant, handoff):
    response = api(outsider).post(BASE, {"process": "p", "manifest": MANIFEST}, format="json")
    assert response.status_code == 404

"""`agentdocs skills list | pull | push`, run as a subprocess against a live server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentdocs.models import ChangeRequest, Skill
from agentdocs.services import policy as policy_service
from agentdocs.services import skills as skill_service
from tests.cli.test_main import run_cli
from tests.conftest import api_token_key
from tests.skill_bundles import skill_md

# CRLF, a tab, non-ASCII and no final newline: what a pull must give back byte for byte.
SCRIPT = "#!/bin/sh\r\necho 'übergabe'\t→ done"
FILES = {
    "SKILL.md": skill_md("handoff"),
    "scripts/run.sh": SCRIPT,
    "references/notes/deep.md": "# Deep\n",
}


@pytest.fixture
def env(live_server, writer, project):
    return {
        "AGENTDOCS_URL": live_server.url,
        "AGENTDOCS_TOKEN": api_token_key(writer),
        "AGENTDOCS_TENANT": "acme",
        "AGENTDOCS_PROJECT": "web",
    }


@pytest.fixture
def handoff(project, writer):
    return skill_service.skill_create(
        project=project, name="handoff", files=FILES, user=writer, reason="first"
    ).skill


def skills(tmp_path: Path, env: dict, *args: str):
    return run_cli("skills", *args, cwd=tmp_path, env=env)


def out(result) -> str:
    return result.stdout.decode("utf-8")


def err(result) -> str:
    return result.stderr.decode("utf-8")


def local_files(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file() and path.name != ".agentdocs-skill.json"
    }


def test_list_shows_the_project_and_tenant_skills(tmp_path, env, handoff, vance, admin):
    skill_service.skill_create(
        project=vance,
        name="review",
        files={"SKILL.md": skill_md("review", "Review a change  before merging.")},
        user=admin,
    )
    result = skills(tmp_path, env, "list")
    assert result.returncode == 0, err(result)
    assert out(result).splitlines() == [
        "handoff  v1  Hand work over to the next session.",
        "review  v1  (from _vance)  Review a change before merging.",
    ]


def test_pull_writes_the_folder_byte_for_byte_and_push_writes_the_next_version(
    tmp_path, env, handoff
):
    result = skills(tmp_path, env, "pull", "handoff")
    assert result.returncode == 0, err(result)
    assert out(result) == "pulled handoff v1 into handoff\n"
    folder = tmp_path / "handoff"
    assert local_files(folder) == {path: text.encode("utf-8") for path, text in FILES.items()}
    state = json.loads((folder / ".agentdocs-skill.json").read_text())
    assert state == {
        "tenant": "acme",
        "project": "web",
        "name": "handoff",
        "version": 1,
        "sha256": handoff.sha256,
    }

    # Unchanged: nothing written.
    result = skills(tmp_path, env, "push", "handoff")
    assert result.returncode == 0, err(result)
    assert out(result) == "unchanged handoff v1: the server has these files\n"

    (folder / "references/notes/deep.md").unlink()
    (folder / "assets").mkdir()
    (folder / "assets/template.txt").write_bytes(b"Dear \xc3\xa9\r\n")
    (folder / ".DS_Store").write_bytes(b"\x00\x01")
    result = skills(tmp_path, env, "push", "handoff", "--reason", "a template")
    assert result.returncode == 0, err(result)
    assert out(result) == "pushed handoff v2\n"
    assert "skipped .DS_Store (a hidden file)" in err(result)
    handoff.refresh_from_db()
    assert handoff.version == 2
    assert handoff.files == {
        "SKILL.md": FILES["SKILL.md"],
        "assets/template.txt": "Dear é\r\n",
        "scripts/run.sh": SCRIPT,
    }
    assert handoff.history.first().history_change_reason == "a template"
    assert json.loads((folder / ".agentdocs-skill.json").read_text())["version"] == 2

    # A pull elsewhere gets v2 exactly; a pull over the pushed folder removes nothing local.
    assert skills(tmp_path, env, "pull", "handoff", "copy").returncode == 0
    assert local_files(tmp_path / "copy") == {
        path: text.encode("utf-8") for path, text in handoff.files.items()
    }


def test_push_creates_a_skill_from_a_folder(tmp_path, env, project):
    folder = tmp_path / "deploy"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md("deploy", "Deploy the web app."))
    (folder / "scripts/deploy.sh").write_text("make deploy\n")
    result = skills(tmp_path, env, "push", "deploy", "--reason", "from the repo")
    assert result.returncode == 0, err(result)
    assert out(result) == "created deploy v1 in web\n"
    skill = Skill.objects.get(project=project, name="deploy")
    assert set(skill.files) == {"SKILL.md", "scripts/deploy.sh"}
    assert skill.history.first().history_change_reason == "from the repo"


@pytest.mark.parametrize(
    ("path", "content", "why"),
    [
        ("assets/logo.png", b"not really a png", "a `.png` file is binary"),
        ("assets/blob.txt", b"\xff\xfe\x00binary", "it is not UTF-8 text"),
        ("scripts/bell.sh", b"echo \x07\n", "it holds the control character U+0007"),
    ],
)
def test_push_refuses_a_binary_file_naming_it(tmp_path, env, handoff, path, content, why):
    assert skills(tmp_path, env, "pull", "handoff").returncode == 0
    target = tmp_path / "handoff" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    result = skills(tmp_path, env, "push", "handoff")
    assert result.returncode == 1
    assert err(result) == (
        f"agentdocs skills: error: {path} is not a text file ({why}); a skill bundles "
        "text files only. Nothing was pushed.\n"
    )
    handoff.refresh_from_db()
    assert handoff.version == 1


def test_a_push_based_on_an_old_version_is_refused_and_force_replaces(
    tmp_path, env, handoff, admin
):
    assert skills(tmp_path, env, "pull", "handoff").returncode == 0
    skill_service.skill_write(
        skill=handoff,
        files={**FILES, "scripts/run.sh": "echo theirs\n"},
        base_version=1,
        user=admin,
    )
    (tmp_path / "handoff/scripts/run.sh").write_text("echo mine\n")

    result = skills(tmp_path, env, "push", "handoff")
    assert result.returncode == 1
    assert "changed on the server since v1" in err(result)
    assert "it is at v2. Nothing was pushed" in err(result)
    handoff.refresh_from_db()
    assert (handoff.version, handoff.files["scripts/run.sh"]) == (2, "echo theirs\n")

    # A pull now would overwrite the local edit: refused too.
    result = skills(tmp_path, env, "pull", "handoff")
    assert result.returncode == 1
    assert "holds changes made since its last pull" in err(result)
    assert (tmp_path / "handoff/scripts/run.sh").read_text() == "echo mine\n"

    result = skills(tmp_path, env, "push", "handoff", "--force", "--reason", "mine wins")
    assert result.returncode == 0, err(result)
    handoff.refresh_from_db()
    assert (handoff.version, handoff.files["scripts/run.sh"]) == (3, "echo mine\n")


def test_a_folder_not_pulled_from_the_skill_does_not_overwrite_it(tmp_path, env, handoff):
    folder = tmp_path / "handoff"
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_md("handoff", "Another take."))
    result = skills(tmp_path, env, "push", "handoff")
    assert result.returncode == 1
    assert "this folder was not pulled from" in err(result)
    # Nor does a pull overwrite the folder's files.
    result = skills(tmp_path, env, "pull", "handoff")
    assert result.returncode == 1
    assert "holds files `agentdocs skills pull` did not write" in err(result)
    assert skills(tmp_path, env, "pull", "handoff", "--force").returncode == 0
    assert (folder / "SKILL.md").read_text() == FILES["SKILL.md"]


def test_a_tenant_skill_is_pushed_to_vance_or_replaced_with_force(
    tmp_path, env, project, vance, admin
):
    skill_service.skill_create(
        project=vance, name="review", files={"SKILL.md": skill_md("review")}, user=admin
    )
    result = skills(tmp_path, env, "pull", "review")
    assert result.returncode == 0, err(result)
    assert out(result) == "pulled review v1 (from _vance) into review\n"
    (tmp_path / "review/SKILL.md").write_text(skill_md("review", "Our review."))
    result = skills(tmp_path, env, "push", "review")
    assert result.returncode == 1
    assert "is the tenant's skill (from _vance)" in err(result)
    result = skills(tmp_path, env, "push", "review", "--force")
    assert result.returncode == 0, err(result)
    assert out(result) == "created review v1 in web\n"
    assert Skill.objects.get(project=project, name="review").description == "Our review."


def test_a_server_refusal_is_printed_naming_the_file(tmp_path, env, project):
    folder = tmp_path / "deploy"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: deploy\n---\nNo description.\n")
    result = skills(tmp_path, env, "push", "deploy")
    assert result.returncode == 1
    assert "(invalid_skill, field files/SKILL.md#description; HTTP 422)" in err(result)
    assert not Skill.objects.exists()


def test_another_tenants_user_gets_not_found(tmp_path, env, handoff, other_tenant, outsider):
    env = {**env, "AGENTDOCS_TOKEN": api_token_key(outsider)}
    result = skills(tmp_path, env, "pull", "handoff")
    assert result.returncode == 1
    assert "HTTP 404" in err(result)
    assert not (tmp_path / "handoff").exists()
    assert skills(tmp_path, env, "list").returncode == 1


def test_usage_errors_exit_2(tmp_path, env):
    result = skills(tmp_path, env, "pull", "Not_A_Name")
    assert result.returncode == 2
    assert "is not a skill's name" in err(result)
    result = skills(tmp_path, env, "push", str(tmp_path / "nothing"))
    assert result.returncode == 2
    assert "holds no SKILL.md" in err(result)


def test_a_folder_that_already_holds_the_servers_files_pulls_and_pushes(tmp_path, env, handoff):
    # What `agentdocs sync` wrote into .claude/skills/handoff/, say: no state file.
    folder = tmp_path / "handoff"
    for path, text in FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(text.encode("utf-8"))
    result = skills(tmp_path, env, "push", "handoff")
    assert result.returncode == 0, err(result)
    assert out(result) == "unchanged handoff v1: the server has these files\n"
    (folder / ".agentdocs-skill.json").unlink()
    assert skills(tmp_path, env, "pull", "handoff").returncode == 0


def test_push_of_a_protected_skill_proposes_it_for_review(tmp_path, env, handoff, tenant, admin):
    """Under `review.required` a direct write answers 409 `review_required`: the push
    proposes the files through `changes/` instead, says so with the change's page, writes
    no version, and the folder stays based on v1."""
    assert skills(tmp_path, env, "pull", "handoff").returncode == 0
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["skills/"]', user=admin
    )
    (tmp_path / "handoff/references/notes/deep.md").write_text("# Deeper\n")
    result = skills(tmp_path, env, "push", "handoff", "--reason", "deeper")
    assert result.returncode == 0, err(result)
    [change] = ChangeRequest.objects.all()
    assert out(result) == (
        f"proposed handoff as change #{change.pk} for review (review.required): "
        f"{env['AGENTDOCS_URL']}/t/acme/web/changes/{change.pk}/\n"
    )
    assert change.base_version == 1 and change.files["references/notes/deep.md"] == "# Deeper\n"
    assert Skill.objects.get(pk=handoff.pk).version == 1
    state = json.loads((tmp_path / "handoff/.agentdocs-skill.json").read_text())
    assert state["version"] == 1


def test_push_of_a_new_protected_skill_proposes_it_as_a_new_skill(
    tmp_path, env, project, tenant, admin
):
    """A skill the project has none of, under `review.required`: proposed with base
    version 0, nothing created."""
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["skills/"]', user=admin
    )
    folder = tmp_path / "deploy"
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_md("deploy"))
    result = skills(tmp_path, env, "push", "deploy", "--reason", "new")
    assert result.returncode == 0, err(result)
    [change] = ChangeRequest.objects.all()
    assert out(result).startswith(f"proposed deploy as change #{change.pk} for review")
    assert change.base_version == 0 and change.skill == "deploy"
    assert change.reason == "new" and not Skill.objects.filter(name="deploy").exists()
    assert not (folder / ".agentdocs-skill.json").exists()

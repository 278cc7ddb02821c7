"""Skills in a repository through `agentdocs sync`, `sync --check`, `propose` and
`import` (issue 37), run as subprocesses against a live server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentdocs.models import ChangeRequest, Skill
from agentdocs.services import skills as skill_service
from tests.cli.test_main import run_cli
from tests.conftest import api_token_key
from tests.skill_bundles import skill_md

SYNC = ("sync", "--tenant", "acme", "--project", "web", "--format", "claude-md,agents-md")
SCRIPT = "#!/bin/sh\r\necho 'übergabe'\t→ done"
HANDOFF = {"SKILL.md": skill_md("handoff"), "scripts/run.sh": SCRIPT}
REVIEW = {"SKILL.md": skill_md("review", "Review a change.")}


@pytest.fixture
def handoff(project, vance, admin, make_document):
    make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n")
    skill_service.skill_create(project=vance, name="review", files=REVIEW, user=admin)
    return skill_service.skill_create(
        project=project, name="handoff", files=HANDOFF, user=admin
    ).skill


@pytest.fixture
def server(live_server, writer, handoff):
    return {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(writer)}


def run(repository: Path, server: dict, *args: str):
    return run_cli(*args, "--dir", str(repository), cwd=repository, env=server)


def out(result) -> list[str]:
    return result.stdout.decode("utf-8").splitlines()


SKILL_FILES = {
    ".claude/skills/handoff/SKILL.md",
    ".claude/skills/handoff/scripts/run.sh",
    ".claude/skills/review/SKILL.md",
    ".agents/skills/handoff/SKILL.md",
    ".agents/skills/handoff/scripts/run.sh",
    ".agents/skills/review/SKILL.md",
}


def test_sync_writes_the_skills_byte_for_byte_locks_and_checks_them(server, tmp_path, handoff):
    result = run(tmp_path, server, *SYNC)
    assert result.returncode == 0, result.stderr
    lock = json.loads((tmp_path / "agentdocs.lock.json").read_text())
    assert set(lock["files"]) >= SKILL_FILES
    script = tmp_path / ".claude/skills/handoff/scripts/run.sh"
    assert script.read_bytes() == SCRIPT.encode("utf-8")
    assert (tmp_path / ".agents/skills/review/SKILL.md").read_text() == REVIEW["SKILL.md"]
    assert run(tmp_path, server, *SYNC, "--check").returncode == 0

    # A local edit is drift, kept by sync.
    script.write_bytes(b"echo mine\n")
    check = run(tmp_path, server, *SYNC, "--check")
    assert check.returncode == 1
    assert out(check) == ["edited-locally\t.claude/skills/handoff/scripts/run.sh"]
    kept = run(tmp_path, server, *SYNC)
    assert kept.returncode == 1
    assert script.read_bytes() == b"echo mine\n"

    # The server's new version reaches the unedited copy; the edited one stays kept.
    skill_service.skill_write(
        skill=handoff,
        files={**HANDOFF, "references/more.md": "More.\n"},
        base_version=1,
        user=handoff.updated_by,
    )
    again = run(tmp_path, server, *SYNC)
    assert again.returncode == 1
    assert (tmp_path / ".agents/skills/handoff/references/more.md").read_text() == "More.\n"
    assert (tmp_path / ".claude/skills/handoff/references/more.md").read_text() == "More.\n"
    assert script.read_bytes() == b"echo mine\n"

    # A deleted skill's unedited files go.
    skill_service.skill_delete(skill=handoff, base_version=2, user=handoff.updated_by)
    run(tmp_path, server, *SYNC, "--force")
    assert not (tmp_path / ".agents/skills/handoff").exists()  # its emptied folder too
    assert (tmp_path / ".agents/skills/review/SKILL.md").exists()


def test_propose_sends_a_skills_local_edit_as_a_change_request_of_the_skill(
    server, tmp_path, handoff, writer
):
    assert run(tmp_path, server, *SYNC).returncode == 0
    # The skill moves on meanwhile (a reference added): v2 still holds the script as
    # synced, so the edit is based on v2, its files with the edited script.
    skill_service.skill_write(
        skill=handoff,
        files={**HANDOFF, "references/notes.md": "# Notes\n"},
        base_version=1,
        user=writer,
    )
    # The same edit in both tools' folders is one proposal.
    for folder in (".claude", ".agents"):
        (tmp_path / f"{folder}/skills/handoff/scripts/run.sh").write_text("echo mine\n")
    result = run(tmp_path, server, "propose", "--reason", "mine")
    assert result.returncode == 0, result.stderr
    lines = out(result)
    assert (
        "propose    .agents/skills/handoff/scripts/run.sh → skills/handoff  (edited here: "
        "proposes a change to the skill handoff, based on v2)" in lines
    )
    [change] = ChangeRequest.objects.all()
    assert f"change #{change.pk} skills/handoff  " in lines[-1]
    assert change.skill == "handoff" and change.base_version == 2
    assert change.files == {
        **HANDOFF,
        "references/notes.md": "# Notes\n",
        "scripts/run.sh": "echo mine\n",
    }
    assert change.proposer == writer and "mine" in change.reason
    assert Skill.objects.get(pk=handoff.pk).version == 2  # nothing written
    # Proposing again finds the open change request instead of opening another.
    again = run(tmp_path, server, "propose")
    assert again.returncode == 0 and "already proposed as change" in again.stdout.decode()
    assert ChangeRequest.objects.count() == 1


def test_propose_skips_a_skill_file_edited_differently_in_two_folders(server, tmp_path):
    assert run(tmp_path, server, *SYNC).returncode == 0
    (tmp_path / ".claude/skills/handoff/scripts/run.sh").write_text("echo one\n")
    (tmp_path / ".agents/skills/handoff/scripts/run.sh").write_text("echo two\n")
    result = run(tmp_path, server, "propose")
    assert result.returncode == 1
    assert all("edited differently in two folders" in line for line in out(result))
    assert not ChangeRequest.objects.exists()


def test_importing_what_sync_wrote_changes_nothing(server, tmp_path, project):
    assert run(tmp_path, server, *SYNC).returncode == 0
    versions = {(s.project_id, s.name): s.version for s in Skill.objects.all()}
    result = run(tmp_path, server, "import", "--tenant", "acme", "--project", "web")
    assert result.returncode == 0, result.stderr
    lines = out(result)
    assert "unchanged  .agents/skills/handoff/ → skills/handoff  (same files as version 1)" in lines
    assert (
        "unchanged  .agents/skills/review/ → skills/review  (same files as version 1 (from "
        "_vance))" in lines
    )
    assert (
        "skipped    .claude/skills/handoff/ → skills/handoff  (the same skill as "
        ".agents/skills/handoff/)" in lines
    )
    assert {(s.project_id, s.name): s.version for s in Skill.objects.all()} == versions


def test_import_creates_and_updates_skills_from_a_repositorys_folders(
    server, tmp_path, project, handoff
):
    deploy = tmp_path / ".github/skills/deploy"
    (deploy / "scripts").mkdir(parents=True)
    (deploy / "SKILL.md").write_text(skill_md("deploy", "Deploy the web app."))
    (deploy / "scripts/go.sh").write_text("make deploy\n")
    (deploy / ".DS_Store").write_bytes(b"\x00")  # hidden: not collected
    mine = tmp_path / ".claude/skills/handoff"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text(skill_md("handoff", "Our handoff."))
    args = ("import", "--tenant", "acme", "--project", "web", "--reason", "from the repo")

    dry = run(tmp_path, server, *args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert out(dry) == [
        "update     .claude/skills/handoff/ → skills/handoff  (version 1 → 2)",
        "create     .github/skills/deploy/ → skills/deploy  (new skill)",
        "# dry run: nothing was written",
    ]
    assert not Skill.objects.filter(name="deploy").exists()

    result = run(tmp_path, server, *args)
    assert result.returncode == 0, result.stderr
    created = Skill.objects.get(project=project, name="deploy")
    assert created.files == {
        "SKILL.md": skill_md("deploy", "Deploy the web app."),
        "scripts/go.sh": "make deploy\n",
    }
    assert created.history.first().history_change_reason == (
        "from the repo; imported from .github/skills/deploy/"
    )
    handoff.refresh_from_db()
    assert (handoff.version, handoff.description) == (2, "Our handoff.")
    assert set(handoff.files) == {"SKILL.md"}


def test_an_import_of_a_skill_that_breaks_the_specification_names_the_file(server, tmp_path):
    broken = tmp_path / ".cursor/skills/broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: other\ndescription: x\n---\n")
    result = run(tmp_path, server, "import", "--tenant", "acme", "--project", "web")
    assert result.returncode == 1
    message = result.stderr.decode("utf-8")
    assert ".cursor/skills/broken/SKILL.md: The frontmatter's `name` is 'other'" in message
    assert "(invalid_skill, field files.0.content; HTTP 422)" in message
    assert not Skill.objects.filter(name__in=["broken", "other"]).exists()

"""Repositories reported by the real CLI, in a real git repository, against a live
server: `sync` reports and the list shows it in sync; a server edit shows it behind
with behind_by; a local edit and `sync --check` show it edited locally; `bind --repo`
reports its run; `--no-report` sends nothing; a failing report only warns."""

from __future__ import annotations

import shutil

import pytest
import requests

from agentdocs.models import Document, RepositoryCheck
from agentdocs.services import documents as document_service
from tests.cli.test_bindings import run_cli
from tests.cli.test_repository_bind import CLEAN_REMOTE, PROJECT, commit, repo  # noqa: F401
from tests.conftest import api_token_key

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def agent_notes(project, make_document):
    return make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n")


@pytest.fixture
def server(live_server, writer, agent_notes):
    return {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(writer)}


def repositories(server: dict) -> list[dict]:
    response = requests.get(
        f"{server['AGENTDOCS_URL']}/api/v1/tenants/acme/projects/web/repositories/",
        headers={"Authorization": f"Bearer {server['AGENTDOCS_TOKEN']}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()["results"]


def cli(folder, server, *args: str):
    return run_cli(*args, cwd=folder, env=server)


def test_sync_reports_then_a_server_edit_is_behind_and_a_local_edit_is_edited(
    repo,  # noqa: F811
    server,
    admin,
    agent_notes,
):
    synced = cli(repo, server, "sync", *PROJECT, "--format", "agents-md", "--dir", str(repo))
    assert synced.returncode == 0, synced.stderr.decode()
    assert b"not reported" not in synced.stderr
    head = commit(repo)
    [listed] = repositories(server)
    assert listed["remote"] == CLEAN_REMOTE and listed["branch"] == "main"
    assert listed["state"] == "in-sync" and listed["behind_by"] == {}
    assert listed["formats"] == ["agents-md"]

    document_service.document_write(
        document=Document.objects.get(pk=agent_notes.pk),
        user=admin,
        body="# Web rules\n\n- Use spaces.\n",
        base_version=1,
        reason="spaces",
    )
    [listed] = repositories(server)
    assert listed["state"] == "behind" and listed["behind_by"] == {"AGENTS.md": 1}

    (repo / "AGENTS.md").write_text("# mine\n", "utf-8")
    checked = cli(repo, server, "sync", "--check", *PROJECT, "--format", "agents-md",
                  "--dir", str(repo))  # fmt: skip
    assert checked.returncode == 1 and b"edited-locally\tAGENTS.md" in checked.stdout
    [listed] = repositories(server)
    assert listed["state"] == "edited-locally"
    assert listed["last_commit"] == head
    kinds = list(RepositoryCheck.objects.values_list("kind", flat=True))
    assert sorted(kinds) == ["check", "sync"]


def test_bind_reports_its_run_and_no_report_sends_nothing(repo, server):  # noqa: F811
    cli(repo, server, "sync", *PROJECT, "--format", "agents-md", "--dir", str(repo))
    commit(repo)
    bound = cli(repo, server, "bind", *PROJECT, "--repo", str(repo), "--tool", "codex",
                "--process", "run-1")  # fmt: skip
    assert bound.returncode == 0, bound.stderr.decode()
    [listed] = repositories(server)
    assert listed["state"] == "in-sync"
    assert listed["last_run"]["process"] == "run-1"

    before = RepositoryCheck.objects.count()
    quiet = cli(repo, server, "sync", "--check", "--no-report", *PROJECT, "--format",
                "agents-md", "--dir", str(repo))  # fmt: skip
    assert quiet.returncode == 0
    quiet = cli(repo, server, "bind", "--no-report", *PROJECT, "--repo", str(repo), "--tool",
                "codex", "--process", "run-2")  # fmt: skip
    assert quiet.returncode == 0
    assert RepositoryCheck.objects.count() == before


def test_without_a_remote_the_report_only_warns_and_the_exit_code_stands(tmp_path, server):
    folder = tmp_path / "plain"
    folder.mkdir()
    synced = cli(folder, server, "sync", *PROJECT, "--format", "agents-md", "--dir", str(folder))
    assert synced.returncode == 0
    warnings = [line for line in synced.stderr.decode().splitlines() if "not reported" in line]
    assert len(warnings) == 1 and "--repo-name" in warnings[0]
    named = cli(folder, server, "sync", "--check", "--repo-name", "laptop", *PROJECT,
                "--format", "agents-md", "--dir", str(folder))  # fmt: skip
    assert named.returncode == 0 and b"not reported" not in named.stderr
    [listed] = repositories(server)
    assert listed["name"] == "laptop" and listed["remote"] is None


def test_a_refused_report_warns_once_and_changes_nothing_else(repo, server, reader):  # noqa: F811
    read_only = {**server, "AGENTDOCS_TOKEN": api_token_key(reader)}
    from agentdocs.models import ApiToken

    ApiToken.objects.filter(user=reader).update(scopes=["read"])
    synced = cli(repo, read_only, "sync", *PROJECT, "--format", "agents-md", "--dir", str(repo))
    assert synced.returncode == 0
    warnings = [line for line in synced.stderr.decode().splitlines() if "not reported" in line]
    assert len(warnings) == 1 and "render" in warnings[0]
    assert (repo / "AGENTS.md").exists()

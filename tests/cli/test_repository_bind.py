"""`agentdocs bind --repo DIR --tool TOOL`: the real CLI, in a real git repository, against
a live server; then `outdated` and `reconstruct` of the records it made."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from agentdocs.core.agent_files import render_scoped
from agentdocs.models import BindingRecord, Document
from agentdocs.services import documents as document_service
from tests.cli.test_bindings import run_cli
from tests.conftest import api_token_key

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

REMOTE = "https://deploy:ghp_s3cretT0ken@example.com/acme/web.git"
CLEAN_REMOTE = "https://example.com/acme/web.git"
PROJECT = ("--tenant", "acme", "--project", "web")


def git(repository: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repository), *args], capture_output=True, check=True, timeout=30
    )
    return done.stdout.decode().strip()


@pytest.fixture
def agent_notes(project, make_document):
    return make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n")


@pytest.fixture
def server(live_server, writer, agent_notes):
    return {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(writer)}


@pytest.fixture
def repo(tmp_path):
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "user.email", "dev@example.com")
    git(folder, "config", "user.name", "Dev")
    git(folder, "remote", "add", "origin", REMOTE)
    return folder


def sync(repo: Path, server: dict, format: str) -> None:
    result = run_cli("sync", *PROJECT, "--format", format, "--dir", str(repo), cwd=repo, env=server)
    assert result.returncode == 0, result.stderr.decode()


def commit(repo: Path, message: str = "agent files") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def bind(repo: Path, server: dict, tool: str, process: str = "run-1"):
    result = run_cli(
        "bind", *PROJECT, "--repo", str(repo), "--tool", tool, "--process", process,
        cwd=repo, env=server,
    )  # fmt: skip
    return result, json.loads(result.stdout) if result.stdout else None


def api_get(server: dict, path: str) -> dict:
    response = requests.get(
        f"{server['AGENTDOCS_URL']}/api/v1/tenants/acme/projects/web/bindings/{path}",
        headers={"Authorization": f"Bearer {server['AGENTDOCS_TOKEN']}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_in_sync_then_edited_then_server_changed(server, repo, agent_notes, writer):
    sync(repo, server, "agents-md")
    head = commit(repo)

    result, record = bind(repo, server, "codex")
    assert result.returncode == 0, result.stderr.decode()
    section = record["repository"]
    assert section["tool"] == "codex" and section["format"] == "agents-md"
    assert section["remote"] == CLEAN_REMOTE  # no deploy:token@
    assert "s3cret" not in result.stdout.decode()
    assert (section["commit"], section["branch"], section["dirty"]) == (head, "main", False)
    [file] = section["files"]
    data = (repo / "AGENTS.md").read_bytes()
    assert file["path"] == "AGENTS.md" and file["state"] == "in-sync"
    assert file["bytes"] == len(data) and file["cut_at"] is None
    assert file["custody"] == "git"
    assert file["git"] == {
        "remote": CLEAN_REMOTE,
        "commit": head,
        "blob": git(repo, "rev-parse", "HEAD:AGENTS.md"),
        "dirty": False,
    }
    assert [s["path"] for s in file["sources"]] == ["agent.md"]
    assert record["problem_count"] == 0

    # The in-sync file's text comes back from history, verified by its hash.
    [restored] = api_get(server, f"{record['id']}/reconstruct")["repository"]
    assert restored["verified"] is True
    assert restored["body"].encode() == data
    assert api_get(server, f"{record['id']}/outdated")["repository"][0]["status"] == "current"

    # A person edits the file: edited-locally, exit 1, only git can give it back.
    (repo / "AGENTS.md").write_text(data.decode() + "\n- Local rule.\n", encoding="utf-8")
    result, edited = bind(repo, server, "codex", "run-2")
    assert result.returncode == 1
    [file] = edited["repository"]["files"]
    assert file["state"] == "edited-locally" and file["git"]["dirty"] is True
    assert edited["repository"]["dirty"] is True
    assert [p["kind"] for p in edited["problems"]] == ["edited_locally"]
    assert "edited_locally AGENTS.md" in result.stderr.decode()
    [restored] = api_get(server, f"{edited['id']}/reconstruct")["repository"]
    assert restored["restored"] is False
    assert restored["blob"] == git(repo, "rev-parse", "HEAD:AGENTS.md")
    assert restored["blob"] in restored["detail"] and "git" in restored["detail"]

    # The edit is dropped; then the server changes the rules: server-changed, exit 1.
    git(repo, "checkout", "--", "AGENTS.md")
    document = Document.objects.get(pk=agent_notes.pk)
    document_service.document_write(
        document=document,
        body="# Web rules\n\n- Use spaces.\n",
        base_version=document.version,
        user=writer,
        reason="spaces now",
    )
    result, changed = bind(repo, server, "codex", "run-3")
    assert result.returncode == 1
    assert changed["repository"]["files"][0]["state"] == "server-changed"
    assert [p["kind"] for p in changed["problems"]] == ["server_changed"]
    # The first record's file is no longer what the server exports.
    outdated = run_cli("outdated", *PROJECT, str(record["id"]), cwd=repo, env=server)
    assert outdated.returncode == 1
    assert "AGENTS.md" in outdated.stdout.decode() and "changed" in outdated.stdout.decode()
    comparison = api_get(server, f"{record['id']}/compare/{changed['id']}")
    assert comparison["identical"] is False
    assert comparison["repository"][0]["b"]["state"] == "server-changed"
    assert BindingRecord.objects.count() == 3


def test_a_40_kib_agents_md_bound_for_codex_is_cut_at_32_kib(server, repo, agent_notes, writer):
    document = Document.objects.get(pk=agent_notes.pk)
    document_service.document_write(
        document=document,
        body="# Web rules\n\n" + "- A long rule, written out.\n" * 1500,
        base_version=document.version,
        user=writer,
        reason="long",
    )
    sync(repo, server, "agents-md")
    commit(repo)
    assert (repo / "AGENTS.md").stat().st_size > 40 * 1024
    result, record = bind(repo, server, "codex")
    assert result.returncode == 1  # cut: the tool does not see all of it
    [file] = record["repository"]["files"]
    assert file["state"] == "in-sync"
    assert file["cut_at"] == 32768
    assert [p["kind"] for p in record["problems"]] == ["cut_by_tool"]


def test_an_untracked_scoped_rule_is_listed_with_its_globs_in_load_order(server, repo):
    sync(repo, server, "claude-md")
    commit(repo)
    rules = repo / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "b-api.md").write_text("---\npaths:\n  - src/api/**\n---\nThin views.\n", "utf-8")
    (rules / "a-style.md").write_text("Short functions.\n", "utf-8")
    result, record = bind(repo, server, "claude-code")
    assert result.returncode == 0, result.stderr.decode()
    files = record["repository"]["files"]
    assert [f["path"] for f in files] == [
        "CLAUDE.md",
        ".claude/rules/a-style.md",
        ".claude/rules/b-api.md",
    ]
    assert files[0]["custody"] == "git" and files[0]["state"] == "in-sync"
    assert all(f["custody"] == "untracked" and "git" not in f for f in files[1:])
    assert [f["state"] for f in files[1:]] == ["not-generated", "not-generated"]
    assert files[2]["globs"] == ["src/api/**"] and "globs" not in files[1]
    [whole, style, scoped] = api_get(server, f"{record['id']}/reconstruct")["repository"]
    assert whole["verified"] is True
    assert style["restored"] is False and "untracked" in style["detail"]
    assert scoped["restored"] is False and scoped["blob"] is None


def test_an_unknown_tool_exits_2_listing_the_known_ones(server, repo):
    result, _record = bind(repo, server, "notepad")
    assert result.returncode == 2
    assert "codex" in result.stderr.decode() and "claude-code" in result.stderr.decode()
    assert BindingRecord.objects.count() == 0


def test_outside_git_every_file_is_untracked(server, tmp_path):
    sync(tmp_path, server, "agents-md")
    result, record = bind(tmp_path, server, "codex")
    assert result.returncode == 0, result.stderr.decode()
    section = record["repository"]
    assert (section["remote"], section["commit"], section["branch"]) == (None, None, None)
    assert section["files"][0]["custody"] == "untracked"
    assert section["files"][0]["state"] == "in-sync"


def test_another_tenants_user_gets_404_and_nothing_is_stored(
    live_server, repo, outsider, other_tenant, agent_notes, writer
):
    own = {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(writer)}
    sync(repo, own, "agents-md")
    foreign = {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(outsider)}
    result, _record = bind(repo, foreign, "codex")
    assert result.returncode == 2
    assert "HTTP 404" in result.stderr.decode()
    assert BindingRecord.objects.count() == 0


def test_a_remote_git_cannot_read_is_left_out_and_the_run_is_bound(server, repo):
    # Issue 34: an unreadable remote (a bad port) no longer stops the client; the server
    # would refuse it with 400 `invalid_remote`, so the run is bound without one.
    git(repo, "remote", "set-url", "origin", "https://deploy:pw@example.com:99999/acme/web.git")
    sync(repo, server, "agents-md")
    commit(repo)
    result, record = bind(repo, server, "codex")
    assert result.returncode == 0, result.stderr.decode()
    assert record["repository"]["remote"] is None
    assert record["repository"]["files"][0]["git"]["remote"] is None
    assert "pw@" not in json.dumps(BindingRecord.objects.get().record)


def test_the_files_loaded_depend_on_the_working_folder(server, repo, project, make_document):
    make_document(project, ".AGENTS/api.md", render_scoped({"globs": ["src/api/**"]}, "Thin.\n"))
    make_document(
        project, ".AGENTS/web.md", render_scoped({"globs": ["packages/web/**"]}, "Pure.\n")
    )
    sync(repo, server, "agents-md")
    commit(repo)

    # From the root: the root's AGENTS.md only.
    result, record = bind(repo, server, "codex")
    assert result.returncode == 0, result.stderr.decode()
    assert [f["path"] for f in record["repository"]["files"]] == ["AGENTS.md"]

    # From src/api (--cwd): the root's, then src/api's, root first; both in sync and
    # rebuilt from history.
    result = run_cli(
        "bind", *PROJECT, "--repo", str(repo), "--tool", "codex", "--process", "run-api",
        "--cwd", "src/api", cwd=repo, env=server,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    record = json.loads(result.stdout)
    files = record["repository"]["files"]
    assert [(f["path"], f["state"]) for f in files] == [
        ("AGENTS.md", "in-sync"),
        ("src/api/AGENTS.md", "in-sync"),
    ]
    restored = api_get(server, f"{record['id']}/reconstruct")["repository"]
    assert [r["verified"] for r in restored] == [True, True]

    # From packages/web as the process's working folder (no --cwd): its file instead.
    web = repo / "packages" / "web"
    sync(repo, server, "claude-md")
    result = run_cli(
        "bind", *PROJECT, "--repo", str(repo), "--tool", "claude-code", "--process", "run-web2",
        cwd=web, env=server,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    paths = [f["path"] for f in json.loads(result.stdout)["repository"]["files"]]
    assert paths == ["CLAUDE.md", "packages/web/CLAUDE.md"]

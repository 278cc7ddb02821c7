"""`agentdocs sync` and `agentdocs sync --check`, run as a subprocess against a live server:
every drift state, the lock file, and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentdocs.services import documents as document_service
from tests.cli.test_main import run_cli
from tests.conftest import api_token_key

SYNC = ("sync", "--tenant", "acme", "--project", "web", "--format", "agents-md,cursor")


@pytest.fixture
def sources(project, make_document):
    return {
        "agent": make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n"),
        "api": make_document(
            project,
            ".AGENTS/api.md",
            "---\ndescription: API views\nglobs: ['src/api/**']\n---\nThin views.\n",
        ),
    }


@pytest.fixture
def server(live_server, reader, sources):
    return {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(reader)}


def sync(repository: Path, server: dict, *extra: str):
    return run_cli(*SYNC, "--dir", str(repository), *extra, cwd=repository, env=server)


def check_lines(result) -> list[str]:
    return result.stdout.decode("utf-8").splitlines()


def test_sync_writes_the_files_and_a_lock_that_matches_the_server(api, reader, server, tmp_path):
    result = sync(tmp_path, server)
    assert result.returncode == 0, result.stderr
    lock = json.loads((tmp_path / "agentdocs.lock.json").read_text())
    assert set(lock["files"]) == {
        "AGENTS.md",
        ".cursor/rules/agentdocs.mdc",
        ".cursor/rules/api.mdc",
    }
    assert (lock["tenant"], lock["project"], lock["format"]) == ("acme", "web", "agents-md,cursor")
    assert "Use tabs." in (tmp_path / "AGENTS.md").read_text()
    single = api(reader).get("/api/v1/tenants/acme/projects/web/export/?format=agents-md").json()
    assert single["files"][0]["sha256"] == lock["files"]["AGENTS.md"]
    check = sync(tmp_path, server, "--check")
    assert check.returncode == 0 and check_lines(check) == []


def test_one_project_format_gives_the_servers_export_sha256(api, reader, server, tmp_path):
    args = ("sync", "--tenant", "acme", "--project", "web", "--format", "agents-md")
    assert run_cli(*args, "--dir", str(tmp_path), cwd=tmp_path, env=server).returncode == 0
    lock = json.loads((tmp_path / "agentdocs.lock.json").read_text())
    served = api(reader).get("/api/v1/tenants/acme/projects/web/export/?format=agents-md")
    assert lock["export_sha256"] == served.json()["export_sha256"]


def test_each_drift_state_is_reported_and_exits_1(server, tmp_path, sources, writer):
    assert sync(tmp_path, server).returncode == 0
    # server-changed: the server moved on, the local file is what the last sync wrote.
    document_service.document_write(
        document=sources["agent"],
        body="# Web rules\n\n- Use spaces.\n",
        base_version=1,
        user=writer,
    )
    # edited-locally and missing.
    (tmp_path / ".cursor/rules/agentdocs.mdc").write_text("my own edit\n")
    (tmp_path / ".cursor/rules/api.mdc").unlink()
    result = sync(tmp_path, server, "--check")
    assert result.returncode == 1
    assert check_lines(result) == [
        "edited-locally\t.cursor/rules/agentdocs.mdc",
        "missing\t.cursor/rules/api.mdc",
        "server-changed\tAGENTS.md",
    ]
    # The check changed nothing.
    assert (tmp_path / ".cursor/rules/agentdocs.mdc").read_text() == "my own edit\n"


def test_a_file_no_longer_exported_is_extra_and_the_next_sync_removes_it(
    server, tmp_path, sources, admin
):
    assert sync(tmp_path, server).returncode == 0
    document_service.document_delete(document=sources["api"], base_version=1, user=admin)
    result = sync(tmp_path, server, "--check")
    assert result.returncode == 1
    # AGENTS.md inlined the scoped document, so it moved on too.
    assert check_lines(result) == ["extra\t.cursor/rules/api.mdc", "server-changed\tAGENTS.md"]
    assert sync(tmp_path, server).returncode == 0
    assert not (tmp_path / ".cursor/rules/api.mdc").exists()
    assert sync(tmp_path, server, "--check").returncode == 0


def test_usage_and_connection_errors_exit_2(server, tmp_path):
    no_lock = sync(tmp_path, server, "--check")
    assert no_lock.returncode == 2 and b"agentdocs.lock.json" in no_lock.stderr
    bad_format = run_cli(
        "sync", "--format", "word", "--dir", str(tmp_path), cwd=tmp_path, env=server
    )
    assert bad_format.returncode == 2
    unreachable = {**server, "AGENTDOCS_URL": "http://127.0.0.1:9"}
    assert sync(tmp_path, unreachable).returncode == 2


def test_another_tenants_token_gets_the_servers_404_and_exit_1(
    live_server, outsider, other_tenant, sources, tmp_path
):
    server = {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(outsider)}
    result = sync(tmp_path, server)
    assert result.returncode == 1
    assert b"No such tenant" in result.stderr
    assert not (tmp_path / "agentdocs.lock.json").exists()

"""`agentdocs import`, run as a subprocess against a live server."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdocs.models import Document
from tests.cli.test_main import run_cli
from tests.conftest import api_token_key
from tests.services.test_documents_secret_acknowledgement import TEST_TOKEN


@pytest.fixture
def server(live_server, project, writer):
    return {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(writer)}


@pytest.fixture
def repository(tmp_path) -> Path:
    (tmp_path / "AGENTS.md").write_text("# House rules\n- be kind\n", encoding="utf-8")
    (tmp_path / "CLAUDE.md").write_text("# Claude's copy\n", encoding="utf-8")
    rules = tmp_path / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "api.mdc").write_text(
        "---\ndescription: API\nglobs: src/api/**\nalwaysApply: false\n---\nThin views.\n",
        encoding="utf-8",
    )
    (rules / "notes.txt").write_text("not a rule", encoding="utf-8")
    instructions = tmp_path / ".github" / "instructions"
    instructions.mkdir(parents=True)
    (instructions / "python.instructions.md").write_text(
        '---\napplyTo: "**/*.py"\n---\nUse pytest.\n', encoding="utf-8"
    )
    (tmp_path / "README.md").write_text("# Not for agents\n", encoding="utf-8")
    return tmp_path


ARGS = ("import", "--tenant", "acme", "--project", "web")


def test_a_dry_run_prints_the_plan_and_writes_nothing(server, repository, project):
    result = run_cli(*ARGS, "--dry-run", cwd=repository, env=server)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode("utf-8").splitlines()
    assert lines == [
        "create     AGENTS.md → agent.md  (new document)",
        "skipped    CLAUDE.md → agent.md  (not used: AGENTS.md is imported as agent.md "
        "(it comes first))",
        "create     .cursor/rules/api.mdc → .AGENTS/api.md  (new document)",
        "create     .github/instructions/python.instructions.md → .AGENTS/python.md  "
        "(new document)",
        "# dry run: nothing was written",
    ]
    assert not Document.objects.filter(project=project).exists()


def test_import_writes_the_documents_and_a_second_run_changes_nothing(
    server, repository, project, tmp_path_factory
):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = run_cli(
        *ARGS, "--dir", str(repository), "--reason", "adopt", cwd=elsewhere, env=server
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines()[-1] == "# applied"
    documents = {d.path: d for d in Document.objects.filter(project=project)}
    assert set(documents) == {"agent.md", ".AGENTS/api.md", ".AGENTS/python.md"}
    assert documents["agent.md"].body == "# House rules\n- be kind\n"
    assert documents[".AGENTS/api.md"].body == (
        "---\ndescription: API\nglobs:\n- src/api/**\nalwaysApply: false\n---\n\nThin views.\n"
    )
    reason = documents["agent.md"].history.get(version=1).history_change_reason
    assert reason == "adopt; imported from AGENTS.md"

    (repository / "AGENTS.md").write_text("# House rules\n- be kinder\n", encoding="utf-8")
    again = run_cli(*ARGS, cwd=repository, env=server)
    assert again.returncode == 0, again.stderr
    out = again.stdout.decode()
    assert "update     AGENTS.md → agent.md  (version 1 → 2)" in out
    assert "unchanged  .cursor/rules/api.mdc → .AGENTS/api.md" in out
    assert Document.objects.get(project=project, path="agent.md").version == 2


def test_a_refusal_exits_1_with_the_servers_detail_and_nothing_is_written(
    server, repository, project
):
    (repository / "GEMINI.md").write_text(f"token: {TEST_TOKEN}\n", encoding="utf-8")
    (repository / "AGENTS.md").unlink()
    (repository / "CLAUDE.md").unlink()
    result = run_cli(*ARGS, cwd=repository, env=server)
    assert result.returncode == 1
    assert result.stdout == b""
    err = result.stderr.decode()
    assert "GEMINI.md, line 1:" in err
    assert "(secret_detected, field files.0.content; HTTP 422)" in err
    assert not Document.objects.filter(project=project).exists()


def test_a_reader_is_refused_with_exit_1(live_server, project, reader, repository):
    env = {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(reader)}
    result = run_cli(*ARGS, "--dry-run", cwd=repository, env=env)
    assert result.returncode == 1
    assert "HTTP 403" in result.stderr.decode()


def test_an_outsiders_project_is_not_found(
    live_server, project, outsider, other_tenant, repository
):
    env = {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(outsider)}
    result = run_cli(*ARGS, cwd=repository, env=env)
    assert result.returncode == 1
    assert "HTTP 404" in result.stderr.decode()
    assert not Document.objects.exists()


def test_missing_settings_are_a_usage_error(repository):
    result = run_cli(*ARGS, cwd=repository)
    assert result.returncode == 2
    assert "--url, --token missing" in result.stderr.decode()


def test_a_folder_without_agent_files_is_a_usage_error(tmp_path):
    (tmp_path / "README.md").write_text("x", encoding="utf-8")
    env = {"AGENTDOCS_URL": "http://127.0.0.1:9", "AGENTDOCS_TOKEN": "t"}
    result = run_cli(*ARGS, cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert "no agent files in ." in result.stderr.decode()
    missing = run_cli(*ARGS, "--dir", str(tmp_path / "nowhere"), cwd=tmp_path, env=env)
    assert missing.returncode == 2
    assert "is not a folder" in missing.stderr.decode()


def test_an_unreachable_server_exits_2(repository):
    env = {"AGENTDOCS_URL": "http://127.0.0.1:9", "AGENTDOCS_TOKEN": "t"}
    result = run_cli(*ARGS, cwd=repository, env=env)
    assert result.returncode == 2
    assert "cannot reach http://127.0.0.1:9/api/v1/tenants/acme/projects/web/import/" in (
        result.stderr.decode()
    )


def test_adopt_starts_a_project_from_another_projects_synced_files(
    live_server, tenant, project, writer, admin, make_document, tmp_path
):
    from agentdocs.services import tenancy as tenant_service

    mobile = tenant_service.project_create(tenant=tenant, slug="mobile", name="Mobile", user=admin)
    make_document(mobile, "agent.md", "# Mobile rules\n\n- Ship behind a flag.\n")
    server = {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(writer)}
    synced = run_cli(
        "sync",
        "--tenant",
        "acme",
        "--project",
        "mobile",
        "--format",
        "agents-md",
        "--no-report",
        "--dir",
        str(tmp_path),
        cwd=tmp_path,
        env=server,
    )
    assert synced.returncode == 0, synced.stderr
    (tmp_path / "agentdocs.lock.json").unlink()

    plain = run_cli(*ARGS, cwd=tmp_path, env=server)
    assert plain.returncode == 0, plain.stderr
    assert b"skipped" in plain.stdout and b"acme/mobile" in plain.stdout
    assert not Document.objects.filter(project=project).exists()

    adopted = run_cli(*ARGS, "--adopt", cwd=tmp_path, env=server)
    assert adopted.returncode == 0, adopted.stderr
    assert (
        b"create     AGENTS.md \xe2\x86\x92 agent.md  (new document; adopted from acme/mobile"
        in adopted.stdout
    )
    body = Document.objects.get(project=project, path="agent.md").body
    assert body == "# Mobile rules\n\n- Ship behind a flag.\n"

"""`agentdocs bind` and `agentdocs outdated`, run as subprocesses against a live server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentdocs.models import BindingRecord, Document
from agentdocs.services import documents as document_service
from agentdocs.services import providers as provider_service
from config.celery import app as celery_app
from tests.conftest import api_token_key

REPO = Path(__file__).resolve().parents[2]

MANIFEST = {
    "context": [{"name": "workstation/agent-baseline", "standing": "rule"}],
    "local": ["AGENTS.md"],
    "exceptions": [
        {"target": "workstation/agent-baseline#deployment", "effect": "narrow", "reason": "r"}
    ],
}


def run_cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    base["PYTHONPATH"] = str(REPO)
    base.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "-m", "agentdocs.cli", *args],
        cwd=cwd,
        env={**base, **env},
        capture_output=True,
        timeout=60,
    )


@pytest.fixture
def server(live_server, settings, tmp_path, project, vance, admin, writer, make_document):
    # The live server commits, so archival runs: in-process, into this test's storage.
    settings.MEDIA_ROOT = tmp_path / "media"
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    make_document(vance, "baseline.md", "# Baseline\n")
    make_document(project, "AGENTS.md", "# Agents\n")
    provider_service.provider_set(
        tenant=project.tenant,
        name="workstation/agent-baseline",
        project_slug="_vance",
        path="baseline.md",
        user=admin,
    )
    token = api_token_key(writer)
    yield {
        "AGENTDOCS_URL": live_server.url,
        "AGENTDOCS_TOKEN": token,
        "AGENTDOCS_TENANT": "acme",
        "AGENTDOCS_PROJECT": "web",
    }
    celery_app.conf.task_always_eager = eager


def test_bind_prints_the_record_and_exits_0_without_problems(server, tmp_path):
    manifest = tmp_path / "context.json"
    manifest.write_text(json.dumps(MANIFEST), encoding="utf-8")
    result = run_cli(
        "bind", "--manifest", str(manifest), "--process", "cli-run", cwd=tmp_path, env=server
    )
    assert result.returncode == 0, result.stderr.decode()
    record = json.loads(result.stdout)
    assert record["schema"] == "context-binding/v1"
    assert record["process"] == "cli-run"
    assert record["exceptions"][0]["outcome"] == "narrowed"
    stored = BindingRecord.objects.get(pk=record["id"])
    assert stored.archived_at is not None  # archived after the request committed


def test_bind_uses_the_projects_context_json_and_makes_a_process_id(
    server, tmp_path, project, make_document
):
    make_document(project, "context.json", json.dumps(MANIFEST))
    result = run_cli("bind", cwd=tmp_path, env=server)
    assert result.returncode == 0, result.stderr.decode()
    record = json.loads(result.stdout)
    assert record["manifest"]["source"] == "context.json"
    assert record["process"].startswith("run-")


def test_bind_exits_non_zero_with_the_problems_and_still_prints_the_record(server, tmp_path):
    manifest = tmp_path / "m.json"
    manifest.write_text(
        json.dumps(
            {
                "local": ["missing.md"],
                "exceptions": [{"target": "x/y#z", "effect": "broaden", "reason": "r"}],
            }
        ),
        encoding="utf-8",
    )
    result = run_cli("bind", "--manifest", str(manifest), cwd=tmp_path, env=server)
    assert result.returncode == 1
    record = json.loads(result.stdout)
    assert record["problem_count"] == 2
    stderr = result.stderr.decode()
    assert "missing_local_document missing.md" in stderr
    assert "refused_exception x/y#z" in stderr
    assert BindingRecord.objects.filter(pk=record["id"]).exists()


def test_bind_reports_an_invalid_manifest_with_the_servers_error(server, tmp_path):
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"context": [{"name": "a"}]}), encoding="utf-8")
    result = run_cli("bind", "--manifest", str(manifest), cwd=tmp_path, env=server)
    assert result.returncode == 1
    assert "manifest.context[0].standing" in result.stderr.decode()
    not_json = tmp_path / "bad.json"
    not_json.write_text("{", encoding="utf-8")
    result = run_cli("bind", "--manifest", str(not_json), cwd=tmp_path, env=server)
    assert result.returncode == 1
    assert "is not JSON" in result.stderr.decode()
    assert not BindingRecord.objects.exists()


def test_outdated_prints_the_table_and_exits_1_when_a_source_changed(server, tmp_path, admin):
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps(MANIFEST), encoding="utf-8")
    first = json.loads(
        run_cli("bind", "--manifest", str(manifest), cwd=tmp_path, env=server).stdout
    )
    result = run_cli("outdated", str(first["id"]), cwd=tmp_path, env=server)
    assert result.returncode == 0, result.stderr.decode()
    lines = result.stdout.decode().splitlines()
    assert lines[0] == f"# record {first['id']}"
    assert lines[1].split() == ["SOURCE", "BOUND", "CURRENT", "STATUS"]
    assert lines[2].split()[0] == "workstation/agent-baseline" and lines[2].endswith("current")

    doc = Document.objects.get(path="AGENTS.md")
    document_service.document_write(
        document=doc, body="# Agents v2\n", base_version=doc.version, user=admin
    )
    second = json.loads(
        run_cli("bind", "--manifest", str(manifest), cwd=tmp_path, env=server).stdout
    )
    result = run_cli("outdated", str(first["id"]), str(second["id"]), cwd=tmp_path, env=server)
    assert result.returncode == 1
    text = result.stdout.decode()
    agents = [line for line in text.splitlines() if line.startswith("AGENTS.md")]
    assert agents[0].split()[1] == "v1" and agents[0].split()[3] == "v2"
    assert agents[0].endswith("changed") and agents[1].endswith("current")


def test_outdated_lists_a_source_still_missing_without_failing(server, tmp_path):
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({**MANIFEST, "local": ["AGENTS.md", "later.md"]}))
    bound = run_cli("bind", "--manifest", str(manifest), cwd=tmp_path, env=server)
    assert bound.returncode == 1  # the record has a problem: later.md is missing
    record = json.loads(bound.stdout)
    result = run_cli("outdated", str(record["id"]), cwd=tmp_path, env=server)
    later = [line for line in result.stdout.decode().splitlines() if line.startswith("later.md")]
    assert later[0].split() == ["later.md", "-", "-", "missing"]
    assert result.returncode == 0  # as it was when bound: nothing changed since


def test_outdated_of_an_unknown_record_fails_with_the_servers_message(server, tmp_path):
    result = run_cli("outdated", "424242", cwd=tmp_path, env=server)
    assert result.returncode == 1
    assert "no binding record 424242" in result.stderr.decode()
    assert run_cli("outdated", "abc", cwd=tmp_path, env=server).returncode == 2


@pytest.mark.parametrize("record_id", ["\u00b2", "0", "-1", "x"])
def test_outdated_refuses_what_is_not_a_record_id_before_calling_the_server(tmp_path, record_id):
    env = {"AGENTDOCS_URL": "http://127.0.0.1:9", "AGENTDOCS_TOKEN": "t"}
    env |= {"AGENTDOCS_TENANT": "acme", "AGENTDOCS_PROJECT": "web"}
    result = run_cli("outdated", record_id, cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert b"is not a binding record id" in result.stderr


def test_outdated_without_its_settings_names_every_variable_it_needs(tmp_path):
    result = run_cli("outdated", "1", cwd=tmp_path, env={})

    assert result.returncode == 2
    error = result.stderr.decode()
    for name in ("URL", "TOKEN", "TENANT", "PROJECT"):
        assert f"--{name.lower()}" in error and f"AGENTDOCS_{name}" in error, error

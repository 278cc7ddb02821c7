"""`agentdocs block --label` and `agentdocs sync --label` against a live server (issue 29)."""

from __future__ import annotations

import uuid

import pytest

from agentdocs.models import Document
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from tests.cli.test_main import block_args, run_cli
from tests.conftest import api_token_key

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def server(live_server, tenant, project, make_document, reader, admin):
    document = make_document(project, "agent.md", "# Rules\n- stable rule\n")
    label_service.label_move(document=document, name="production", version=1, user=admin)
    document_service.document_write(
        document=Document.objects.get(pk=document.pk),
        body="# Rules\n- new rule\n",
        base_version=1,
        user=admin,
    )
    return {"AGENTDOCS_URL": live_server.url, "AGENTDOCS_TOKEN": api_token_key(reader)}


def test_block_reads_by_label(server, tmp_path):
    labelled = run_cli(
        *block_args(f"cli-{uuid.uuid4()}", "--label", "production", "--no-agent-file"),
        cwd=tmp_path,
        env=server,
    )
    assert labelled.returncode == 0, labelled.stderr
    assert "stable rule" in labelled.stdout.decode() and "new rule" not in labelled.stdout.decode()
    latest = run_cli(
        *block_args(f"cli-{uuid.uuid4()}", "--no-agent-file"), cwd=tmp_path, env=server
    )
    assert "new rule" in latest.stdout.decode()
    bad = run_cli(
        *block_args(f"cli-{uuid.uuid4()}", "--label", "Not!", "--no-agent-file"),
        cwd=tmp_path,
        env=server,
    )
    assert bad.returncode != 0


def test_sync_writes_the_labelled_version(server, tmp_path):
    result = run_cli(
        "sync",
        "--tenant",
        "acme",
        "--project",
        "web",
        "--format",
        "agents-md",
        "--label",
        "production",
        "--dir",
        str(tmp_path),
        cwd=tmp_path,
        env=server,
    )
    assert result.returncode == 0, result.stderr
    written = (tmp_path / "AGENTS.md").read_text(encoding="utf-8")
    assert "stable rule" in written and "new rule" not in written

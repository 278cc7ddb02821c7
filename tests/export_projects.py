"""A project whose documents cover every way a document can be scoped."""

from __future__ import annotations

import os
import shlex
import shutil

import pytest

from agentdocs.core.agent_files import render_scoped
from tests.conftest import need_service

BASE = "/api/v1/tenants/acme/projects/web"

# Always applied; scoped by globs (one of them written as our documents allow, `*.sql`,
# which tools take as `**/*.sql`); picked by its description; picked by hand.
DOCUMENTS = {
    ".AGENTS/overview.md": "What this project is.\n",
    ".AGENTS/api.md": render_scoped(
        {"description": "How the REST API is laid out", "globs": ["src/api/**", "*.sql"]},
        "One APIView per operation.\n",
    ),
    ".AGENTS/review.md": render_scoped(
        {"description": "How to review a change", "alwaysApply": False},
        "Read the tests first.\n",
    ),
    ".AGENTS/legacy.md": render_scoped({"alwaysApply": False}, "The old importer, by hand.\n"),
}


# A monorepo: root rules, two documents scoped to one folder each, one scoped by a glob
# no folder expresses.
MONOREPO = {
    ".AGENTS/overview.md": "A monorepo: an API and a web app.\n",
    ".AGENTS/api.md": render_scoped({"globs": ["src/api/**"]}, "One APIView per operation.\n"),
    ".AGENTS/web.md": render_scoped({"globs": ["packages/web/**"]}, "Components are pure.\n"),
    # No folder expresses it: it stays as today.
    ".AGENTS/sql.md": render_scoped({"globs": ["*.sql"]}, "Migrations never drop a column.\n"),
}


@pytest.fixture
def monorepo(project, vance, make_document):
    make_document(vance, "agent.md", "# House rules\n- be kind\n")
    for path, text in MONOREPO.items():
        make_document(project, path, text)


@pytest.fixture
def documents(project, vance, make_document):
    make_document(vance, "agent.md", "# House rules\n- be kind\n")
    for path, text in DOCUMENTS.items():
        make_document(project, path, text)


def export(client, format: str, **query):
    response = client.get(f"{BASE}/export/", {"format": format, **query})
    assert response.status_code == 200, response.content
    return response.json()


def rulesync_command() -> list[str] | None:
    configured = os.environ.get("RULESYNC_BIN", "").strip()
    if configured:
        return shlex.split(configured)
    found = shutil.which("rulesync")
    return [found] if found else None


@pytest.fixture
def rulesync() -> list[str]:
    command = rulesync_command()
    need_service(
        "rulesync",
        command is not None,
        "set RULESYNC_BIN to a rulesync 17 command line (it needs Node.js 22), or put "
        "rulesync on PATH",
    )
    assert command is not None
    return command

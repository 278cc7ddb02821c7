"""Optimistic concurrency on a real PostgreSQL: concurrent writers from one base,
exactly one wins, the rest get the conflict, and history holds only the winner."""

from __future__ import annotations

import pytest
from django.db import connection

from agentdocs.core.errors import AlreadyExists, VersionConflict
from agentdocs.models import Document, Setting
from agentdocs.services import documents as svc
from agentdocs.services import policy as policy_service
from tests.conftest import need_service, run_concurrently

WRITERS = 8


@pytest.fixture
def postgres(transactional_db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the concurrency proof needs row locks; set DATABASE_URL to a PostgreSQL database",
    )


def test_concurrent_writes_from_one_base_have_exactly_one_winner(postgres, project, writer):
    document = svc.document_create(project=project, path="agent.md", body="base", user=writer)

    def write(i: int):
        return svc.document_write(
            document=document, body=f"writer {i}", base_version=1, user=writer, reason=f"w{i}"
        ).document

    results = run_concurrently(WRITERS, write)
    winners = [r for r in results if isinstance(r, Document)]
    conflicts = [r for r in results if isinstance(r, VersionConflict)]
    assert len(winners) == 1, results
    assert len(conflicts) == WRITERS - 1, results
    assert {c.current_version for c in conflicts} == {2}

    document.refresh_from_db()
    assert document.version == 2 and document.body == winners[0].body
    history = list(document.history.order_by("version").values_list("version", "body"))
    assert history == [(1, "base"), (2, winners[0].body)]


def test_concurrent_edits_from_one_base_have_exactly_one_winner(postgres, project, writer):
    document = svc.document_create(
        project=project, path="agent.md", body="- rule: TODO\n", user=writer
    )

    def edit(i: int):
        return svc.document_edit(
            document=document, old="TODO", new=f"edit {i}", base_version=1, user=writer
        )

    results = run_concurrently(WRITERS, edit)
    assert sum(isinstance(r, Document) for r in results) == 1, results
    assert sum(isinstance(r, VersionConflict) for r in results) == WRITERS - 1, results
    assert document.history.count() == 2


def test_concurrent_creates_of_one_path_have_exactly_one_winner(postgres, project, writer):
    def create(i: int):
        return svc.document_create(project=project, path="new.md", body=f"c{i}", user=writer)

    results = run_concurrently(WRITERS, create)
    assert sum(isinstance(r, Document) for r in results) == 1, results
    assert sum(isinstance(r, AlreadyExists) for r in results) == WRITERS - 1, results
    assert Document.history.filter(path="new.md").count() == 1


SETTING_WRITERS = 16


@pytest.mark.parametrize("level", ["tenant", "project"])
def test_concurrent_creates_of_one_setting_key_serialise(postgres, project, admin, level):
    on_project = project if level == "project" else None

    def create(i: int):
        return policy_service.setting_set(
            tenant=project.tenant, project=on_project, key="memory.lang", value="en", user=admin
        )

    results = run_concurrently(SETTING_WRITERS, create)
    assert all(isinstance(r, tuple) for r in results), results
    assert sorted(created for _, created in results) == [False] * (SETTING_WRITERS - 1) + [True]
    assert Setting.objects.filter(key="memory.lang").count() == 1
    assert Setting.history.filter(key="memory.lang").count() == 1


def test_sixteen_concurrent_puts_of_a_new_setting_answer_one_201_and_200s(
    postgres, project, admin, api
):
    clients = [api(admin) for _ in range(SETTING_WRITERS)]
    url = "/api/v1/tenants/acme/projects/web/settings/memory.lang"

    def put(i: int):
        return clients[i].put(url, {"value": f"v{i % 2}"}, format="json").status_code

    results = run_concurrently(SETTING_WRITERS, put)
    assert sorted(results) == [200] * (SETTING_WRITERS - 1) + [201], results
    setting = Setting.objects.get(key="memory.lang")
    # Every later PUT either changed the value (a version) or matched it (none).
    assert 1 <= setting.history.count() <= SETTING_WRITERS

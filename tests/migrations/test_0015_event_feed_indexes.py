"""The feed's indexes are replaced both ways, and on PostgreSQL without holding writes."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

OLD = {"event_tenant_recent", "event_project_recent", "event_kind_recent"}
NEW = {"event_tenant_feed", "event_project_feed", "event_kind_feed"}


def _indexes() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, "agentdocs_event"))


def _migrate(target: str) -> None:
    MigrationExecutor(connection).migrate([("agentdocs", target)])


def test_the_feed_indexes_are_replaced_and_restored(db, blank_database):
    # The test database, with every migration applied, has the new ones.
    assert _indexes() >= NEW and not OLD & _indexes()
    with blank_database():
        _migrate("0014_backfill_events")
        assert _indexes() >= OLD and not NEW & _indexes()
        _migrate("0015_event_feed_indexes")
        assert _indexes() >= NEW and not OLD & _indexes()
        _migrate("0014_backfill_events")
        assert _indexes() >= OLD and not NEW & _indexes()


@pytest.mark.django_db(transaction=True)  # sqlmigrate refuses CONCURRENTLY in a transaction
def test_on_postgresql_they_are_built_and_dropped_concurrently():
    if connection.vendor != "postgresql":
        pytest.skip("CONCURRENTLY is PostgreSQL's; other databases build indexes as usual")
    out = io.StringIO()
    call_command("sqlmigrate", "agentdocs", "0015", stdout=out)
    statements = [line for line in out.getvalue().splitlines() if line and line[0] != "-"]
    assert len(statements) == 6
    assert all(" CONCURRENTLY " in statement for statement in statements)

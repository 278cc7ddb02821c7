"""0016 adds columns with a default, which on SQLite rebuilds the history table: the
history index 0012 made without a model state survives it, both ways."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

INDEX = "agentdocs_historicaldocument_versions"


def _history_indexes() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, "agentdocs_historicaldocument"))


def _migrate(targets: list[tuple[str, str]]) -> None:
    MigrationExecutor(connection).migrate(targets)


@pytest.mark.django_db(transaction=True)
def test_the_history_index_is_there_after_0016_and_after_unapplying_it():
    assert INDEX in _history_indexes()
    try:
        _migrate([("agentdocs", "0015_event_feed_indexes")])
        assert INDEX in _history_indexes()
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert INDEX in _history_indexes()

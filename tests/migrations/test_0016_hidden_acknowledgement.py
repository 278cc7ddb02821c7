"""0016 adds columns with a default, which on SQLite rebuilds the history table: the
history index 0012 made without a model state survives it, both ways."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

INDEX = "agentdocs_historicaldocument_versions"


def _history_indexes() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, "agentdocs_historicaldocument"))


def _migrate(target: str) -> None:
    MigrationExecutor(connection).migrate([("agentdocs", target)])


def test_the_history_index_is_there_after_0016_and_after_unapplying_it(db, blank_database):
    # The test database, with every migration applied.
    assert INDEX in _history_indexes()
    with blank_database():
        _migrate("0015_event_feed_indexes")
        assert INDEX in _history_indexes()
        _migrate("0016_hidden_acknowledgement")
        assert INDEX in _history_indexes()
        _migrate("0015_event_feed_indexes")
        assert INDEX in _history_indexes()

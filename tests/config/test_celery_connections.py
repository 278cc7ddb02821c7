"""A Celery worker keeps its database connection from one task to the next.

Celery's Django fixup closes the connection before and after every task unless
`CELERY_DB_REUSE_MAX` is set, and a new PostgreSQL connection per archival cost more
than the archival itself (bench/README.md, "Archival"). Around each task the worker
now does what Django does around a request: `close_old_connections`.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.db import connection, transaction

from config.celery import _close_old_connections, app
from tests.conftest import need_service

pytestmark = pytest.mark.django_db(transaction=True)


def _task(*, eager: bool) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(is_eager=eager))


def test_the_fixup_reuses_connections():
    from django.conf import settings

    assert app.conf.get("CELERY_DB_REUSE_MAX") == settings.CELERY_DB_REUSE_MAX >= 1000


def test_a_usable_connection_is_kept_between_tasks(monkeypatch):
    # monkeypatch puts the setting back as it was: a later test of this worker reads it
    # (`agentdocs.sql.prepared` prepares nothing when it is 0).
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", None)
    try:
        connection.ensure_connection()
        before = connection.connection
        _close_old_connections(task=_task(eager=False))
        assert connection.connection is before
    finally:
        connection.close()


def test_an_obsolete_connection_is_closed_after_a_task(monkeypatch):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "SQLite's in-memory test database is never closed; set DATABASE_URL",
    )
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)  # obsolete once used
    connection.ensure_connection()
    connection.close_at = 0
    _close_old_connections(task=_task(eager=False))
    assert connection.connection is None


def test_an_eager_task_leaves_the_callers_connection_alone():
    with transaction.atomic():
        connection.ensure_connection()
        before = connection.connection
        _close_old_connections(task=_task(eager=True))
        assert connection.connection is before and connection.in_atomic_block

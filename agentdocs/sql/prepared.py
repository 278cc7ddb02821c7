"""Prepared statements for the hottest queries, on PostgreSQL.

Django sends each query as text with its parameters bound on the client, so
PostgreSQL parses, analyses and plans it again every time. For the statement every
token-authenticated API request runs (the token, its user and the caller's access,
`agentdocs.sql.access`: some forty columns of five tables), that cost the server
more than executing it: about 0.36 ms of PostgreSQL's CPU per request, a seventh of
all the CPU a Memory Block render took on the machine (`bench/README.md`). Prepared
once per connection, the statement is only executed.

psycopg prepares only what a cursor binding its parameters on the server executes;
Django's cursors bind on the client and never prepare, and Django sets psycopg's
`prepare_threshold` to None (no prepared statements at all) to keep connection
poolers working. `cursor()` here is a server-binding cursor, wrapped as Django wraps
its own (so query logging, execute wrappers and `CaptureQueriesContext` see what it
runs), that prepares every statement it executes; nothing else is ever prepared.
psycopg keeps at most 100 prepared statements per connection and forgets them on a
rollback, preparing them again on their next execution.

A pooler that does not track prepared statements (PgBouncer in transaction mode
before 1.21) hands a prepared statement's name to another server connection: set
`DATABASE_PREPARED_STATEMENTS=0` there. Off, with `DATABASE_CONN_MAX_AGE=0` (a
connection per request) and on SQLite, `cursor()` is Django's.
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.db import connection

# While this module's cursor executes, psycopg's threshold for preparing a query by
# itself: in effect never, so only what is asked for is prepared. Outside, the
# connection keeps Django's None, and psycopg does not track the other queries (a
# client-bound query holds its parameters: 100 of them could pin megabytes).
_ONLY_WHEN_ASKED = 2**62


def enabled() -> bool:
    """On PostgreSQL when the setting allows and connections are kept between requests:
    a connection closed after each request (`CONN_MAX_AGE` 0) would prepare a statement
    to run it once, one round trip more than not preparing it."""
    return (
        connection.vendor == "postgresql"
        and bool(settings.AGENTDOCS_PREPARED_STATEMENTS)
        and connection.settings_dict.get("CONN_MAX_AGE") != 0
    )


@functools.cache
def _preparing_cursor_class() -> type:
    # Django's server-binding cursor (psycopg's, with `callproc`), which django-stubs omit.
    from django.db.backends.postgresql.base import ServerBindingCursor  # type: ignore[attr-defined]

    class PreparingCursor(ServerBindingCursor):
        """Binds on the server and prepares what it executes (named `_pg3_<n>`)."""

        def execute(self, query: Any, params: Any = None, *, prepare: Any = None, **kwargs: Any):
            raw = self.connection
            threshold = raw.prepare_threshold
            raw.prepare_threshold = _ONLY_WHEN_ASKED
            try:
                return super().execute(query, params, prepare=True, **kwargs)
            finally:
                raw.prepare_threshold = threshold

    return PreparingCursor


def cursor() -> Any:
    """A cursor whose statements are prepared once per connection (Django's own cursor
    when prepared statements are off or the database is not PostgreSQL)."""
    if not enabled():
        return connection.cursor()
    # What `connection.cursor()` does before creating its cursor.
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        created = _preparing_cursor_class()(connection.connection)
        _use_connection_timezone(created)
        connection.validate_thread_sharing()
        if connection.queries_logged:
            return connection.make_debug_cursor(created)
        return connection.make_cursor(created)


def _use_connection_timezone(created: Any) -> None:
    """Load timestamps in the connection's time zone, as Django's `create_cursor` does."""
    # Both are what `create_cursor` uses; django-stubs omit them.
    from django.db.backends.postgresql.base import TIMESTAMPTZ_OID  # type: ignore[attr-defined]
    from django.db.backends.postgresql.psycopg_any import (  # type: ignore[import-untyped]
        register_tzloader,
    )
    from psycopg.pq import Format

    loader = created.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
    if connection.timezone != loader.timezone:
        register_tzloader(connection.timezone, created)

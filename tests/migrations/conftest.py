"""A blank database for the tests of one migration: migrated forward only as far as the
test needs, then thrown away. Unapplying every later migration of the test database
and applying them again took some 20 s a test; a blank database costs the migrations
up to the one under test, and leaves the test database as it was."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper


@pytest.fixture
def blank_database(
    django_db_setup, django_db_blocker, tmp_path
) -> Callable[[], AbstractContextManager[BaseDatabaseWrapper]]:
    """``with blank_database() as connection:`` makes a new, empty database this
    thread's `default` connection inside the block: `django.db.connection`, a
    `MigrationExecutor` made on it and the managers a data migration uses (which name
    no database) all reach it. The test database, its schema and the test's own
    transaction are left as they were, and are `default` again after the block. On
    PostgreSQL the blank one is `default`'s database name with `_blank`: after
    `django_db_setup`, a worker's is test_<NAME>_gw<n>_blank, its own."""

    @contextmanager
    def blank() -> Iterator[BaseDatabaseWrapper]:
        original = connections[DEFAULT_DB_ALIAS]
        settings_dict = {**original.settings_dict}
        with django_db_blocker.unblock():
            if original.vendor == "postgresql":
                settings_dict["NAME"] = f"{original.settings_dict['NAME']}_blank"
                name = original.ops.quote_name(settings_dict["NAME"])
                with original.creation._nodb_cursor() as cursor:
                    cursor.execute(f"DROP DATABASE IF EXISTS {name}")
                    cursor.execute(f"CREATE DATABASE {name}")
            elif original.vendor == "sqlite":
                settings_dict["NAME"] = str(tmp_path / "blank.sqlite3")
            else:
                pytest.skip(f"no blank database is made on {original.vendor}")
            connection = original.__class__(settings_dict, alias=DEFAULT_DB_ALIAS)
            connections[DEFAULT_DB_ALIAS] = connection
            try:
                yield connection
            finally:
                connections[DEFAULT_DB_ALIAS] = original
                connection.close()
                # A migration that looks content types up (auth's proxy permissions)
                # leaves the blank database's ids in the manager's cache of `default`.
                ContentType.objects.clear_cache()
                if original.vendor == "postgresql":
                    with original.creation._nodb_cursor() as cursor:
                        cursor.execute(f"DROP DATABASE {name}")

    return blank

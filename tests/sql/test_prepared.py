"""`agentdocs.sql.prepared`: the access queries are prepared once per PostgreSQL
connection, read what the database holds at each execution, and survive what a
connection goes through (rollbacks, errors, reconnects)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from agentdocs.models import ApiToken, Membership, Project
from agentdocs.services import tokens as token_service
from agentdocs.sql import access as access_sql
from agentdocs.sql import prepared
from tests.conftest import api_token_key, need_service

pytestmark = pytest.mark.django_db


@pytest.fixture
def on_postgres():
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "prepared statements are PostgreSQL's; set DATABASE_URL to a PostgreSQL database",
    )


def _prepared_statements() -> dict[str, int]:
    """This session's prepared statements: their text and how often each ran."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def _token_access(key: str):
    return access_sql.token_and_access_row(
        key_hash=token_service.hash_key(key), tenant_slug="acme", project_slug="web"
    )


@pytest.mark.postgres
def test_the_token_query_is_prepared_once_and_executed_each_time(on_postgres, project, reader):
    key = api_token_key(reader)
    for _ in range(3):
        row = access_sql.token_and_access_row(
            key_hash=token_service.hash_key(key), tenant_slug="acme", project_slug="web"
        )
        assert row is not None and row.access.membership_role == "reader"
    statements = [
        (text, runs)
        for text, runs in _prepared_statements().items()
        if "FROM agentdocs_apitoken k" in text
    ]
    assert len(statements) == 1, statements
    text, runs = statements[0]
    assert runs == 3
    assert "$1" in text and "%s" not in text  # bound on the server
    # Django's setting stays: no other query is prepared, or tracked for preparing.
    assert connection.connection.prepare_threshold is None
    assert len(connection.connection._prepared._counts) == 0


@pytest.mark.postgres
def test_the_session_access_query_is_prepared(on_postgres, project, writer):
    for _ in range(2):
        row = access_sql.access_row(user_id=writer.pk, tenant_slug="acme", project_slug="web")
        assert row.project == project and row.membership_role == "writer"
    runs = [
        runs
        for text, runs in _prepared_statements().items()
        if "FROM agentdocs_tenant t" in text and "apitoken" not in text
    ]
    assert runs == [2]


@pytest.mark.postgres
def test_off_nothing_is_prepared(on_postgres, settings, project, reader):
    settings.AGENTDOCS_PREPARED_STATEMENTS = False
    assert not prepared.enabled()
    row = _token_access(api_token_key(reader))
    assert row is not None and row.access.project == project
    access_sql.access_row(user_id=reader.pk, tenant_slug="acme", project_slug="web")
    assert _prepared_statements() == {}


@pytest.mark.postgres
def test_not_with_a_connection_per_request(on_postgres, monkeypatch, project, reader):
    """Closed after each request, a connection would prepare a statement to run it once."""
    assert prepared.enabled()
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)
    assert not prepared.enabled()
    assert _token_access(api_token_key(reader)) is not None
    assert _prepared_statements() == {}


@pytest.mark.postgres
def test_each_execution_reads_what_is_committed_now(on_postgres, project, reader, admin):
    """A prepared statement keeps its plan, not its answer: a demoted member, a removed
    project and a revoked token are seen on the very next execution."""
    key = api_token_key(reader)
    assert _token_access(key).access.membership_role == "reader"
    Membership.objects.filter(user=reader).update(role="writer")
    assert _token_access(key).access.membership_role == "writer"
    Membership.objects.filter(user=reader).delete()
    assert _token_access(key).access.membership_role is None
    Project.objects.filter(pk=project.pk).delete()
    assert _token_access(key).access.project is None
    ApiToken.objects.filter(user=reader).update(revoked_at=timezone.now())
    assert _token_access(key).token.revoked_at is not None
    assert max(r for t, r in _prepared_statements().items() if "apitoken k" in t) == 5


@pytest.mark.postgres
def test_it_survives_a_rolled_back_transaction_and_a_failed_statement(on_postgres, project, reader):
    key = api_token_key(reader)
    assert _token_access(key) is not None
    with pytest.raises(IntegrityError), transaction.atomic():
        assert _token_access(key) is not None
        Project.objects.create(tenant=project.tenant, slug="web", name="twice")
    # psycopg forgets its statements on a rollback and prepares them again.
    row = _token_access(key)
    assert row is not None and row.access.project == project
    assert _token_access(key) is not None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_survives_a_new_connection(on_postgres, project, reader):
    key = api_token_key(reader)
    assert _token_access(key) is not None
    connection.close()
    row = _token_access(key)
    assert row is not None and row.access.project == project
    assert [r for t, r in _prepared_statements().items() if "apitoken k" in t] == [1]


def test_on_sqlite_or_off_it_is_djangos_cursor(settings):
    settings.AGENTDOCS_PREPARED_STATEMENTS = connection.vendor != "postgresql"
    assert not prepared.enabled()
    with prepared.cursor() as cursor:
        assert type(cursor.cursor) is type(connection.cursor().cursor)
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)

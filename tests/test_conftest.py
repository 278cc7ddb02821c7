"""The suite's own machinery (tests/conftest.py): what a transactional test leaves."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection

from tests.conftest import MIGRATE_WRITES, empty_tables


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_empty_tables_leaves_every_table_as_migrate_left_it(project, admin, make_document, api):
    if connection.vendor != "postgresql":
        pytest.skip("empty_tables() is the PostgreSQL end of a transactional test")
    make_document(project, "agent.md", "# Rules\n")
    api(admin)  # a token: a row that points at a user
    kinds, permissions = ContentType.objects.count(), Permission.objects.count()
    assert kinds and permissions

    emptied = empty_tables()

    assert {"auth_user", "agentdocs_tenant", "agentdocs_document"} <= set(emptied)
    assert not set(emptied) & MIGRATE_WRITES
    left = [
        model._meta.db_table
        for model in apps.get_models(include_auto_created=True)
        if model._meta.managed
        and model._meta.db_table not in MIGRATE_WRITES
        and model._default_manager.exists()
    ]
    assert left == []
    assert (ContentType.objects.count(), Permission.objects.count()) == (kinds, permissions)
    assert empty_tables() == []  # nothing left to empty: no statement but the look

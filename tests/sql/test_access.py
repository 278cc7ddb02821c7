"""`agentdocs.sql.access` against its ORM twin: the same access row, read with the ORM.

These run on the configured database: SQLite by default, PostgreSQL with DATABASE_URL,
where each runs with the statements prepared (`agentdocs.sql.prepared`) and without.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agentdocs.models import ApiToken, Membership, Project, Tenant
from agentdocs.services import tokens as token_service
from agentdocs.sql import access as access_sql
from agentdocs.sql.access import AccessRow
from tests.conftest import api_token_key

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True, params=[True, False], ids=["prepared", "unprepared"])
def prepared_statements(request, settings):
    settings.AGENTDOCS_PREPARED_STATEMENTS = request.param
    return request.param


def _orm_access_row(*, user_id: int, tenant_slug: str, project_slug: str | None) -> AccessRow:
    tenant = Tenant.objects.filter(slug=tenant_slug).first()
    role = (
        Membership.objects.filter(tenant=tenant, user_id=user_id)
        .values_list("role", flat=True)
        .first()
        if tenant is not None
        else None
    )
    project = None
    if project_slug is not None and tenant is not None:
        project = Project.objects.filter(tenant=tenant, slug=project_slug).first()
    return AccessRow(tenant=tenant, membership_role=role, project=project)


def _fields(instance) -> dict | None:
    if instance is None:
        return None
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def _same(row: AccessRow, twin: AccessRow) -> None:
    assert row == twin  # model equality: same class and primary key
    assert _fields(row.tenant) == _fields(twin.tenant)  # every column, converted alike
    assert _fields(row.project) == _fields(twin.project)
    assert row.membership_role == twin.membership_role
    if row.project is not None:
        assert row.project.tenant is row.tenant  # loaded once, no second query


CASES = [
    ("reader", "acme", None),
    ("reader", "acme", "web"),
    ("reader", "acme", "_vance"),
    ("reader", "acme", "nope"),
    ("reader", "globex", None),
    ("reader", "globex", "_vance"),
    ("reader", "nope", None),
    ("reader", "nope", "web"),
    ("outsider", "acme", "web"),
    ("outsider", "globex", "_vance"),
    ("admin", "acme", None),
]


@pytest.mark.parametrize(("who", "tenant_slug", "project_slug"), CASES)
def test_access_row_is_the_orm_read(
    request, project, other_tenant, who, tenant_slug, project_slug, django_assert_num_queries
):
    user = request.getfixturevalue(who)
    with django_assert_num_queries(1):
        row = access_sql.access_row(
            user_id=user.pk, tenant_slug=tenant_slug, project_slug=project_slug
        )
    twin = _orm_access_row(user_id=user.pk, tenant_slug=tenant_slug, project_slug=project_slug)
    _same(row, twin)


def test_access_row_keeps_timezone_aware_datetimes(project, writer):
    row = access_sql.access_row(user_id=writer.pk, tenant_slug="acme", project_slug="web")
    assert row.tenant.created_at.tzinfo is not None
    assert row.project.created_at == project.created_at


@pytest.mark.parametrize(("who", "tenant_slug", "project_slug"), CASES)
def test_token_and_access_row_is_the_orm_read(
    request, project, other_tenant, who, tenant_slug, project_slug, django_assert_num_queries
):
    user = request.getfixturevalue(who)
    key_hash = token_service.hash_key(api_token_key(user))
    with django_assert_num_queries(1):
        row = access_sql.token_and_access_row(
            key_hash=key_hash, tenant_slug=tenant_slug, project_slug=project_slug
        )
    twin_token = ApiToken.objects.select_related("user").get(key_hash=key_hash)
    assert _fields(row.token) == _fields(twin_token)
    assert _fields(row.token.user) == _fields(twin_token.user)
    assert row.token.user == get_user_model().objects.get(pk=user.pk)
    twin = _orm_access_row(user_id=user.pk, tenant_slug=tenant_slug, project_slug=project_slug)
    _same(row.access, twin)


def test_token_and_access_row_is_none_for_an_unknown_key(project):
    assert access_sql.token_and_access_row(key_hash="0" * 64, tenant_slug="acme") is None

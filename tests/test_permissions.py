"""The permission matrix: role × reserved or not × read or write × own or foreign tenant."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agentdocs import permissions
from agentdocs.core.errors import Forbidden, NotFound
from agentdocs.models import Role

pytestmark = pytest.mark.django_db

# (role, project, path) -> may write
WRITE_MATRIX = [
    (Role.READER, "web", "agent.md", False),
    (Role.WRITER, "web", "agent.md", True),
    (Role.ADMIN, "web", "agent.md", True),
    (Role.READER, "web", "_vance/agent.md", False),
    (Role.WRITER, "web", "_vance/agent.md", False),
    (Role.ADMIN, "web", "_vance/agent.md", True),
    (Role.READER, "_vance", "agent.md", False),
    (Role.WRITER, "_vance", "agent.md", False),
    (Role.ADMIN, "_vance", "agent.md", True),
    (Role.WRITER, "web", "_vance", False),
    (Role.WRITER, "web", "_vancez/agent.md", True),
]


@pytest.fixture
def users(admin, writer, reader):
    return {Role.ADMIN: admin, Role.WRITER: writer, Role.READER: reader}


@pytest.mark.parametrize(("role", "project_slug", "path", "may_write"), WRITE_MATRIX)
def test_write_matrix(users, project, role, project_slug, path, may_write):
    access = permissions.project_access(users[role], "acme", project_slug)
    assert access.role == role
    assert access.may_read(path)
    assert access.may_write(path) is may_write
    if may_write:
        access.require_write(path)
    else:
        with pytest.raises(Forbidden):
            access.require_write(path)


@pytest.mark.parametrize("project_slug", ["web", "_vance"])
@pytest.mark.parametrize("role", [Role.READER, Role.WRITER, Role.ADMIN])
def test_outsider_sees_nothing_of_a_foreign_tenant(
    users, project, outsider, other_tenant, role, project_slug
):
    # The outsider is admin of globex, and still nothing of acme exists for them.
    with pytest.raises(NotFound):
        permissions.tenant_access(outsider, "acme")
    with pytest.raises(NotFound):
        permissions.project_access(outsider, "acme", project_slug)
    # ... and members of acme see nothing of globex.
    with pytest.raises(NotFound):
        permissions.project_access(users[role], "globex", "_vance")


def test_unknown_tenant_and_foreign_tenant_look_the_same_to_an_outsider(project, outsider):
    with pytest.raises(NotFound) as foreign:
        permissions.project_access(outsider, "acme", "web")
    with pytest.raises(NotFound) as unknown:
        permissions.project_access(outsider, "no-such-tenant", "web")
    assert foreign.value.as_dict() == unknown.value.as_dict()


def test_member_learns_of_a_missing_project(project, reader):
    with pytest.raises(NotFound) as missing:
        permissions.project_access(reader, "acme", "nope")
    assert missing.value.field == "project"


def test_superuser_is_admin_everywhere(project):
    root = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    access = permissions.project_access(root, "acme", "_vance")
    assert access.role == Role.ADMIN
    assert access.may_write("agent.md")


def test_anonymous_gets_not_found(project):
    from django.contrib.auth.models import AnonymousUser

    with pytest.raises(NotFound):
        permissions.project_access(AnonymousUser(), "acme", "web")


def test_access_is_resolved_in_one_query(project, writer, django_assert_num_queries):
    with django_assert_num_queries(1):
        permissions.project_access(writer, "acme", "web")
    with django_assert_num_queries(1):
        permissions.tenant_access(writer, "acme")


def test_access_loads_the_tenant_and_project_as_the_orm_would(project, writer):
    access = permissions.project_access(writer, "acme", "web")
    assert access.project == project and access.tenant == project.tenant
    assert access.project.created_at == project.created_at
    assert access.project.created_at.tzinfo is not None
    assert access.tenant.created_at == project.tenant.created_at
    assert access.project.tenant is access.tenant
    tenant_only = permissions.tenant_access(writer, "acme")
    assert tenant_only.tenant.created_at.tzinfo is not None

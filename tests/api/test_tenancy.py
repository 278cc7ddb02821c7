"""Tenants, projects and members through the API."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from agentdocs.core.errors import InvalidInput
from agentdocs.models import Membership, Project, Tenant
from agentdocs.services import tenancy as tenant_service

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw")


def test_superuser_creates_a_tenant_with_its_reserved_project_and_becomes_admin(api, root):
    response = api(root).post(
        "/api/v1/tenants/", {"slug": "initech", "name": "Initech"}, format="json"
    )
    assert response.status_code == 201, response.json()
    tenant = Tenant.objects.get(slug="initech")
    assert list(tenant.projects.values_list("slug", flat=True)) == ["_vance"]
    assert Membership.objects.get(tenant=tenant, user=root).role == "admin"


def test_only_superusers_create_tenants_by_default(api, writer):
    response = api(writer).post("/api/v1/tenants/", {"slug": "x", "name": "X"}, format="json")
    assert response.status_code == 403
    assert not Tenant.objects.filter(slug="x").exists()


@override_settings(AGENTDOCS_TENANT_CREATORS="authenticated")
def test_a_setting_lets_any_user_create_tenants(api, writer):
    response = api(writer).post("/api/v1/tenants/", {"slug": "x", "name": "X"}, format="json")
    assert response.status_code == 201


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"slug": "_vance", "name": "X"}, "slug"),
        ({"slug": "_mine", "name": "X"}, "slug"),
        ({"slug": "Has Space", "name": "X"}, "slug"),
        ({"slug": "ok"}, "name"),
        ({"slug": 5, "name": "X"}, "slug"),
        ({"name": "X"}, "slug"),
        ({"slug": "ok", "name": "X", "extra": 1}, "extra"),
    ],
)
def test_bad_tenant_input(api, root, payload, field):
    response = api(root).post("/api/v1/tenants/", payload, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert not Tenant.objects.exists()


@pytest.mark.parametrize(
    "slug", ["_VANCE", "\uff3fvance", "_v\u0430nce", "_vance\u200b", "\uff3f\uff56ance"]
)
def test_a_slug_that_looks_like_vance_is_refused_as_such(api, root, project, admin, slug):
    for url in ("/api/v1/tenants/", "/api/v1/tenants/acme/projects/"):
        response = api(root).post(url, {"slug": slug, "name": "X"}, format="json")
        assert response.status_code == 400
        assert response.json()["field"] == "slug"
        assert "looks like the reserved `_vance`" in response.json()["detail"]
    with pytest.raises(InvalidInput) as error:
        tenant_service.project_create(tenant=project.tenant, slug=slug, name="X", user=admin)
    assert error.value.field == "slug" and "looks like" in error.value.detail
    assert set(Project.objects.values_list("slug", flat=True)) == {"_vance", "web"}


def test_duplicate_tenant_is_409(api, root, tenant):
    response = api(root).post("/api/v1/tenants/", {"slug": "acme", "name": "Again"}, format="json")
    assert response.status_code == 409 and response.json()["field"] == "slug"


def test_tenant_list_shows_only_memberships(api, tenant, other_tenant, reader, outsider):
    assert [t["slug"] for t in api(reader).get("/api/v1/tenants/").json()["results"]] == ["acme"]
    assert [t["slug"] for t in api(outsider).get("/api/v1/tenants/").json()["results"]] == [
        "globex"
    ]
    assert api(reader).get("/api/v1/tenants/acme/").json()["role"] == "reader"
    assert api(outsider).get("/api/v1/tenants/acme/").status_code == 404


def test_admin_creates_projects_others_cannot(api, tenant, admin, writer, outsider, other_tenant):
    created = api(admin).post(
        "/api/v1/tenants/acme/projects/", {"slug": "docs", "name": "Docs"}, format="json"
    )
    assert created.status_code == 201
    assert (
        api(writer)
        .post("/api/v1/tenants/acme/projects/", {"slug": "w", "name": "W"}, format="json")
        .status_code
        == 403
    )
    assert (
        api(outsider)
        .post("/api/v1/tenants/acme/projects/", {"slug": "o", "name": "O"}, format="json")
        .status_code
        == 404
    )
    reserved = api(admin).post(
        "/api/v1/tenants/acme/projects/", {"slug": "_other", "name": "R"}, format="json"
    )
    assert reserved.status_code == 400 and reserved.json()["field"] == "slug"
    listing = api(writer).get("/api/v1/tenants/acme/projects/").json()["results"]
    assert [p["slug"] for p in listing] == ["_vance", "docs"]
    assert listing[0]["reserved"] is True
    assert api(writer).get("/api/v1/tenants/acme/projects/docs/").json()["role"] == "writer"
    assert api(outsider).get("/api/v1/tenants/acme/projects/docs/").status_code == 404
    assert set(Project.objects.values_list("slug", flat=True)) == {"_vance", "docs"}


def test_members_are_managed_by_admins(
    api, tenant, admin, writer, outsider, other_tenant, settings
):
    settings.AGENTDOCS_DIRECT_MEMBERSHIP = True  # adding mallory directly, without an invitation
    listing = api(admin).get("/api/v1/tenants/acme/members/").json()["results"]
    assert [(m["username"], m["role"]) for m in listing] == [
        ("alice", "admin"),
        ("bob", "writer"),
        ("carol", "reader"),
    ]
    promoted = api(admin).put(
        "/api/v1/tenants/acme/members/bob", {"role": "admin", "reason": "lead"}, format="json"
    )
    assert promoted.status_code == 200 and promoted.json()["role"] == "admin"
    added = api(admin).put(
        "/api/v1/tenants/acme/members/mallory", {"role": "reader"}, format="json"
    )
    assert added.status_code == 201
    assert api(admin).get("/api/v1/tenants/acme/members/mallory").json()["role"] == "reader"
    assert api(admin).delete("/api/v1/tenants/acme/members/mallory").status_code == 204
    assert api(outsider).get("/api/v1/tenants/acme/").status_code == 404
    row = Membership.history.filter(user__username="bob").latest("history_id")
    assert (row.history_user.username, row.history_change_reason, row.change_type) == (
        "alice",
        "lead",
        "updated",
    )


def test_non_admins_cannot_manage_members(api, tenant, writer, reader, outsider, other_tenant):
    assert (
        api(writer)
        .put("/api/v1/tenants/acme/members/carol", {"role": "admin"}, format="json")
        .status_code
        == 403
    )
    assert api(reader).get("/api/v1/tenants/acme/members/").status_code == 403
    assert api(outsider).get("/api/v1/tenants/acme/members/").status_code == 404
    assert Membership.objects.get(user__username="carol").role == "reader"


def test_the_last_admin_cannot_be_removed_or_demoted(api, tenant, admin):
    demote = api(admin).put("/api/v1/tenants/acme/members/alice", {"role": "writer"}, format="json")
    assert demote.status_code == 422 and demote.json()["field"] == "role"
    remove = api(admin).delete("/api/v1/tenants/acme/members/alice")
    assert remove.status_code == 422
    assert Membership.objects.get(user__username="alice").role == "admin"


@pytest.mark.parametrize(
    ("username", "payload", "status", "field"),
    [
        ("nobody", {"role": "reader"}, 404, "username"),
        ("bob", {"role": "owner"}, 400, "role"),
        ("bob", {}, 400, "role"),
        ("bob", {"role": "reader", "x": 1}, 400, "x"),
    ],
)
def test_bad_member_input(api, tenant, admin, username, payload, status, field, settings):
    settings.AGENTDOCS_DIRECT_MEMBERSHIP = True  # else an unknown username is invited (202)
    response = api(admin).put(f"/api/v1/tenants/acme/members/{username}", payload, format="json")
    assert response.status_code == status
    assert response.json()["field"] == field
    assert Membership.objects.get(user__username="bob").role == "writer"


def test_a_reason_that_is_not_a_string_is_refused(api, tenant, admin):
    response = api(admin).put(
        "/api/v1/tenants/acme/members/bob", {"role": "admin", "reason": 5}, format="json"
    )
    assert response.status_code == 400 and response.json()["field"] == "reason"
    assert Membership.objects.get(user__username="bob").role == "writer"


def test_the_caller_s_role_is_in_a_tenant_or_project_read_but_not_in_a_list(
    api, tenant, project, writer
):
    listed = api(writer).get("/api/v1/tenants/").json()["results"]
    assert set(listed[0]) == {"slug", "name", "created_at"}
    assert api(writer).get("/api/v1/tenants/acme/").json()["role"] == "writer"
    projects = api(writer).get("/api/v1/tenants/acme/projects/").json()["results"]
    assert all(set(p) == {"slug", "name", "reserved", "created_at"} for p in projects)
    read = api(writer).get("/api/v1/tenants/acme/projects/web/").json()
    assert (read["slug"], read["reserved"], read["role"]) == ("web", False, "writer")


@pytest.mark.parametrize("payload", [{"role": None}, {"role": 3}, {"role": "reader", "reason": []}])
def test_member_input_is_typed(api, tenant, admin, payload):
    response = api(admin).put("/api/v1/tenants/acme/members/bob", payload, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == next(iter(k for k, v in payload.items() if v != "reader"))
    assert Membership.objects.get(user__username="bob").role == "writer"

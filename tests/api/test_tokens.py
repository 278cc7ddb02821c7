"""API tokens: hashed, shown once, scoped, expiring, revocable, and isolated by tenant."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from agentdocs.models import ApiToken
from agentdocs.services import tokens as token_service

pytestmark = pytest.mark.django_db

ALL = ["read", "render", "write", "admin"]


def bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def new_key(user, scopes=ALL, **extra) -> str:
    return token_service.token_create(user=user, name="t", scopes=scopes, **extra).key


def test_a_created_token_is_shown_once_and_stored_only_as_its_hash(api, writer, tenant):
    response = api(writer).post(
        "/api/v1/tokens/", {"name": "ci", "scopes": ["read"]}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    key = body["token"]
    assert key.startswith(f"adt_{body['prefix']}_") and len(body["prefix"]) == 8
    stored = ApiToken.objects.get(pk=body["id"])
    assert stored.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert key not in str(ApiToken.objects.filter(pk=stored.pk).values().get())
    listed = api(writer).get("/api/v1/tokens/").json()["results"]
    assert [t["prefix"] for t in listed if t["id"] == body["id"]] == [body["prefix"]]
    assert all("token" not in t for t in listed)
    assert stored.history.get().history_user == writer


def test_both_token_and_bearer_schemes_authenticate(writer, tenant, project):
    key = new_key(writer)
    for scheme in ("Token", "Bearer"):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"{scheme} {key}")
        assert client.get("/api/v1/tenants/acme/projects/web/").status_code == 200


@pytest.mark.parametrize(
    "body, field",
    [
        ({"scopes": ["read"]}, "name"),
        ({"name": "x"}, "scopes"),
        ({"name": "x", "scopes": []}, "scopes"),
        ({"name": "x", "scopes": ["root"]}, "scopes"),
        ({"name": "x", "scopes": ["read"], "expires_in_days": 0}, "expires_in_days"),
        ({"name": "x", "scopes": ["read"], "expires_in_days": "soon"}, "expires_in_days"),
        ({"name": "x", "scopes": ["read"], "colour": "red"}, "colour"),
        ({"name": "x" * 101, "scopes": ["read"]}, "name"),
    ],
)
def test_bad_token_requests_name_the_field_and_create_nothing(api, writer, body, field):
    response = api(writer).post("/api/v1/tokens/", body, format="json")
    assert response.status_code == 400
    assert response.json()["field"].split(".")[0] == field
    assert ApiToken.objects.filter(name="x").count() == 0


def test_a_revoked_token_is_refused_on_the_very_next_request(writer, tenant, project):
    key = new_key(writer)
    client = bearer(key)
    token_id = ApiToken.objects.get(key_hash=token_service.hash_key(key)).pk
    assert client.get("/api/v1/tenants/acme/projects/web/").status_code == 200
    assert client.delete(f"/api/v1/tokens/{token_id}").status_code == 204
    refused = client.get("/api/v1/tenants/acme/projects/web/")
    assert refused.status_code == 401
    assert refused.json()["error"] == "not_authenticated" or refused.json()["error"]
    assert ApiToken.objects.get(pk=token_id).revoked_at is not None


def test_an_expired_token_is_refused(writer, tenant, project):
    key = new_key(writer, expires_in_days=1)
    ApiToken.objects.filter(key_hash=token_service.hash_key(key)).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    response = bearer(key).get("/api/v1/tenants/acme/projects/web/")
    assert response.status_code == 401
    assert "expired" in response.json()["detail"]


def test_a_read_token_cannot_write_or_render(writer, tenant, project, make_document):
    make_document(project, "notes.md", "v1")
    client = bearer(new_key(writer, scopes=["read"]))
    assert client.get("/api/v1/tenants/acme/projects/web/documents/notes.md").status_code == 200
    write = client.put(
        "/api/v1/tenants/acme/projects/web/documents/notes.md",
        {"body": "v2", "version": 1},
        format="json",
    )
    assert write.status_code == 403
    assert write.json()["error"] == "insufficient_scope"
    render = client.post(
        "/api/v1/tenants/acme/projects/web/memory-block/", {"process": "p"}, format="json"
    )
    assert render.status_code == 403
    assert project.documents.get(path="notes.md").body == "v1"


def test_a_render_token_renders_but_does_not_write(writer, tenant, project):
    client = bearer(new_key(writer, scopes=["render"]))
    render = client.post(
        "/api/v1/tenants/acme/projects/web/memory-block/", {"process": "p"}, format="json"
    )
    assert render.status_code == 200, render.content
    write = client.post(
        "/api/v1/tenants/acme/projects/web/documents/",
        {"path": "x.md", "body": "x"},
        format="json",
    )
    assert write.status_code == 403


def test_the_role_caps_the_scopes(reader, tenant, project):
    """An admin-scoped token of a reader still only reads: rights are the smaller of the two."""
    client = bearer(new_key(reader, scopes=ALL))
    response = client.post(
        "/api/v1/tenants/acme/projects/web/documents/",
        {"path": "x.md", "body": "x"},
        format="json",
    )
    assert response.status_code == 403
    assert not project.documents.filter(path="x.md").exists()


def test_an_admin_needs_the_admin_scope_to_administer(admin, tenant):
    write_only = bearer(new_key(admin, scopes=["write"]))
    assert write_only.get("/api/v1/tenants/acme/members/").status_code == 403
    full = bearer(new_key(admin, scopes=ALL))
    assert full.get("/api/v1/tenants/acme/members/").status_code == 200


def test_a_tenant_token_works_only_in_its_tenant(outsider, other_tenant, admin, tenant):
    from agentdocs.services import tenancy as tenant_service

    tenant_service.membership_set(tenant=tenant, username="mallory", role="reader", actor=admin)
    key = new_key(outsider, tenant=other_tenant)
    client = bearer(key)
    assert client.get("/api/v1/tenants/globex/").status_code == 200
    assert client.get("/api/v1/tenants/acme/").status_code == 404
    listed = client.get("/api/v1/tenants/").json()["results"]
    assert [t["slug"] for t in listed] == ["globex"]


def test_a_tenant_token_needs_membership_there(api, writer, tenant, other_tenant):
    response = api(writer).post(
        "/api/v1/tokens/", {"name": "x", "scopes": ["read"], "tenant": "globex"}, format="json"
    )
    assert response.status_code == 404
    assert not ApiToken.objects.filter(name="x").exists()


def test_tenant_admins_list_and_revoke_tokens_of_their_tenant_only(
    api, admin, writer, reader, tenant, outsider, other_tenant
):
    scoped = token_service.token_create(user=writer, name="w", scopes=["read"], tenant=tenant)
    unscoped = token_service.token_create(user=writer, name="u", scopes=["read"])
    foreign = token_service.token_create(
        user=outsider, name="f", scopes=["read"], tenant=other_tenant
    )
    listed = api(admin).get("/api/v1/tenants/acme/tokens/").json()["results"]
    assert [t["name"] for t in listed] == ["w"]
    assert api(reader).get("/api/v1/tenants/acme/tokens/").status_code == 403
    assert api(outsider).get("/api/v1/tenants/acme/tokens/").status_code == 404
    assert api(admin).delete(f"/api/v1/tenants/acme/tokens/{unscoped.token.pk}").status_code == 404
    assert api(admin).delete(f"/api/v1/tenants/acme/tokens/{foreign.token.pk}").status_code == 404
    assert api(admin).delete(f"/api/v1/tenants/acme/tokens/{scoped.token.pk}").status_code == 204
    assert ApiToken.objects.get(pk=scoped.token.pk).revoked
    assert not ApiToken.objects.get(pk=unscoped.token.pk).revoked
    assert not ApiToken.objects.get(pk=foreign.token.pk).revoked


def test_nobody_sees_or_revokes_another_users_token(api, writer, reader, tenant):
    other = token_service.token_create(user=reader, name="r", scopes=["read"])
    assert api(writer).get(f"/api/v1/tokens/{other.token.pk}").status_code == 404
    assert api(writer).delete(f"/api/v1/tokens/{other.token.pk}").status_code == 404
    assert api(writer).delete("/api/v1/tokens/not-a-number").status_code == 404
    assert not ApiToken.objects.get(pk=other.token.pk).revoked


def test_last_used_is_written_at_most_once_a_minute(writer, tenant, project):
    key = new_key(writer)
    client = bearer(key)
    client.get("/api/v1/tenants/acme/projects/web/")
    token = ApiToken.objects.get(key_hash=token_service.hash_key(key))
    first = token.last_used_at
    assert first is not None
    client.get("/api/v1/tenants/acme/projects/web/")
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    client.get("/api/v1/tenants/acme/projects/web/")
    assert ApiToken.objects.get(pk=token.pk).last_used_at > first


def test_manage_token_create_prints_a_working_key(writer, tenant, project, capsys):
    call_command("token_create", "bob", "--tenant", "acme", "--scopes", "read,render")
    key = capsys.readouterr().out.strip()
    assert key.startswith("adt_")
    token = ApiToken.objects.get(key_hash=token_service.hash_key(key))
    assert token.scopes == ["read", "render"] and token.tenant == tenant
    assert bearer(key).get("/api/v1/tenants/acme/projects/web/").status_code == 200


def test_the_secret_check_recognises_our_own_token_format(writer, tenant, project):
    from agentdocs.core.errors import SecretDetected
    from agentdocs.services import documents as document_service

    key = new_key(writer)
    with pytest.raises(SecretDetected):
        document_service.document_create(
            project=project, path="leak.md", body=f"use {key} to deploy", user=writer, reason="x"
        )


@pytest.mark.parametrize(
    "method, path, scope",
    [
        ("put", "/api/v1/tenants/acme/projects/web/documents/notes.md", "write"),
        ("post", "/api/v1/tenants/acme/projects/web/memory-block/", "render"),
    ],
)
def test_a_refused_scope_is_named_by_its_wire_value(writer, tenant, project, method, path, scope):
    """`write`, never `Scope.WRITE` (an f-string of the enum member's repr)."""
    client = bearer(new_key(writer, scopes=["read"]))
    response = getattr(client, method)(path, {"process": "p", "body": "x"}, format="json")
    assert response.status_code == 403
    body = response.json()
    assert body["error"] == "insufficient_scope" and body["required_scope"] == scope
    assert f"include '{scope}'" in body["detail"] and "Scope." not in body["detail"]

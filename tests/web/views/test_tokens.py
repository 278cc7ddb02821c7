"""The "API tokens" page: create (the key shown once), list and revoke your own tokens."""

from __future__ import annotations

import re

import pytest

from agentdocs.models import ApiToken
from agentdocs.services import tokens as token_service

pytestmark = pytest.mark.django_db

KEY = re.compile(r"adt_[A-Za-z0-9]{8}_[A-Za-z0-9]{40}")


def test_the_page_creates_a_token_and_shows_its_key_once(browse, writer, tenant, project):
    client = browse(writer)
    response = client.post(
        "/tokens/",
        {"name": "laptop", "tenant": "acme", "scopes": ["read", "render"], "expires_in_days": 30},
    )
    assert response.status_code == 200
    assert response["Cache-Control"].startswith("max-age=0")
    key = KEY.search(response.content.decode()).group(0)
    token = ApiToken.objects.get(key_hash=token_service.hash_key(key))
    assert (token.user, token.tenant, token.scopes) == (writer, tenant, ["read", "render"])
    listed = client.get("/tokens/").content.decode()
    assert f"adt_{token.prefix}_" in listed and key not in listed
    assert not KEY.search(listed)


def test_the_page_refuses_a_bad_form_and_creates_nothing(browse, writer, tenant, other_tenant):
    client = browse(writer)
    no_scope = client.post("/tokens/", {"name": "x"})
    foreign = client.post("/tokens/", {"name": "x", "tenant": "globex", "scopes": ["read"]})
    assert no_scope.status_code == foreign.status_code == 400
    assert not ApiToken.objects.exists()


def test_revoking_from_the_page_refuses_the_token_at_once(browse, api, writer, tenant, project):
    new = token_service.token_create(user=writer, name="ci", scopes=["read"])
    assert browse(writer).post(f"/tokens/{new.token.pk}/revoke/").status_code == 302
    assert ApiToken.objects.get(pk=new.token.pk).revoked
    client = api()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {new.key}")
    assert client.get("/api/v1/tenants/acme/").status_code == 401
    assert "revoked" in browse(writer).get("/tokens/").content.decode()


def test_nobody_sees_or_revokes_another_users_token_on_the_page(
    browse, writer, outsider, other_tenant
):
    other = token_service.token_create(user=outsider, name="mallory-secret-name", scopes=["read"])
    page = browse(writer).get("/tokens/").content.decode()
    assert "mallory-secret-name" not in page and other.token.prefix not in page
    assert browse(writer).post(f"/tokens/{other.token.pk}/revoke/").status_code == 404
    assert not ApiToken.objects.get(pk=other.token.pk).revoked


def test_the_page_needs_sign_in(browse):
    response = browse().get("/tokens/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_page_refuses_the_token_past_the_cap_with_a_409(browse, writer, tenant, settings):
    settings.AGENTDOCS_MAX_TOKENS_PER_USER = 2
    for name in ("a", "b"):
        token_service.token_create(user=writer, name=name, scopes=["read"])
    response = browse(writer).post("/tokens/", {"name": "third", "scopes": ["read"]})
    assert response.status_code == 409
    assert "the most one person may" in response.content.decode()
    assert not ApiToken.objects.filter(name="third").exists()


def test_the_page_and_the_api_share_the_per_person_creation_limit(
    browse, api, writer, tenant, settings
):
    settings.AGENTDOCS_RATE_LIMITS = {"token_create": "2/hour"}
    created = api(writer).post(
        "/api/v1/tokens/", {"name": "api", "scopes": ["read"]}, format="json"
    )
    assert created.status_code == 201
    assert browse(writer).post("/tokens/", {"name": "page", "scopes": ["read"]}).status_code == 200
    refused = browse(writer).post("/tokens/", {"name": "again", "scopes": ["read"]})
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 3600
    assert "Too many requests" in refused.content.decode()
    assert not ApiToken.objects.filter(name="again").exists()

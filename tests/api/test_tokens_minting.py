"""A token creates only tokens within itself, and lists and revokes only tokens within
its reach; a person holds a bounded number of active tokens (issue 23, finding 1)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone
from rest_framework.test import APIClient

from agentdocs.core.errors import TooManyTokens
from agentdocs.models import ApiToken, Role
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service
from tests.conftest import need_service

pytestmark = pytest.mark.django_db

ALL = ["read", "render", "write", "admin"]
URL = "/api/v1/tokens/"


def bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def token_client(user, scopes=ALL, **extra) -> tuple[APIClient, ApiToken]:
    new = token_service.token_create(user=user, name="caller", scopes=scopes, **extra)
    return bearer(new.key), new.token


def session(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def mint(client: APIClient, **body):
    return client.post(URL, {"name": "minted", **body}, format="json")


def assert_refused(response, field) -> None:
    assert response.status_code == 403, response.json()
    body = response.json()
    assert body["error"] == "insufficient_scope"
    assert body["field"] == field
    assert not ApiToken.objects.filter(name="minted").exists()


@pytest.fixture
def alice_in_globex(admin, outsider, other_tenant):
    """alice is a member of both tenants (the issue's dave)."""
    tenant_service.membership_set(
        tenant=other_tenant, username=admin.username, role=Role.WRITER, actor=outsider
    )
    return admin


def test_a_write_only_token_cannot_create_an_admin_token(admin, tenant):
    client, _ = token_client(admin, scopes=["write"])
    response = mint(client, scopes=["admin"])
    assert_refused(response, "scopes")
    assert response.json()["required_scope"] == "admin"
    assert "'admin'" in response.json()["detail"] and "Scope." not in response.json()["detail"]


def test_creating_a_token_from_a_token_needs_the_admin_scope(admin, tenant):
    client, _ = token_client(admin, scopes=["write"])
    response = mint(client, scopes=["read"])
    assert_refused(response, None)
    assert response.json()["required_scope"] == "admin"
    # A read token is refused by the scope every change needs, before anything else.
    reader_client, _ = token_client(admin, scopes=["read"])
    refused = mint(reader_client, scopes=["read"])
    assert refused.status_code == 403 and refused.json()["error"] == "insufficient_scope"
    assert refused.json()["required_scope"] == "write"
    assert not ApiToken.objects.filter(name="minted").exists()


def test_an_admin_token_creates_a_narrower_token(admin, tenant):
    client, _ = token_client(admin)
    response = mint(client, scopes=["read", "render"], expires_in_days=7)
    assert response.status_code == 201, response.json()
    created = ApiToken.objects.get(pk=response.json()["id"])
    assert created.scopes == ["read", "render"] and created.user == admin
    assert created.history.get().history_user == admin


def test_a_bound_token_cannot_mint_an_unbound_or_foreign_token(alice_in_globex, tenant):
    client, _ = token_client(alice_in_globex, tenant=tenant)
    assert_refused(mint(client, scopes=["read"]), "tenant")
    assert_refused(mint(client, scopes=["read"], tenant="globex"), "tenant")
    # A tenant that does not exist answers the same: nothing is learnt about others.
    assert_refused(mint(client, scopes=["read"], tenant="initech"), "tenant")
    bound = mint(client, scopes=["read"], tenant="acme")
    assert bound.status_code == 201, bound.json()
    assert bound.json()["tenant"] == "acme"


def test_an_expiring_token_cannot_mint_a_longer_lived_one(admin, tenant):
    client, parent = token_client(admin, expires_in_days=1)
    assert_refused(mint(client, scopes=["read"]), "expires_in_days")
    assert_refused(mint(client, scopes=["read"], expires_in_days=2), "expires_in_days")
    # Created a moment after its parent, a 1-day token would outlive it too.
    assert_refused(mint(client, scopes=["read"], expires_in_days=1), "expires_in_days")
    ApiToken.objects.filter(pk=parent.pk).update(expires_at=timezone.now() + timedelta(days=3))
    allowed = mint(client, scopes=["read"], expires_in_days=2)
    assert allowed.status_code == 201, allowed.json()
    assert ApiToken.objects.get(name="minted").expires_at <= timezone.now() + timedelta(days=3)


def test_a_session_user_keeps_todays_rules(admin, tenant):
    response = mint(session(admin), scopes=ALL)
    assert response.status_code == 201, response.json()
    created = ApiToken.objects.get(pk=response.json()["id"])
    assert created.scopes == ALL and created.tenant is None and created.expires_at is None


def test_the_minted_unbound_token_of_the_issue_cannot_reach_globex(alice_in_globex, tenant):
    """The issue's chain: an acme-bound token minting an unbound one that read globex."""
    client, _ = token_client(alice_in_globex, tenant=tenant)
    assert_refused(mint(client, scopes=["read", "write"]), "tenant")
    assert client.get("/api/v1/tenants/globex/").status_code == 404


def test_a_bound_token_sees_and_revokes_only_tokens_of_its_tenant(
    alice_in_globex, tenant, other_tenant
):
    client, own = token_client(alice_in_globex, tenant=tenant)
    unbound = token_service.token_create(user=alice_in_globex, name="u", scopes=["read"]).token
    foreign = token_service.token_create(
        user=alice_in_globex, name="g", scopes=["read"], tenant=other_tenant
    ).token
    sibling = token_service.token_create(
        user=alice_in_globex, name="s", scopes=["read"], tenant=tenant
    ).token
    listed = {row["id"] for row in client.get(URL).json()["results"]}
    assert listed == {own.pk, sibling.pk}
    for token in (unbound, foreign):
        assert client.get(f"{URL}{token.pk}").status_code == 404
        refused = client.delete(f"{URL}{token.pk}")
        assert refused.status_code == 404 and refused.json()["error"] == "not_found"
        token.refresh_from_db()
        assert token.revoked_at is None
    assert client.delete(f"{URL}{sibling.pk}").status_code == 204
    sibling.refresh_from_db()
    assert sibling.revoked_at is not None


def test_an_unbound_token_and_a_session_see_all_their_own_tokens(alice_in_globex, tenant):
    client, own = token_client(alice_in_globex)
    bound = token_service.token_create(
        user=alice_in_globex, name="b", scopes=["read"], tenant=tenant
    ).token
    assert {row["id"] for row in client.get(URL).json()["results"]} == {own.pk, bound.pk}
    assert {row["id"] for row in session(alice_in_globex).get(URL).json()["results"]} == {
        own.pk,
        bound.pk,
    }


def test_the_tenant_token_list_of_a_bound_token_stays_in_its_tenant(
    alice_in_globex, tenant, other_tenant, outsider
):
    client, _ = token_client(alice_in_globex, tenant=tenant)
    assert client.get("/api/v1/tenants/acme/tokens/").status_code == 200
    # alice is a member of globex, but this token does not work there.
    assert client.get("/api/v1/tenants/globex/tokens/").status_code == 404
    theirs = token_service.token_create(
        user=outsider, name="m", scopes=["read"], tenant=other_tenant
    ).token
    assert client.delete(f"/api/v1/tenants/globex/tokens/{theirs.pk}").status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_a_write_token_of_an_admin_cannot_administer_the_tenant_tokens(admin, writer, tenant):
    client, _ = token_client(admin, scopes=["write"])
    bobs = token_service.token_create(user=writer, name="b", scopes=["read"], tenant=tenant).token
    assert client.get("/api/v1/tenants/acme/tokens/").status_code == 403
    assert client.delete(f"/api/v1/tenants/acme/tokens/{bobs.pk}").status_code == 403
    bobs.refresh_from_db()
    assert bobs.revoked_at is None


def test_the_cast_cannot_touch_each_others_tokens(api, admin, writer, reader, tenant, outsider):
    alices = token_service.token_create(user=admin, name="a", scopes=["read"], tenant=tenant)
    for user in (writer, reader, outsider):
        assert api(user).get(f"{URL}{alices.token.pk}").status_code == 404
        assert api(user).delete(f"{URL}{alices.token.pk}").status_code == 404
        ids = {row["id"] for row in api(user).get(URL).json()["results"]}
        assert alices.token.pk not in ids
    assert api(outsider).get("/api/v1/tenants/acme/tokens/").status_code == 404
    assert api(writer).get("/api/v1/tenants/acme/tokens/").status_code == 403
    assert api(reader).get("/api/v1/tenants/acme/tokens/").status_code == 403


def test_the_outsider_cannot_mint_a_token_for_acme(outsider, other_tenant, tenant):
    client, _ = token_client(outsider)
    response = mint(client, scopes=["read"], tenant="acme")
    assert response.status_code == 404 and response.json()["field"] == "tenant"
    bound, _ = token_client(outsider, tenant=other_tenant)
    assert_refused(mint(bound, scopes=["read"], tenant="acme"), "tenant")


# At most AGENTDOCS_MAX_TOKENS_PER_USER active tokens per person.


def test_the_token_past_the_cap_is_a_409_and_is_not_created(admin, tenant, settings):
    settings.AGENTDOCS_MAX_TOKENS_PER_USER = 50
    client, _ = token_client(admin)  # the first of the 50
    for number in range(49):
        token_service.token_create(user=admin, name=f"t{number}", scopes=["read"])
    response = mint(client, scopes=["read"])
    assert response.status_code == 409, response.json()
    assert response.json()["error"] == "too_many_tokens" and "50" in response.json()["detail"]
    assert not ApiToken.objects.filter(name="minted").exists()
    assert mint(session(admin), scopes=["read"]).status_code == 409


def test_revoked_and_expired_tokens_do_not_count_against_the_cap(admin, tenant, settings):
    settings.AGENTDOCS_MAX_TOKENS_PER_USER = 3
    kept = token_service.token_create(user=admin, name="k", scopes=["read"]).token
    revoked = token_service.token_create(user=admin, name="r", scopes=["read"]).token
    expired = token_service.token_create(user=admin, name="e", scopes=["read"]).token
    assert mint(session(admin), scopes=["read"]).status_code == 409
    token_service.token_revoke(token=revoked, actor=admin)
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now())
    assert mint(session(admin), scopes=["read"]).status_code == 201
    assert ApiToken.objects.filter(pk=kept.pk, revoked_at__isnull=True).exists()


def test_the_cap_is_per_person(admin, writer, tenant, settings):
    settings.AGENTDOCS_MAX_TOKENS_PER_USER = 1
    token_service.token_create(user=admin, name="a", scopes=["read"])
    assert mint(session(admin), scopes=["read"]).status_code == 409
    assert mint(session(writer), scopes=["read"]).status_code == 201


# Token creation is rate-limited per person.


def test_token_creation_is_rate_limited_per_person_across_tokens_and_session(
    admin, writer, tenant, settings
):
    settings.AGENTDOCS_RATE_LIMITS = {"token_create": "3/hour"}
    first, _ = token_client(admin)
    second, _ = token_client(admin)
    assert mint(first, scopes=["read"]).status_code == 201
    assert mint(second, scopes=["read"]).status_code == 201
    assert mint(session(admin), scopes=["read"]).status_code == 201
    refused = mint(second, scopes=["read"])
    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert ApiToken.objects.filter(name="minted").count() == 3
    assert mint(session(writer), scopes=["read"]).status_code == 201  # another person


@pytest.fixture
def postgres(transactional_db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "concurrent creations need concurrent connections; set DATABASE_URL",
    )


def test_concurrent_creations_never_pass_the_cap(postgres, admin, settings):
    settings.AGENTDOCS_MAX_TOKENS_PER_USER = 3
    token_service.token_create(user=admin, name="first", scopes=["read"])
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def create(number: int) -> None:
        try:
            barrier.wait(timeout=10)
            token_service.token_create(user=admin, name=f"racer{number}", scopes=["read"])
            outcomes.append("created")
        except TooManyTokens:
            outcomes.append("refused")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=create, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["created"] * 2 + ["refused"] * 4
    assert ApiToken.objects.filter(user=admin).count() == 3

"""Invitations through the API: nobody becomes a member of a tenant without accepting,
and inviting never tells a tenant admin whether a user exists."""

from __future__ import annotations

import json
import secrets

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.models import Invitation, Membership, Scope
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service
from tests.api.test_errors_no_500 import BODIES
from tests.config.test_settings import run_manage

pytestmark = pytest.mark.django_db

INVITATIONS = "/api/v1/tenants/acme/invitations/"
MINE = "/api/v1/invitations/"
# What an invitation's answer may differ in between two targets: its own id and time,
# and the target as it was sent.
PER_INVITATION = {"id", "created_at", "username", "email"}


@pytest.fixture
def dave(db):
    """A user of the server who is not a member of acme."""
    return get_user_model().objects.create_user(
        username="dave", email="dave@example.com", password="dave-password"
    )


@pytest.fixture
def erin(db):
    """Another user of the server, to whom no invitation is addressed."""
    return get_user_model().objects.create_user(
        username="erin", email="erin@example.com", password="erin-password"
    )


@pytest.fixture
def root(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw")


def _invite(api, user, body, tenant="acme"):
    return api(user).post(f"/api/v1/tenants/{tenant}/invitations/", body, format="json")


def _without(body: dict, keys: set[str]) -> dict:
    return {key: value for key, value in body.items() if key not in keys}


def _answers_alike(first, second) -> None:
    assert first.status_code == second.status_code == 202
    assert set(first.json()) == set(second.json())
    assert _without(first.json(), PER_INVITATION) == _without(second.json(), PER_INVITATION)


@pytest.mark.parametrize(
    ("existing", "missing"),
    [
        ({"username": "dave"}, {"username": "nobody"}),
        ({"email": "dave@example.com"}, {"email": "nobody@example.com"}),
    ],
)
def test_an_invitation_answers_alike_whether_or_not_the_user_exists(
    api, tenant, admin, dave, existing, missing
):
    client = api(admin)
    with CaptureQueriesContext(connection) as to_existing:
        first = client.post(INVITATIONS, {**existing, "role": "writer"}, format="json")
    with CaptureQueriesContext(connection) as to_missing:
        second = client.post(INVITATIONS, {**missing, "role": "writer"}, format="json")
    _answers_alike(first, second)
    assert first.json()["state"] == "pending" and first.json()["invited_by"] == "alice"
    assert len(to_existing) == len(to_missing)  # the same work, not only the same words
    assert not Membership.objects.filter(user=dave).exists()


def test_the_invitee_sees_accepts_and_becomes_a_member_with_the_role(api, tenant, admin, dave):
    created = _invite(api, admin, {"username": "dave", "role": "writer", "reason": "new hire"})
    assert created.status_code == 202
    assert not Membership.objects.filter(user=dave).exists()

    mine = api(dave).get(MINE).json()["results"]
    assert [(i["id"], i["tenant"], i["tenant_name"], i["role"], i["invited_by"]) for i in mine] == [
        (created.json()["id"], "acme", "Acme", "writer", "alice")
    ]
    assert "created_at" in mine[0]

    accepted = api(dave).post(f"{MINE}{mine[0]['id']}/accept", format="json")
    assert accepted.status_code == 200, accepted.json()
    assert accepted.json()["state"] == "accepted"
    assert Membership.objects.get(user=dave, tenant=tenant).role == "writer"
    assert api(dave).get("/api/v1/tenants/acme/").json()["role"] == "writer"
    assert api(dave).get(MINE).json()["results"] == []
    assert api(admin).get(INVITATIONS).json()["results"] == []

    history = Membership.history.filter(user=dave).latest("history_id")
    assert history.history_user == dave
    assert "alice" in history.history_change_reason and "dave" in history.history_change_reason
    invitation = Invitation.objects.get(pk=created.json()["id"])
    assert (invitation.accepted_user, invitation.decided_at is not None) == (dave, True)
    assert [row.change_type for row in invitation.history.order_by("history_id")] == [
        "created",
        "updated",
    ]


def test_an_email_invitation_matches_the_user_with_that_address_when_they_look(
    api, tenant, admin, dave
):
    assert _invite(api, admin, {"email": "Dave@Example.COM", "role": "reader"}).status_code == 202
    assert [i["tenant"] for i in api(dave).get(MINE).json()["results"]] == ["acme"]

    dave.email = "dave@elsewhere.example"
    dave.save()
    assert api(dave).get(MINE).json()["results"] == []

    dave.email = "DAVE@example.com"
    dave.save()
    (invitation,) = api(dave).get(MINE).json()["results"]
    assert api(dave).post(f"{MINE}{invitation['id']}/accept").status_code == 200
    assert Membership.objects.get(user=dave, tenant=tenant).role == "reader"


def test_a_declined_invitation_makes_no_membership(api, tenant, admin, dave):
    invitation_id = _invite(api, admin, {"username": "dave", "role": "admin"}).json()["id"]
    declined = api(dave).post(f"{MINE}{invitation_id}/decline", {"reason": "no thanks"})
    assert declined.status_code == 200 and declined.json()["state"] == "declined"
    assert not Membership.objects.filter(user=dave).exists()
    assert api(dave).get(MINE).json()["results"] == []
    assert api(admin).get(INVITATIONS).json()["results"] == []


def test_someone_else_s_invitation_is_not_found(api, tenant, admin, dave, erin):
    invitation_id = _invite(api, admin, {"username": "dave", "role": "writer"}).json()["id"]
    assert api(erin).get(MINE).json()["results"] == []
    for action in ("accept", "decline"):
        response = api(erin).post(f"{MINE}{invitation_id}/{action}")
        assert response.status_code == 404, response.json()
        assert response.json()["error"] == "not_found"
    assert (
        api(erin).post(f"{MINE}999999/accept").json()
        == api(erin).post(f"{MINE}{invitation_id}/accept").json()
    )
    assert Invitation.objects.get(pk=invitation_id).state == "pending"
    assert not Membership.objects.filter(user__in=[dave, erin]).exists()


def test_an_outsider_tenant_admin_cannot_see_or_touch_acme_s_invitations(
    api, tenant, admin, outsider, other_tenant, dave
):
    invitation_id = _invite(api, admin, {"username": "dave", "role": "writer"}).json()["id"]
    assert api(outsider).get(INVITATIONS).status_code == 404
    assert _invite(api, outsider, {"username": "dave", "role": "admin"}).status_code == 404
    assert api(outsider).delete(f"{INVITATIONS}{invitation_id}").status_code == 404
    # Their own tenant does not reach acme's invitation either.
    assert (
        api(outsider).delete(f"/api/v1/tenants/globex/invitations/{invitation_id}").status_code
        == 404
    )
    assert Invitation.objects.get(pk=invitation_id).state == "pending"


@pytest.mark.parametrize("member", ["writer", "reader"])
def test_readers_and_writers_cannot_invite_or_list_invitations(
    api, request, tenant, admin, dave, member
):
    user = request.getfixturevalue(member)
    refused = _invite(api, user, {"username": "dave", "role": "writer"})
    assert refused.status_code == 403, refused.json()
    assert api(user).get(INVITATIONS).status_code == 403
    invitation_id = _invite(api, admin, {"username": "dave", "role": "writer"}).json()["id"]
    assert api(user).delete(f"{INVITATIONS}{invitation_id}").status_code == 403
    assert Invitation.objects.filter(state="pending").count() == 1


def test_a_tenant_admin_lists_and_cancels_pending_invitations(api, tenant, admin, dave):
    for target in ({"username": "dave"}, {"email": "x@example.com"}, {"username": "nobody"}):
        assert _invite(api, admin, {**target, "role": "reader"}).status_code == 202
    listing = api(admin).get(INVITATIONS).json()
    assert listing["count"] == 3
    assert [(i["username"], i["email"]) for i in listing["results"]] == [
        ("nobody", None),
        (None, "x@example.com"),
        ("dave", None),
    ]
    dave_s = listing["results"][2]["id"]
    assert api(admin).delete(f"{INVITATIONS}{dave_s}", {"reason": "typo"}).status_code == 204
    assert api(admin).get(INVITATIONS).json()["count"] == 2
    assert api(dave).get(MINE).json()["results"] == []
    assert api(dave).post(f"{MINE}{dave_s}/accept").status_code == 409
    assert api(admin).delete(f"{INVITATIONS}{dave_s}").status_code == 409
    assert not Membership.objects.filter(user=dave).exists()
    assert api(admin).delete(f"{INVITATIONS}nonsense").status_code == 404


def test_inviting_the_same_user_again_updates_the_pending_invitation(api, tenant, admin, dave):
    first = _invite(api, admin, {"username": "dave", "role": "reader"}).json()
    again = _invite(api, admin, {"username": "dave", "role": "writer"}).json()
    assert again["id"] == first["id"] and again["role"] == "writer"
    assert api(admin).get(INVITATIONS).json()["count"] == 1


@pytest.mark.parametrize("first", ["accept", "decline"])
@pytest.mark.parametrize("then", ["accept", "decline"])
def test_a_decided_invitation_cannot_be_decided_again(api, tenant, admin, dave, first, then):
    invitation_id = _invite(api, admin, {"username": "dave", "role": "reader"}).json()["id"]
    assert api(dave).post(f"{MINE}{invitation_id}/{first}").status_code == 200
    again = api(dave).post(f"{MINE}{invitation_id}/{then}")
    assert again.status_code == 409, again.json()
    assert again.json()["error"] == "invitation_decided"
    assert Invitation.objects.get(pk=invitation_id).state == f"{first}ed".replace("ee", "e")
    assert Membership.objects.filter(user=dave).exists() == (first == "accept")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"username": "dave", "role": "owner"}, "role"),
        ({"username": "dave"}, "role"),
        ({"username": "dave", "email": "dave@example.com", "role": "reader"}, "email"),
        ({"role": "reader"}, "username"),
        ({"username": "", "role": "reader"}, "username"),
        ({"username": "da ve", "role": "reader"}, "username"),
        ({"username": 5, "role": "reader"}, "username"),
        ({"email": "not-an-address", "role": "reader"}, "email"),
        ({"username": "dave", "role": "reader", "tenant": "globex"}, "tenant"),
    ],
)
def test_bad_invitation_input_is_refused_naming_the_field(api, tenant, admin, dave, body, field):
    response = _invite(api, admin, body)
    assert response.status_code == 400, response.json()
    assert response.json()["field"] == field
    assert not Invitation.objects.exists()


# PUT .../members/{username}


def _put_member(api, user, username, role="reader"):
    return api(user).put(f"/api/v1/tenants/acme/members/{username}", {"role": role}, format="json")


def test_putting_a_new_member_invites_them_alike_whether_or_not_they_exist(
    api, tenant, admin, dave
):
    existing = _put_member(api, admin, "dave", "writer")
    missing = _put_member(api, admin, "nobody", "writer")
    _answers_alike(existing, missing)
    assert (existing.json()["username"], existing.json()["role"]) == ("dave", "writer")
    assert not Membership.objects.filter(user=dave).exists()
    (mine,) = api(dave).get(MINE).json()["results"]
    assert mine["id"] == existing.json()["id"]
    assert api(dave).post(f"{MINE}{mine['id']}/accept").status_code == 200
    assert Membership.objects.get(user=dave, tenant=tenant).role == "writer"


def test_putting_an_existing_member_still_changes_their_role(api, tenant, admin, writer):
    response = _put_member(api, admin, "bob", "reader")
    assert response.status_code == 200 and response.json()["role"] == "reader"
    assert Membership.objects.get(user=writer, tenant=tenant).role == "reader"
    assert not Invitation.objects.exists()


def test_a_superuser_adds_a_new_member_directly(api, tenant, root, dave):
    response = _put_member(api, root, "dave", "writer")
    assert response.status_code == 201, response.json()
    assert Membership.objects.get(user=dave, tenant=tenant).role == "writer"
    assert _put_member(api, root, "nobody").status_code == 404
    assert not Invitation.objects.exists()


def test_with_direct_membership_on_a_tenant_admin_adds_directly(api, tenant, admin, dave, settings):
    settings.AGENTDOCS_DIRECT_MEMBERSHIP = True
    response = _put_member(api, admin, "dave", "writer")
    assert response.status_code == 201, response.json()
    assert Membership.objects.get(user=dave, tenant=tenant).role == "writer"
    assert not Invitation.objects.exists()


# API tokens


def _token(user, **extra) -> str:
    return token_service.token_create(user=user, name="t", **extra).key


def test_accepting_with_a_token_needs_the_write_scope(api, tenant, admin, dave):
    invitation_id = _invite(api, admin, {"username": "dave", "role": "reader"}).json()["id"]
    client = api()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {_token(dave, scopes=[Scope.READ])}")
    assert [i["id"] for i in client.get(MINE).json()["results"]] == [invitation_id]
    refused = client.post(f"{MINE}{invitation_id}/accept")
    assert refused.status_code == 403 and refused.json()["error"] == "insufficient_scope"
    assert not Membership.objects.filter(user=dave).exists()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {_token(dave, scopes=[Scope.WRITE])}")
    assert client.post(f"{MINE}{invitation_id}/accept").status_code == 200


def test_a_tenant_bound_token_answers_only_its_tenant_s_invitations(
    api, tenant, admin, dave, other_tenant, outsider
):
    tenant_service.membership_set(
        tenant=other_tenant, username="dave", role="reader", actor=outsider
    )
    invitation_id = _invite(api, admin, {"username": "dave", "role": "reader"}).json()["id"]
    client = api()
    key = _token(dave, scopes=[Scope.WRITE], tenant=other_tenant)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get(MINE).json()["results"] == []
    assert client.post(f"{MINE}{invitation_id}/accept").status_code == 404
    assert not Membership.objects.filter(user=dave, tenant=tenant).exists()


def _count_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_a_tenant_s_invitation_list_runs_as_many_queries_for_one_as_for_twenty(
    api, tenant, admin, django_assert_max_num_queries
):
    client = api(admin)
    tenant_service.invitation_create(tenant=tenant, username="u0", role="reader", invited_by=admin)
    one = _count_queries(client, INVITATIONS)
    for number in range(1, 20):
        tenant_service.invitation_create(
            tenant=tenant, email=f"u{number}@example.com", role="reader", invited_by=admin
        )
    with django_assert_max_num_queries(3):
        assert client.get(INVITATIONS).json()["count"] == 20
    assert _count_queries(client, INVITATIONS) == one


def test_your_invitation_list_runs_as_many_queries_for_one_as_for_twenty(
    api, admin, dave, django_assert_max_num_queries
):
    client = api(dave)
    for number in range(20):
        tenant = tenant_service.tenant_create(slug=f"t{number}", name=f"T{number}", user=admin)
        target = {"username": "dave"} if number % 2 else {"email": "DAVE@example.com"}
        tenant_service.invitation_create(tenant=tenant, role="reader", invited_by=admin, **target)
        if number == 0:
            one = _count_queries(client, MINE)
    with django_assert_max_num_queries(3):
        assert client.get(MINE).json()["count"] == 20
    assert _count_queries(client, MINE) == one


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize(
    ("who", "method", "url"),
    [
        ("admin", "post", INVITATIONS),
        ("admin", "put", "/api/v1/tenants/acme/members/dave"),
        ("admin", "delete", INVITATIONS + "{id}"),
        ("dave", "post", MINE + "{id}/accept"),
        ("dave", "post", MINE + "{id}/decline"),
        ("dave", "post", MINE + "1" * 5000 + "/accept"),
    ],
)
def test_bad_input_to_invitations_is_a_4xx_never_a_500(
    api, request, tenant, admin, dave, who, method, url, body
):
    invitation = tenant_service.invitation_create(
        tenant=tenant, username="dave", role="reader", invited_by=admin
    )
    client = api(request.getfixturevalue(who))
    response = getattr(client, method)(
        url.format(id=invitation.pk), json.dumps(body), content_type="application/json"
    )
    assert response.status_code < 500
    if response.status_code >= 400:
        assert set(response.json()) >= {"error", "detail", "field"}


@pytest.mark.parametrize(("raw", "expected"), [("1", "True"), ("", "False"), ("off", "False")])
def test_direct_membership_is_a_boolean_read_from_the_environment(raw, expected):
    result = run_manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings; print(settings.AGENTDOCS_DIRECT_MEMBERSHIP)",
        SECRET_KEY=secrets.token_urlsafe(50),
        AGENTDOCS_DIRECT_MEMBERSHIP=raw,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_a_misspelt_direct_membership_stops_the_process():
    result = run_manage(
        "check", SECRET_KEY=secrets.token_urlsafe(50), AGENTDOCS_DIRECT_MEMBERSHIP="yse"
    )
    assert result.returncode != 0 and "AGENTDOCS_DIRECT_MEMBERSHIP" in result.stderr

"""Invitations on the home page: the invited user sees them with Accept and Decline,
and only their acceptance makes them a member."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agentdocs.models import Invitation, Membership
from agentdocs.services import tenancy as tenant_service

pytestmark = pytest.mark.django_db


@pytest.fixture
def dave(db):
    return get_user_model().objects.create_user(
        username="dave", email="dave@example.com", password="dave-password"
    )


@pytest.fixture
def erin(db):
    return get_user_model().objects.create_user(username="erin", password="erin-password")


@pytest.fixture
def invitation(tenant, admin, dave) -> Invitation:
    return tenant_service.invitation_create(
        tenant=tenant, email="Dave@Example.com", role="writer", invited_by=admin
    )


def _accept(invitation: Invitation) -> str:
    return f"/invitations/{invitation.pk}/accept/"


def _decline(invitation: Invitation) -> str:
    return f"/invitations/{invitation.pk}/decline/"


def test_the_invited_user_sees_the_invitation_with_accept_and_decline(browse, invitation, dave):
    page = browse(dave).get("/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Invitations" in html and "Acme" in html and "alice" in html and "writer" in html
    assert f'action="{_accept(invitation)}"' in html
    assert f'action="{_decline(invitation)}"' in html


def test_nobody_else_sees_it(browse, invitation, erin, writer):
    for user in (erin, writer):
        html = browse(user).get("/").content.decode()
        assert _accept(invitation) not in html


def test_accepting_makes_the_membership_and_opens_the_tenant(browse, invitation, dave, tenant):
    client = browse(dave, csrf_checks=True)
    client.get("/")
    response = client.post(
        _accept(invitation), {"csrfmiddlewaretoken": client.cookies["csrftoken"].value}
    )
    assert response.status_code == 302 and response["Location"] == "/t/acme/"
    assert Membership.objects.get(user=dave, tenant=tenant).role == "writer"
    assert client.get("/t/acme/").status_code == 200
    assert _accept(invitation) not in client.get("/").content.decode()


def test_declining_makes_no_membership(browse, invitation, dave):
    response = browse(dave).post(_decline(invitation))
    assert response.status_code == 302 and response["Location"] == "/"
    assert not Membership.objects.filter(user=dave).exists()
    invitation.refresh_from_db()
    assert invitation.state == "declined"
    assert _accept(invitation) not in browse(dave).get("/").content.decode()


@pytest.mark.parametrize("action", [_accept, _decline])
def test_someone_else_s_invitation_is_not_found(browse, invitation, erin, action):
    assert browse(erin).post(action(invitation)).status_code == 404
    invitation.refresh_from_db()
    assert invitation.state == "pending"
    assert not Membership.objects.filter(user=erin).exists()


@pytest.mark.parametrize("action", [_accept, _decline])
def test_a_decided_invitation_is_refused_with_409(browse, invitation, dave, action):
    client = browse(dave)
    assert client.post(_decline(invitation)).status_code == 302
    again = client.post(action(invitation))
    assert again.status_code == 409
    assert "already declined" in again.content.decode()
    assert not Membership.objects.filter(user=dave).exists()


def test_the_answers_are_posts_only(browse, invitation, dave):
    assert browse(dave).get(_accept(invitation)).status_code == 405
    assert browse().post(_accept(invitation)).status_code == 302  # to the sign-in page
    invitation.refresh_from_db()
    assert invitation.state == "pending"

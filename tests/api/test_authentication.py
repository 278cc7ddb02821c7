"""Token authentication reads the caller's access in the same query: the rules stay
those of `agentdocs.permissions`, every request reads them afresh, and a request to
a tenant or project pays one database round trip before its own work."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from agentdocs import permissions
from agentdocs.api.access import prefetched_access
from agentdocs.api.authentication import TokenAccessAuthentication
from agentdocs.core.errors import NotFound
from agentdocs.models import ApiToken, Role
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service
from tests.conftest import api_token_key

pytestmark = pytest.mark.django_db

PROJECT = "/api/v1/tenants/acme/projects/web/"
DOCUMENTS = PROJECT + "documents/"


def _token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_key(user)}")
    return client


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser(username="root", password="root-pass")


def test_token_and_access_are_read_in_one_query(
    project, reader, other_tenant, django_assert_num_queries
):
    client = _token_client(reader)
    with django_assert_num_queries(1):
        assert client.get("/api/v1/tenants/acme/").status_code == 200
    with django_assert_num_queries(1):
        assert client.get(PROJECT).json()["slug"] == "web"
    with django_assert_num_queries(1):  # a URL without a tenant: the token and its user
        assert client.get("/api/v1/ping").json() == {"ok": True}


@pytest.mark.parametrize(
    ("who", "url", "status", "field"),
    [
        ("reader", PROJECT, 200, None),
        ("reader", "/api/v1/tenants/acme/projects/nope/", 404, "project"),
        ("outsider", PROJECT, 404, "tenant"),
        ("outsider", "/api/v1/tenants/acme/projects/nope/", 404, "tenant"),
        ("outsider", "/api/v1/tenants/acme/", 404, "tenant"),
        ("reader", "/api/v1/tenants/nope/projects/web/", 404, "tenant"),
        ("reader", "/api/v1/tenants/globex/", 404, "tenant"),
        ("reader", "/api/v1/tenants/acme/members/", 403, None),
        ("superuser", "/api/v1/tenants/acme/members/", 200, None),
        ("superuser", "/api/v1/tenants/nope/", 404, "tenant"),
        ("superuser", "/api/v1/tenants/acme/projects/nope/", 404, "project"),
    ],
)
def test_the_access_read_with_the_token_keeps_the_permission_rules(
    request, project, other_tenant, superuser, who, url, status, field
):
    user = request.getfixturevalue(who) if who != "superuser" else superuser
    response = _token_client(user).get(url)
    assert response.status_code == status, response.content
    if status >= 400:
        assert response.json()["field"] == field


def test_an_outsider_cannot_tell_a_foreign_tenant_from_an_unknown_one(project, outsider):
    client = _token_client(outsider)
    foreign = client.get(DOCUMENTS)
    unknown = client.get("/api/v1/tenants/no-such-tenant/projects/web/documents/")
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json() == unknown.json()


@pytest.mark.parametrize(
    "header",
    [
        "Token not-a-token",
        "Token ",
        "Token two parts",
        "Token " + "x" * 300,
        "Token ab\x00cd",
    ],
)
def test_a_bad_token_is_refused_alike_whatever_the_url_names(project, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    for url in (PROJECT, "/api/v1/tenants/nope/", "/api/v1/ping"):
        response = client.get(url)
        assert response.status_code == 401, (url, response.content)
        assert response.json()["error"] == "authentication_failed"
        assert response["WWW-Authenticate"] == "Token"


def test_an_inactive_users_token_is_refused(project, reader):
    client = _token_client(reader)
    reader.is_active = False
    reader.save()
    for url in (PROJECT, "/api/v1/ping"):
        assert client.get(url).status_code == 401


def test_a_role_change_is_seen_on_the_very_next_request(project, admin, writer, tenant):
    client = _token_client(writer)
    body = {"path": "notes.md", "body": "v1", "reason": "start"}
    assert client.post(DOCUMENTS, body, format="json").status_code == 201
    tenant_service.membership_set(tenant=tenant, username="bob", role=Role.READER, actor=admin)
    refused = client.post(DOCUMENTS, {**body, "path": "more.md"}, format="json")
    assert refused.status_code == 403
    tenant_service.membership_remove(tenant=tenant, username="bob", actor=admin)
    assert client.get(DOCUMENTS).status_code == 404


def _authenticate(user, **kwargs):
    key = api_token_key(user)
    token = ApiToken.objects.get(key_hash=token_service.hash_key(key))
    django_request = APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Token {key}")
    request = Request(django_request, parser_context={"kwargs": kwargs})
    authenticated, auth = TokenAccessAuthentication().authenticate(request)
    assert authenticated == user and auth.token == token and auth.token.user is authenticated
    request.user, request.auth = authenticated, auth
    return request


def test_the_access_read_with_the_token_serves_only_the_first_check_of_its_slugs(
    project, writer, admin, tenant, django_assert_num_queries
):
    request = _authenticate(writer, tenant="acme", project="web")
    with django_assert_num_queries(0):
        access = permissions.project_access(
            request.user, "acme", "web", prefetched=prefetched_access(request)
        )
    assert access.role == Role.WRITER and access.project == project
    # A later check in the same request reads afresh, and so sees a change made since.
    tenant_service.membership_set(tenant=tenant, username="bob", role=Role.READER, actor=admin)
    with django_assert_num_queries(1):
        access = permissions.project_access(
            request.user, "acme", "web", prefetched=prefetched_access(request)
        )
    assert access.role == Role.READER


def test_the_access_read_with_the_token_is_not_used_for_other_slugs(
    project, writer, outsider, other_tenant, django_assert_num_queries
):
    request = _authenticate(outsider, tenant="globex", project="_vance")
    with django_assert_num_queries(1), pytest.raises(NotFound):
        permissions.project_access(
            request.user, "acme", "web", prefetched=prefetched_access(request)
        )
    request = _authenticate(writer, tenant="acme")
    with django_assert_num_queries(1):
        access = permissions.project_access(
            request.user, "acme", "web", prefetched=prefetched_access(request)
        )
    assert access.project == project


def test_a_session_authenticated_request_has_no_prefetched_access(rf, writer):
    request = Request(rf.get("/"))
    request.user, request.auth = writer, None
    assert prefetched_access(request) is None


def test_session_authenticated_api_requests_check_access_themselves(project, writer, outsider):
    client = APIClient()
    client.force_login(writer)
    assert client.get(PROJECT).status_code == 200
    client.force_login(outsider)
    assert client.get(PROJECT).status_code == 404


@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete", "options"])
@pytest.mark.parametrize("how", ["token", "session", "anonymous"])
def test_every_method_on_an_unknown_api_path_is_the_json_404(project, reader, method, how):
    # CSRF checks on, as a browser or a plain HTTP client meets them.
    client = APIClient(enforce_csrf_checks=True)
    if how == "token":
        client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_key(reader)}")
    elif how == "session":
        client.force_login(reader)
    for url in ("/api/v1/no-such-endpoint", "/api/v1/tenants/acme/nothing/here/"):
        response = getattr(client, method)(url, {"a": 1}, format="json")
        assert response.status_code == 404, response.content
        assert response["Content-Type"] == "application/json"
        assert response.json() == {
            "error": "not_found",
            "detail": f"No API endpoint at {url}.",
            "field": None,
        }


def test_a_real_endpoint_still_refuses_a_session_post_without_csrf(project, reader):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(reader)
    response = client.post("/api/v1/tenants/", {"slug": "x", "name": "X"}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]

"""`acknowledge_secret` on the documents API: create, PUT, PATCH and revert save a
text the secret check refused when the writer acknowledges it with a reason; the
history response shows the acknowledgement."""

from __future__ import annotations

import pytest

from agentdocs.models import Document
from agentdocs.services import documents as document_service
from tests.api.test_documents import assert_error
from tests.services.test_documents_secret_acknowledgement import PLAIN_BODY, SECRET_BODY

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"


@pytest.fixture
def plain(project, writer):
    return document_service.document_create(
        project=project, path="fixtures.md", body=PLAIN_BODY, user=writer, reason="start"
    )


def create(client, **extra):
    payload = {"path": "fixtures.md", "body": SECRET_BODY, **extra}
    return client.post(f"{BASE}/documents/", payload, format="json")


def history(client, path: str = "fixtures.md") -> list[dict]:
    response = client.get(f"{BASE}/history/{path}")
    assert response.status_code == 200
    return response.json()["results"]


def forbid_overrides(api, admin) -> None:
    response = api(admin).put(
        "/api/v1/tenants/acme/settings/security.secretOverride", {"value": "off"}, format="json"
    )
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("value", ["false_positive", "test_value"])
def test_create_saves_an_acknowledged_secret_and_history_shows_it(api, project, writer, value):
    response = create(api(writer), reason="the suite's fake token", acknowledge_secret=value)
    assert response.status_code == 201, response.content
    assert response.json()["body"] == SECRET_BODY
    [entry] = history(api(writer))
    assert entry["secret_acknowledgement"] == value
    assert entry["user"] == "bob" and entry["reason"] == "the suite's fake token"


def test_history_shows_no_acknowledgement_for_an_ordinary_write(api, plain, writer):
    [entry] = history(api(writer))
    assert entry["secret_acknowledgement"] == ""


def test_put_saves_an_acknowledged_secret(api, plain, writer):
    client = api(writer)
    refused = client.put(
        f"{BASE}/documents/fixtures.md", {"body": SECRET_BODY, "version": 1}, format="json"
    )
    assert_error(refused, 422, "secret_detected", "body")
    response = client.put(
        f"{BASE}/documents/fixtures.md",
        {"body": SECRET_BODY, "version": 1, "reason": "fake", "acknowledge_secret": "test_value"},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["version"] == 2
    assert [e["secret_acknowledgement"] for e in history(client)] == ["test_value", ""]


def test_patch_saves_an_acknowledged_secret(api, plain, writer):
    response = api(writer).patch(
        f"{BASE}/documents/fixtures.md",
        {
            "old": "No token here.",
            "new": SECRET_BODY.splitlines()[2],
            "version": 1,
            "reason": "a fixture",
            "acknowledge_secret": "false_positive",
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    assert history(api(writer))[0]["secret_acknowledgement"] == "false_positive"


def test_revert_to_an_acknowledged_version_takes_an_acknowledgement(api, project, writer):
    client = api(writer)
    assert create(client, reason="fake", acknowledge_secret="test_value").status_code == 201
    written = client.put(
        f"{BASE}/documents/fixtures.md", {"body": PLAIN_BODY, "version": 1}, format="json"
    )
    assert written.status_code == 200
    refused = client.post(f"{BASE}/revert/fixtures.md", {"version": 1}, format="json")
    assert_error(refused, 422, "secret_detected", "body")
    reverted = client.post(
        f"{BASE}/revert/fixtures.md",
        {"version": 1, "reason": "fixture back", "acknowledge_secret": "test_value"},
        format="json",
    )
    assert reverted.status_code == 200, reverted.content
    assert reverted.json()["version"] == 3
    newest = history(client)[0]
    assert newest["secret_acknowledgement"] == "test_value" and newest["reason"] == "fixture back"


def test_an_acknowledgement_without_a_reason_is_a_400_naming_reason(api, project, writer):
    response = create(api(writer), acknowledge_secret="false_positive")
    assert_error(response, 400, "invalid", "reason")
    assert not Document.objects.exists()


@pytest.mark.parametrize("value", ["maybe", None, 1, True])
def test_an_unknown_acknowledgement_is_a_400_naming_the_field(api, project, writer, value):
    response = create(api(writer), reason="r", acknowledge_secret=value)
    assert_error(response, 400, "invalid", "acknowledge_secret")
    assert not Document.objects.exists()
    # A known value in the same request saves: the field is known, its value was wrong.
    assert create(api(writer), reason="r", acknowledge_secret="test_value").status_code == 201


def test_an_acknowledgement_without_a_secret_is_a_400(api, plain, writer):
    response = api(writer).put(
        f"{BASE}/documents/fixtures.md",
        {"body": "# Plain\n", "version": 1, "reason": "r", "acknowledge_secret": "test_value"},
        format="json",
    )
    body = assert_error(response, 400, "invalid", "acknowledge_secret")
    assert "Nothing to acknowledge" in body["detail"]


def test_a_tenant_that_forbids_overrides_answers_422(api, project, admin, writer):
    forbid_overrides(api, admin)
    response = create(api(writer), reason="fake", acknowledge_secret="test_value")
    body = assert_error(response, 422, "secret_detected", "body")
    assert "forbids overriding" in body["detail"] and body["line"] == 3
    assert not Document.objects.exists()


def test_the_override_setting_is_for_the_tenant_not_a_project(api, project, admin):
    forbid_overrides(api, admin)
    response = api(admin).put(
        f"{BASE}/settings/security.secretOverride", {"value": "off"}, format="json"
    )
    assert_error(response, 400, "invalid", "key")


def test_a_reader_still_cannot_write_and_an_outsider_gets_404(api, plain, reader, outsider, writer):
    def put(user):
        return api(user).put(
            f"{BASE}/documents/fixtures.md",
            {"body": SECRET_BODY, "version": 1, "reason": "r", "acknowledge_secret": "test_value"},
            format="json",
        )

    assert_error(put(reader), 403, "forbidden")
    assert_error(put(outsider), 404, "not_found")
    assert api(outsider).get(f"{BASE}/history/fixtures.md").status_code == 404
    plain.refresh_from_db()
    assert plain.version == 1
    # The same request from a writer saves.
    assert put(writer).status_code == 200

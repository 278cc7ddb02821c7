"""The secret check on every stored free-text field members and webhook receivers see
(issue 24, finding 4): history reasons, change requests' reasons, reviews, comments,
webhook descriptions, token names, binding records' processes. Each refusal is a 422
`secret_detected` naming the field, and nothing is stored; a key split by a zero-width
character is found in a document too."""

from __future__ import annotations

import pytest

from agentdocs.core.errors import SecretDetected
from agentdocs.models import (
    ApiToken,
    BindingRecord,
    ChangeComment,
    ChangeRequest,
    Document,
    Event,
    Membership,
    ProviderMapping,
    Review,
    Webhook,
)
from agentdocs.models.history import mark_change
from agentdocs.services import documents as document_service
from tests.api.test_documents import assert_error
from tests.core.test_secret_scan import ADT_TOKEN

pytestmark = pytest.mark.django_db

T = "/api/v1/tenants/acme"
BASE = f"{T}/projects/web"
# A plain AWS access key id (not the published example): AKIA and 16 capitals or digits.
AWS_KEY_ID = "AKIAQ7RS2T9VWXY3Z4AB"
REASON = f"rotated the bucket key, new one is {AWS_KEY_ID}"
TEXT = "# Web rules\n\n- Use tabs.\n"


@pytest.fixture
def agent_md(project, writer, make_document):
    return make_document(project, "agent.md", TEXT, user=writer)


@pytest.fixture
def change(api, agent_md, writer):
    response = api(writer).post(
        f"{BASE}/changes/",
        {"path": "agent.md", "body": TEXT + "- Test first.\n", "base_version": 1, "reason": "x"},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def counts():
    """How many rows each stored kind has: a refusal leaves every count as it was.
    (Not tokens: each test client signs in with one.)"""

    def take() -> dict[str, int]:
        models = [BindingRecord, ChangeComment, ChangeRequest, Document, Event]
        models += [Membership, ProviderMapping, Review, Webhook]
        counted = {model.__name__: model.objects.count() for model in models}
        counted["versions"] = Document.history.count()
        return counted

    return take


def refused(response, field: str) -> dict:
    body = assert_error(response, 422, "secret_detected", field)
    assert AWS_KEY_ID not in response.content.decode()
    return body


# History reasons -------------------------------------------------------------------


def test_a_document_write_reason_holding_a_key_is_refused(api, agent_md, writer, counts):
    before = counts()
    client = api(writer)
    created = client.post(
        f"{BASE}/documents/", {"path": "b.md", "body": "b\n", "reason": REASON}, format="json"
    )
    refused(created, "reason")
    written = client.put(
        f"{BASE}/documents/agent.md", {"body": "new\n", "version": 1, "reason": REASON}
    )
    refused(written, "reason")
    deleted = client.delete(
        f"{BASE}/documents/agent.md", {"version": 1, "reason": REASON}, format="json"
    )
    refused(deleted, "reason")
    assert counts() == before
    assert Document.objects.get().body == TEXT


def test_a_setting_a_membership_and_a_provider_reason_are_checked_too(api, admin, project, counts):
    before = counts()
    client = api(admin)
    setting = client.put(
        f"{T}/settings/memory.language", {"value": "de", "reason": REASON}, format="json"
    )
    refused(setting, "reason")
    provider = client.put(
        f"{T}/providers/workstation/baseline",
        {"project": "web", "path": "a.md", "reason": REASON},
        format="json",
    )
    refused(provider, "reason")
    assert counts() == before


def test_every_history_reason_passes_the_check_where_it_is_attached(project, writer):
    with pytest.raises(SecretDetected) as error:
        mark_change(project, user=writer, reason=REASON, change_type="updated")
    assert error.value.field == "reason"


# Change requests, reviews and comments ---------------------------------------------


def test_a_change_request_reason_holding_a_key_is_refused(api, agent_md, writer, counts):
    before = counts()
    response = api(writer).post(
        f"{BASE}/changes/",
        {"path": "agent.md", "body": TEXT + "- more\n", "base_version": 1, "reason": REASON},
        format="json",
    )
    refused(response, "reason")
    assert counts() == before


def test_a_review_comment_holding_a_key_is_refused(api, change, admin, counts):
    before = counts()
    response = api(admin).post(
        f"{BASE}/changes/{change['id']}/reviews",
        {"decision": "reject", "comment": f"use {AWS_KEY_ID} instead"},
        format="json",
    )
    refused(response, "comment")
    assert counts() == before
    assert ChangeRequest.objects.get().state == "open"


def test_a_comment_holding_a_key_is_refused(api, change, reader, counts):
    before = counts()
    response = api(reader).post(
        f"{BASE}/changes/{change['id']}/comments", {"body": f"key: {AWS_KEY_ID}"}, format="json"
    )
    refused(response, "body")
    assert counts() == before


def test_withdrawing_with_a_key_in_the_reason_is_refused(api, change, writer):
    response = api(writer).post(
        f"{BASE}/changes/{change['id']}/withdraw", {"reason": REASON}, format="json"
    )
    refused(response, "reason")
    assert ChangeRequest.objects.get().state == "open"


def test_an_outsider_gets_404_not_the_secret_check(api, change, outsider, other_tenant, counts):
    before = counts()
    response = api(outsider).post(
        f"{BASE}/changes/{change['id']}/comments", {"body": f"key: {AWS_KEY_ID}"}, format="json"
    )
    assert_error(response, 404, "not_found")
    assert counts() == before


# Webhooks, tokens, binding records -------------------------------------------------


def test_a_webhook_description_holding_a_key_is_refused(
    api, admin, tenant, webhook_receiver, counts
):
    before = counts()
    body = {"url": webhook_receiver.url, "events": ["ping"], "description": REASON}
    refused(api(admin).post(f"{T}/webhooks/", body, format="json"), "description")
    assert counts() == before
    created = api(admin).post(
        f"{T}/webhooks/", {"url": webhook_receiver.url, "events": ["ping"]}, format="json"
    )
    assert created.status_code == 201, created.content
    patched = api(admin).patch(
        f"{T}/webhooks/{created.json()['id']}", {"description": REASON}, format="json"
    )
    refused(patched, "description")
    assert Webhook.objects.get().description == ""


def test_a_token_name_holding_a_key_is_refused(api, writer, tenant, counts):
    before = counts()
    response = api(writer).post(
        "/api/v1/tokens/", {"name": f"ci {AWS_KEY_ID}", "scopes": ["read"]}, format="json"
    )
    refused(response, "name")
    assert counts() == before
    assert not ApiToken.objects.filter(name__contains="AKIA").exists()


def test_a_binding_process_holding_a_key_is_refused(api, writer, agent_md, counts):
    before = counts()
    response = api(writer).post(
        f"{BASE}/bindings/",
        {"process": f"deploy-{AWS_KEY_ID}", "manifest": {"local": ["agent.md"]}},
        format="json",
    )
    refused(response, "process")
    assert counts() == before


# Keys split by an invisible character -----------------------------------------------


@pytest.mark.parametrize(
    "secret",
    [AWS_KEY_ID[:4] + "\u200b" + AWS_KEY_ID[4:], ADT_TOKEN[:10] + "\u200b" + ADT_TOKEN[10:]],
    ids=["aws", "adt"],
)
def test_a_key_split_by_a_zero_width_space_in_a_body_is_refused(
    api, project, writer, counts, secret
):
    before = counts()
    response = api(writer).post(
        f"{BASE}/documents/",
        {"path": "deploy.md", "body": f"# Deploy\n\nKey: {secret}\n"},
        format="json",
    )
    body = assert_error(response, 422, "secret_detected", "body")
    assert body["line"] == 3 and "invisible characters" in body["detail"]
    assert counts() == before


def test_ordinary_reasons_and_names_are_accepted(api, writer, agent_md, admin):
    written = api(writer).put(
        f"{BASE}/documents/agent.md",
        {"body": "new\n", "version": 1, "reason": "Rotated the key (vault:kv/web/aws) 🔐"},
        format="json",
    )
    assert written.status_code == 200, written.content
    token = api(writer).post("/api/v1/tokens/", {"name": "ci — نسخه ۲", "scopes": ["read"]})
    assert token.status_code == 201, token.content
    assert document_service.Document.objects.get().version == 2

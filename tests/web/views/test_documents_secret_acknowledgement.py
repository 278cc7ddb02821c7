"""The edit, create and revert pages: after the secret check refused a save (422),
the page offers to save it anyway with an acknowledgement and a reason; the
history page shows the acknowledgement."""

from __future__ import annotations

import pytest

from agentdocs.models import Document
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from tests.services.test_documents_secret_acknowledgement import PLAIN_BODY, SECRET_BODY, TEST_TOKEN

pytestmark = pytest.mark.django_db

CHOICE = 'name="acknowledge_secret"'


@pytest.fixture
def plain(project, writer):
    return document_service.document_create(
        project=project, path="fixtures.md", body=PLAIN_BODY, user=writer, reason="start"
    )


def edit(client, body: str = SECRET_BODY, **extra):
    return client.post("/t/acme/web/edit/fixtures.md", {"body": body, "base_version": 1, **extra})


def create(client, body: str = SECRET_BODY, **extra):
    return client.post("/t/acme/web/new/", {"path": "fixtures.md", "body": body, **extra})


def test_the_edit_page_offers_the_acknowledgement_only_after_a_secret_refusal(
    browse, writer, plain
):
    client = browse(writer)
    assert CHOICE not in client.get("/t/acme/web/edit/fixtures.md").content.decode()
    refused = edit(client, reason="")
    page = refused.content.decode()
    assert refused.status_code == 422
    assert "Line 3 looks like a GitHub token" in page
    assert CHOICE in page and 'value="false_positive"' in page and 'value="test_value"' in page
    assert TEST_TOKEN in page  # the text is kept in the editor
    other = edit(client, body="# Plain\n", reason="r", base_version=7)
    assert other.status_code == 412 and CHOICE not in other.content.decode()


@pytest.mark.parametrize("value", ["false_positive", "test_value"])
def test_saving_anyway_from_the_edit_page_shows_in_history(browse, writer, plain, value):
    client = browse(writer)
    saved = edit(client, reason="the suite's fake token", acknowledge_secret=value)
    assert saved.status_code == 302, saved.content.decode()
    plain.refresh_from_db()
    assert plain.version == 2 and plain.body == SECRET_BODY
    history = client.get("/t/acme/web/history/fixtures.md").content.decode()
    label = {"false_positive": "false positive", "test_value": "test value"}[value]
    assert f"secret acknowledged: {label}" in history
    assert history.count("secret acknowledged") == 1  # version 1 was an ordinary write
    assert "the suite&#x27;s fake token" in history


def test_the_create_page_offers_and_saves_the_acknowledgement(browse, writer, project):
    client = browse(writer)
    refused = create(client, reason="")
    assert refused.status_code == 422 and CHOICE in refused.content.decode()
    saved = create(client, reason="fixture", acknowledge_secret="test_value")
    assert saved.status_code == 302
    document = Document.objects.get(path="fixtures.md")
    assert document.secret_acknowledgement == "test_value"


def test_saving_anyway_without_a_reason_is_refused_beside_the_reason(browse, writer, plain):
    response = edit(browse(writer), reason="", acknowledge_secret="false_positive")
    page = response.content.decode()
    assert response.status_code == 400
    assert 'id="id_reason_error"' in page and "needs a reason" in page
    assert CHOICE in page  # the choice stays on the page
    plain.refresh_from_db()
    assert plain.version == 1


def test_an_unknown_acknowledgement_is_refused_beside_its_field(browse, writer, plain):
    response = edit(browse(writer), reason="r", acknowledge_secret="maybe")
    assert response.status_code == 400
    assert 'id="id_acknowledge_secret_error"' in response.content.decode()
    plain.refresh_from_db()
    assert plain.version == 1


def test_an_acknowledgement_without_a_secret_is_refused(browse, writer, plain):
    response = edit(browse(writer), body="# Plain\n", reason="r", acknowledge_secret="test_value")
    assert response.status_code == 400
    assert "Nothing to acknowledge" in response.content.decode()
    plain.refresh_from_db()
    assert plain.version == 1


def test_a_tenant_that_forbids_overrides_offers_none_and_refuses_with_422(
    browse, tenant, admin, writer, plain
):
    policy_service.setting_set(
        tenant=tenant, project=None, key="security.secretOverride", value="off", user=admin
    )
    client = browse(writer)
    refused = edit(client, reason="")
    assert refused.status_code == 422 and CHOICE not in refused.content.decode()
    forced = edit(client, reason="fake", acknowledge_secret="test_value")
    assert forced.status_code == 422
    assert "forbids overriding" in forced.content.decode()
    plain.refresh_from_db()
    assert plain.version == 1


def test_the_revert_page_takes_the_acknowledgement(browse, writer, project):
    document = document_service.document_create(
        project=project,
        path="fixtures.md",
        body=SECRET_BODY,
        user=writer,
        reason="fake",
        acknowledge_secret="test_value",
    )
    document_service.document_write(
        document=document, body=PLAIN_BODY, base_version=1, user=writer, reason="gone"
    )
    client = browse(writer)
    form = {"version": 1, "base_version": 2, "reason": "fixture back"}
    refused = client.post("/t/acme/web/revert/fixtures.md", form)
    assert refused.status_code == 422 and CHOICE in refused.content.decode()
    reverted = client.post(
        "/t/acme/web/revert/fixtures.md", {**form, "acknowledge_secret": "test_value"}
    )
    assert reverted.status_code == 302
    document.refresh_from_db()
    assert document.version == 3 and document.secret_acknowledgement == "test_value"


def test_a_reader_still_cannot_save_and_an_outsider_gets_404(
    browse, reader, outsider, writer, plain
):
    assert edit(browse(reader), reason="r", acknowledge_secret="test_value").status_code == 403
    assert edit(browse(outsider), reason="r", acknowledge_secret="test_value").status_code == 404
    assert browse(outsider).get("/t/acme/web/history/fixtures.md").status_code == 404
    plain.refresh_from_db()
    assert plain.version == 1
    # The same request from a writer saves.
    assert edit(browse(writer), reason="r", acknowledge_secret="test_value").status_code == 302

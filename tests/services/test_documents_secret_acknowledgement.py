"""The acknowledged override of the secret check, in the one write path.

A writer may save a text the secret check refused by acknowledging it (a false
positive or a test value) with a reason; the history row keeps the
acknowledgement. The tenant setting `security.secretOverride: off` forbids it,
and an acknowledgement overrides the secret check only: every other check stays.
"""

from __future__ import annotations

import hashlib

import pytest

from agentdocs.core.errors import InvalidInput, Locked, SecretDetected, VersionConflict
from agentdocs.models import Document, Setting
from agentdocs.services import document_locks
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services.memory_block import render_memory_block

pytestmark = pytest.mark.django_db


def synthetic(label: str, length: int) -> str:
    """A fixed, random-looking value: never a real credential."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    digest = hashlib.sha256(label.encode()).digest() * 4
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


# The shape of a GitHub token, as a test fixture in a document would hold one.
TEST_TOKEN = "ghp_" + synthetic("acknowledged-ghp", 36)
SECRET_BODY = f"# Fixtures\n\nThe test suite's fake token: `{TEST_TOKEN}`.\n"
PLAIN_BODY = "# Fixtures\n\nNo token here.\n"


def forbid_overrides(tenant, admin) -> None:
    policy_service.setting_set(
        tenant=tenant, project=None, key="security.secretOverride", value="off", user=admin
    )


def newest_history(document: Document):
    return document.history.order_by("-history_id").first()


@pytest.mark.parametrize("value", ["false_positive", "test_value"])
def test_an_acknowledged_secret_is_saved_and_history_says_who_why_and_which(project, writer, value):
    with pytest.raises(SecretDetected):
        document_service.document_create(
            project=project, path="fixtures.md", body=SECRET_BODY, user=writer, reason="r"
        )
    document = document_service.document_create(
        project=project,
        path="fixtures.md",
        body=SECRET_BODY,
        user=writer,
        reason="the suite's fake token",
        acknowledge_secret=value,
    )
    assert document.body == SECRET_BODY and document.secret_acknowledgement == value
    record = newest_history(document)
    assert record.secret_acknowledgement == value
    assert record.history_user == writer
    assert record.history_change_reason == "the suite's fake token"


def test_a_write_without_an_acknowledgement_records_none(project, writer, make_document):
    document = document_service.document_create(
        project=project,
        path="fixtures.md",
        body=SECRET_BODY,
        user=writer,
        reason="fake token",
        acknowledge_secret="test_value",
    )
    document = document_service.document_write(
        document=document, body=PLAIN_BODY, base_version=1, user=writer, reason="token gone"
    ).document
    assert document.secret_acknowledgement == ""
    assert newest_history(document).secret_acknowledgement == ""
    assert [r.secret_acknowledgement for r in document.history.order_by("history_id")] == [
        "test_value",
        "",
    ]


def test_write_and_edit_take_an_acknowledgement(project, writer, make_document):
    document = make_document(project, "fixtures.md", PLAIN_BODY, user=writer)
    with pytest.raises(SecretDetected):
        document_service.document_write(
            document=document, body=SECRET_BODY, base_version=1, user=writer, reason="r"
        )
    written = document_service.document_write(
        document=document,
        body=SECRET_BODY,
        base_version=1,
        user=writer,
        reason="fake token",
        acknowledge_secret="false_positive",
    ).document
    assert written.version == 2 and written.secret_acknowledgement == "false_positive"
    edited = document_service.document_edit(
        document=written,
        old="fake token",
        new="fixture token",
        base_version=2,
        user=writer,
        reason="wording",
        acknowledge_secret="test_value",
    )
    assert edited.version == 3 and newest_history(edited).secret_acknowledgement == "test_value"


def test_an_edit_of_a_text_holding_a_secret_must_acknowledge_it_again(project, writer):
    document = document_service.document_create(
        project=project,
        path="fixtures.md",
        body=SECRET_BODY,
        user=writer,
        reason="fake token",
        acknowledge_secret="test_value",
    )
    with pytest.raises(SecretDetected):
        document_service.document_edit(
            document=document, old="Fixtures", new="Test fixtures", base_version=1, user=writer
        )
    document.refresh_from_db()
    assert document.version == 1


def test_reverting_to_an_acknowledged_version_needs_a_new_acknowledgement(project, writer):
    document = document_service.document_create(
        project=project,
        path="fixtures.md",
        body=SECRET_BODY,
        user=writer,
        reason="fake token",
        acknowledge_secret="test_value",
    )
    document = document_service.document_write(
        document=document, body=PLAIN_BODY, base_version=1, user=writer, reason="gone"
    ).document
    with pytest.raises(SecretDetected):
        document_service.document_revert(document=document, version=1, user=writer)
    reverted = document_service.document_revert(
        document=document,
        version=1,
        user=writer,
        reason="the fixture is back",
        acknowledge_secret="test_value",
    )
    assert reverted.version == 3 and reverted.body == SECRET_BODY
    record = newest_history(reverted)
    assert record.secret_acknowledgement == "test_value"
    assert record.history_change_reason == "the fixture is back"


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_an_acknowledgement_needs_a_reason(project, writer, reason):
    with pytest.raises(InvalidInput) as error:
        document_service.document_create(
            project=project,
            path="fixtures.md",
            body=SECRET_BODY,
            user=writer,
            reason=reason,
            acknowledge_secret="false_positive",
        )
    assert error.value.field == "reason"
    assert not Document.objects.filter(path="fixtures.md").exists()


@pytest.mark.parametrize("value", ["yes", "FALSE_POSITIVE", "true", 1, True])
def test_an_unknown_acknowledgement_is_refused_naming_the_field(project, writer, value):
    with pytest.raises(InvalidInput) as error:
        document_service.document_create(
            project=project,
            path="fixtures.md",
            body=SECRET_BODY,
            user=writer,
            reason="r",
            acknowledge_secret=value,
        )
    assert error.value.field == "acknowledge_secret"


def test_an_acknowledgement_without_a_secret_is_refused(project, writer, make_document):
    with pytest.raises(InvalidInput) as error:
        document_service.document_create(
            project=project,
            path="plain.md",
            body=PLAIN_BODY,
            user=writer,
            reason="r",
            acknowledge_secret="false_positive",
        )
    assert error.value.field == "acknowledge_secret"
    assert "Nothing to acknowledge" in error.value.detail
    assert not Document.objects.filter(path="plain.md").exists()


def test_a_tenant_that_forbids_overrides_refuses_the_acknowledgement(
    tenant, project, admin, writer
):
    forbid_overrides(tenant, admin)
    with pytest.raises(SecretDetected) as error:
        document_service.document_create(
            project=project,
            path="fixtures.md",
            body=SECRET_BODY,
            user=writer,
            reason="fake token",
            acknowledge_secret="test_value",
        )
    assert error.value.field == "body" and error.value.extra["line"] == 3
    assert "forbids overriding" in error.value.detail
    assert TEST_TOKEN not in error.value.detail
    assert not Document.objects.filter(path="fixtures.md").exists()


def test_overrides_are_allowed_again_when_the_tenant_sets_on(tenant, project, admin, writer):
    forbid_overrides(tenant, admin)
    policy_service.setting_set(
        tenant=tenant, project=None, key="security.secretOverride", value="on", user=admin
    )
    document = document_service.document_create(
        project=project,
        path="fixtures.md",
        body=SECRET_BODY,
        user=writer,
        reason="fake token",
        acknowledge_secret="test_value",
    )
    assert document.secret_acknowledgement == "test_value"


def test_another_tenants_setting_does_not_forbid_overrides_here(
    project, writer, other_tenant, outsider
):
    forbid_overrides(other_tenant, outsider)
    document = document_service.document_create(
        project=project,
        path="fixtures.md",
        body=SECRET_BODY,
        user=writer,
        reason="fake token",
        acknowledge_secret="test_value",
    )
    assert document.version == 1


def test_an_acknowledgement_overrides_nothing_but_the_secret_check(
    project, admin, writer, make_document
):
    document = make_document(project, "fixtures.md", PLAIN_BODY, user=writer)
    acknowledged = {"reason": "fake token", "acknowledge_secret": "test_value"}
    with pytest.raises(VersionConflict):
        document_service.document_write(
            document=document, body=SECRET_BODY, base_version=7, user=writer, **acknowledged
        )
    document_locks.document_lock(document=document, user=admin)
    with pytest.raises(Locked):
        document_service.document_write(
            document=document, body=SECRET_BODY, base_version=1, user=writer, **acknowledged
        )
    with pytest.raises(InvalidInput) as error:
        document_service.document_write(
            document=document,
            body=SECRET_BODY + "\x00",
            base_version=1,
            user=admin,
            **acknowledged,
        )
    assert error.value.field == "body"
    document.refresh_from_db()
    assert document.version == 1


def test_security_secret_override_is_a_tenant_setting_of_on_or_off(tenant, project, admin):
    setting, created = policy_service.setting_set(
        tenant=tenant, project=None, key="security.secretOverride", value="off", user=admin
    )
    assert created and setting.value == "off"
    with pytest.raises(InvalidInput) as error:
        policy_service.setting_set(
            tenant=tenant, project=project, key="security.secretOverride", value="on", user=admin
        )
    assert error.value.field == "key"
    with pytest.raises(InvalidInput) as error:
        policy_service.setting_set(
            tenant=tenant, project=None, key="security.secretOverride", value="no", user=admin
        )
    assert error.value.field == "value"
    with pytest.raises(InvalidInput) as error:
        policy_service.setting_set(
            tenant=tenant, project=None, key="security.other", value="on", user=admin
        )
    assert error.value.field == "key"
    assert not Setting.objects.filter(key="security.other").exists()


def test_security_settings_never_reach_the_memory_block(tenant, project, admin, make_document):
    make_document(project, "agent.md", "# Rules\n")
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.language", value="English", user=admin
    )
    forbid_overrides(tenant, admin)
    block = render_memory_block(project=project, preview=True)
    assert "memory.language: English" in block.text
    assert "secretOverride" not in block.text

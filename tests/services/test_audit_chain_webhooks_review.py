"""Webhooks and review decisions in the tenant's hash chain (issue 30): every change
of a webhook and every review is a history row with writer and reason, chained with
the rest; a webhook's history never holds its secret, nor its URL's path; a direct
SQL edit of one of those rows is reported at that row; deliveries are not chained."""

from __future__ import annotations

import io
import json

import pytest
from django.apps import apps as django_apps
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from agentdocs.core.webhooks import url_digest
from agentdocs.models import AuditChainHead, DeliveryState, Review, Webhook
from agentdocs.selectors import audit as audit_selectors
from agentdocs.services import audit_chain
from agentdocs.services import changes as change_service
from agentdocs.services import deliveries as delivery_service
from agentdocs.services import webhooks as webhook_service

VERIFY = "/api/v1/tenants/acme/audit/verify"
EXPORT = "/api/v1/tenants/acme/audit/export"
HISTORICAL_WEBHOOK = "agentdocs.historicalwebhook"
HISTORICAL_REVIEW = "agentdocs.historicalreview"
# A chat service's incoming-webhook URL: the path is the receiver's secret.
URL = "https://hooks.example.com/services/T0/B0/path-token-xyzzy"
OTHER_URL = "https://hooks.example.com/services/T0/B0/path-token-plugh"
PATH_TOKENS = ("path-token-xyzzy", "path-token-plugh")

WebhookHistory = Webhook.history.model  # type: ignore[attr-defined]
ReviewHistory = Review.history.model  # type: ignore[attr-defined]


@pytest.fixture
def webhook_life(tenant, admin):
    """A webhook made, changed, turned off and on, its secret rotated, turned off by the
    server, deleted; answers the secrets it had and its id."""
    made = webhook_service.webhook_create(
        tenant=tenant, url=URL, events=["document.updated"], projects=None, user=admin
    )
    webhook = made.webhook
    secrets = [made.secret]
    webhook_service.webhook_update(
        webhook=webhook, user=admin, url=OTHER_URL, events=["document.updated", "change.opened"]
    )
    webhook_service.webhook_update(webhook=webhook, user=admin, active=False)
    webhook_service.webhook_update(webhook=webhook, user=admin, active=True)
    secrets.append(
        webhook_service.webhook_update(webhook=webhook, user=admin, rotate_secret=True).secret
    )
    webhook_service.webhook_disable(
        webhook=webhook,
        reason="The last retry of ping evt_1 failed (HTTP 500).",
        now=timezone.now(),
    )
    pk = webhook.pk
    webhook_service.webhook_delete(webhook=webhook, user=admin)
    return pk, secrets


def _row_texts(model) -> list[str]:
    return [json.dumps(audit_chain.row_values(row)) for row in model.objects.all()]


def test_every_webhook_change_is_a_chained_history_row_with_writer_and_reason(
    tenant, admin, webhook_life
):
    pk, _ = webhook_life
    rows = list(WebhookHistory.objects.filter(id=pk).order_by("chain_seq"))
    assert [(row.history_type, row.change_type) for row in rows] == [
        ("+", "created"),
        ("~", "updated"),
        ("~", "updated"),
        ("~", "updated"),
        ("~", "updated"),
        ("~", "updated"),
        ("-", "deleted"),
    ]
    assert [row.history_change_reason for row in rows] == [
        "Webhook created",
        "Changed url, events",
        "Changed active",
        "Changed active",
        "Secret rotated",
        "The last retry of ping evt_1 failed (HTTP 500).",
        "Webhook deleted",
    ]
    # The server turned it off: a row of no writer; people wrote the others.
    assert [row.history_user_id for row in rows] == [admin.pk] * 5 + [None, admin.pk]
    assert [row.active for row in rows] == [True, True, False, True, True, False, False]
    assert rows[1].events == ["document.updated", "change.opened"]
    # Every row is a link of the tenant's one chain, and the chain verifies.
    assert all(row.chain_tenant == tenant.pk and row.chain_sha256 for row in rows)
    report = audit_chain.audit_chain_verify(tenant=tenant)
    assert report["ok"], report
    chained = [entry for entry in audit_chain.chain_rows(tenant=tenant)[1]]
    assert [e.id for e in chained if e.model == HISTORICAL_WEBHOOK] == [row.pk for row in rows]


def test_a_webhooks_history_holds_neither_its_secret_nor_its_urls_path(
    api, admin, tenant, webhook_life
):
    _, secrets = webhook_life
    columns = {field.name for field in WebhookHistory._meta.fields}
    assert not {"secret", "url", "failing_since"} & columns
    rows = list(WebhookHistory.objects.order_by("chain_seq"))
    for text in _row_texts(WebhookHistory):
        for secret in secrets:
            assert secret not in text
            assert secret.removeprefix("whsec_") not in text
        for token in PATH_TOKENS:
            assert token not in text
    # The URL is kept as scheme and host, and a digest that tells a change of it.
    assert {row.url_shown for row in rows} == {"https://hooks.example.com/…"}
    digests = [row.url_digest for row in rows]
    assert digests[0] != digests[1] and len(set(digests[1:])) == 1
    assert digests[0] == url_digest(URL, secret=_secret_key())
    # Nor does the export, which leaves the server to be anchored elsewhere.
    export = b"".join(api(admin).get(EXPORT).streaming_content).decode()
    assert HISTORICAL_WEBHOOK in export
    for secret in [*secrets, *PATH_TOKENS]:
        assert secret not in export


def _secret_key() -> str:
    return str(django_settings.SECRET_KEY)


def test_deliveries_are_not_chained(
    tenant, admin, settings, celery_eager, webhook_receiver, sweep_webhooks
):
    settings.AGENTDOCS_WEBHOOK_ALLOW_PRIVATE = True
    webhook = webhook_service.webhook_create(
        tenant=tenant, url=webhook_receiver.url, events=["ping"], projects=None, user=admin
    ).webhook
    head = AuditChainHead.objects.get(tenant=tenant).seq
    # A ping queued, sent and answered, and the failure bookkeeping the deliveries keep.
    delivery = delivery_service.webhook_test(webhook=webhook, user=admin)
    sweep_webhooks()
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.SUCCEEDED and len(webhook_receiver.received) == 1
    Webhook.objects.filter(pk=webhook.pk).update(failing_since=timezone.now())
    assert AuditChainHead.objects.get(tenant=tenant).seq == head
    assert WebhookHistory.objects.filter(id=webhook.pk).count() == 1
    assert audit_chain.audit_chain_verify(tenant=tenant)["ok"]


def test_turning_off_a_webhook_that_is_already_off_writes_nothing(tenant, admin):
    webhook = webhook_service.webhook_create(
        tenant=tenant, url=URL, events=["document.updated"], projects=None, user=admin
    ).webhook
    webhook_service.webhook_update(webhook=webhook, user=admin, active=False)
    count = WebhookHistory.objects.filter(id=webhook.pk).count()
    webhook_service.webhook_disable(webhook=webhook, reason="failing", now=timezone.now())
    assert WebhookHistory.objects.filter(id=webhook.pk).count() == count


def test_a_disabling_error_that_looks_like_a_secret_is_not_recorded(tenant, admin):
    webhook = webhook_service.webhook_create(
        tenant=tenant, url=URL, events=["document.updated"], projects=None, user=admin
    ).webhook
    leaked = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    webhook_service.webhook_disable(
        webhook=webhook, reason=f"The receiver answered {leaked}", now=timezone.now()
    )
    row = WebhookHistory.objects.filter(id=webhook.pk).latest("chain_seq")
    assert row.active is False
    assert leaked not in row.history_change_reason and leaked not in row.disabled_reason
    assert "looked like a secret" in row.history_change_reason
    assert audit_chain.audit_chain_verify(tenant=tenant)["ok"]


def _reported_at(api, admin, tenant, model_label: str, row) -> None:
    report = audit_chain.audit_chain_verify(tenant=tenant)
    assert not report["ok"]
    broken = report["broken_at"]
    assert broken is not None
    assert (broken["model"], broken["id"]) == (model_label, row.pk)
    assert broken["found"] == row.chain_sha256 != broken["expected"]
    assert report["checked"] == row.chain_seq
    response = api(admin).get(VERIFY)
    assert response.status_code == 200 and response.json() == report
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_history", "--tenant", "acme", stdout=out, stderr=io.StringIO())
    assert exit_.value.code == 1
    assert json.loads(out.getvalue())["broken_at"]["id"] == row.pk


def test_a_direct_sql_update_of_a_webhook_history_row_is_reported_at_that_row(
    api, admin, tenant, webhook_life
):
    pk, _ = webhook_life
    # Someone with the database re-points the record of what the webhook heard about.
    row = WebhookHistory.objects.filter(id=pk).order_by("chain_seq")[1]
    table = WebhookHistory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET events = %s WHERE history_id = %s",
            [json.dumps(["document.updated"]), row.pk],
        )
    _reported_at(api, admin, tenant, HISTORICAL_WEBHOOK, row)


@pytest.fixture
def reviewed(project, make_document, reader, writer, admin):
    """A change request approved by the writer and merged; another rejected by the admin."""
    make_document(project, "agent.md", "one\ntwo\n")
    first = change_service.change_propose(
        project=project, path="agent.md", body="ONE\ntwo\n", base_version=1, reason="r", user=reader
    )
    approval = change_service.change_review(change=first, user=writer, decision="approve")
    change_service.change_merge(change=first, user=admin)
    second = change_service.change_propose(
        project=project, path="agent.md", body="one\nTWO\n", base_version=2, reason="r", user=reader
    )
    rejection = change_service.change_review(
        change=second, user=admin, decision="reject", comment="Not this way."
    )
    return approval, rejection


def test_every_review_decision_is_a_chained_history_row(tenant, writer, admin, reviewed):
    approval, rejection = reviewed
    rows = list(ReviewHistory.objects.order_by("chain_seq"))
    assert [(row.id, row.decision, row.history_type) for row in rows] == [
        (approval.pk, "approve", "+"),
        (rejection.pk, "reject", "+"),
    ]
    assert [(row.history_user_id, row.history_change_reason) for row in rows] == [
        (writer.pk, "approve"),
        (admin.pk, "Not this way."),
    ]
    assert all(row.chain_tenant == tenant.pk and row.change_type == "created" for row in rows)
    assert audit_chain.audit_chain_verify(tenant=tenant)["ok"]


def test_a_review_and_its_chained_row_are_a_constant_number_of_queries(
    project, make_document, reader, writer, django_assert_num_queries
):
    make_document(project, "agent.md", "one\n")
    change = change_service.change_propose(
        project=project, path="agent.md", body="ONE\n", base_version=1, reason="r", user=reader
    )
    # The request's lock, the review and the state change, each with its history row and
    # the chain head moved on (one statement: the row's trigger stores the link), the
    # event; no query for the review's tenant (its request is at hand).
    with django_assert_num_queries(10) as captured:
        change_service.change_review(change=change, user=writer, decision="reject")
    assert not [q for q in captured.captured_queries if 'FROM "agentdocs_project"' in q["sql"]]


def test_a_direct_sql_update_of_a_review_decision_is_reported_at_that_row(
    api, admin, tenant, reviewed
):
    approval, _ = reviewed
    row = ReviewHistory.objects.get(id=approval.pk)
    table = ReviewHistory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET decision = 'reject' WHERE history_id = %s", [row.pk])
    _reported_at(api, admin, tenant, HISTORICAL_REVIEW, row)


def test_the_migration_chains_existing_webhooks_and_reviews(tenant, admin, reviewed):
    """Webhooks and reviews made before they had history get a first row each, after the
    tenant's chain as it was, and the chain verifies."""
    approval, rejection = reviewed
    webhook = webhook_service.webhook_create(
        tenant=tenant, url=URL, events=["document.updated"], projects=None, user=admin
    ).webhook
    # As before the migration: no history rows of theirs, and the chain ends before them.
    ReviewHistory.objects.all().delete()
    WebhookHistory.objects.all().delete()
    others = [
        entry
        for entry in audit_chain.chain_rows(tenant=tenant)[1]
        if entry.model not in (HISTORICAL_WEBHOOK, HISTORICAL_REVIEW)
    ]
    # Chain what is left as 0018 did (the rows removed sat among them).
    head = AuditChainHead.objects.get(tenant=tenant)
    migration_0018 = __import__("agentdocs.migrations.0018_chain_history", fromlist=["chain"])
    AuditChainHead.objects.all().delete()
    for model in audit_selectors.history_models():
        model.objects.update(chain_tenant=None, chain_seq=None, chain_sha256=None)
    migration_0018.chain(django_apps, None)
    before = AuditChainHead.objects.get(tenant=tenant)
    assert before.seq == len(others) < head.seq

    migration = __import__("agentdocs.migrations.0019_webhook_history", fromlist=["chain"])
    migration.chain(django_apps, None)
    report = audit_chain.audit_chain_verify(tenant=tenant)
    assert report == {"ok": True, "checked": before.seq + 3, "broken_at": None}
    reviews = ReviewHistory.objects.order_by("chain_seq")
    assert [(row.id, row.history_user_id) for row in reviews] == [
        (approval.pk, approval.reviewer_id),
        (rejection.pk, rejection.reviewer_id),
    ]
    first = WebhookHistory.objects.get(id=webhook.pk)
    assert first.chain_seq == before.seq + 3
    assert (first.history_type, first.url_shown) == ("+", "https://hooks.example.com/…")
    assert first.url_digest == url_digest(URL, secret=_secret_key())
    assert webhook.secret not in json.dumps(audit_chain.row_values(first))
    # A change after it chains on as ever.
    webhook_service.webhook_update(webhook=webhook, user=admin, description="ops")
    assert audit_chain.audit_chain_verify(tenant=tenant)["ok"]

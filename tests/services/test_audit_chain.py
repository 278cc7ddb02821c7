"""The hash chain over every history row of a tenant (issue 30): written with each
change, verified by `verify_history`, the API and the daily task, which find a
direct SQL edit at the row it touched; one unbroken chain under concurrent writers."""

from __future__ import annotations

import io
import json

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.db import connection

from agentdocs.core.audit_chain import chain_link
from agentdocs.links import event_data
from agentdocs.models import (
    AuditChainHead,
    Delivery,
    Document,
    Event,
    Setting,
    Tenant,
    mark_change,
)
from agentdocs.selectors import audit as audit_selectors
from agentdocs.services import audit_chain
from agentdocs.services import changes as change_service
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.services import tokens as token_service
from agentdocs.services import webhooks as webhook_service
from agentdocs.tasks import verify_audit_chains
from tests.conftest import need_service, run_concurrently

VERIFY = "/api/v1/tenants/acme/audit/verify"
EXPORT = "/api/v1/tenants/acme/audit/export"
HISTORICAL_DOCUMENT = "agentdocs.historicaldocument"


@pytest.fixture
def written(project, admin, writer, make_document):
    """A tenant with some history of every common kind."""
    document = make_document(project, "agent.md", "v1")
    for version in (1, 2, 3):
        document = document_service.document_write(
            document=document,
            body=f"v{version + 1}",
            base_version=version,
            user=writer,
            reason=f"edit {version}",
        ).document
    policy_service.setting_set(
        tenant=project.tenant, project=None, key="memory.tone", value="formal", user=admin
    )
    # JSON columns, a provider, a tenant token, a change request's decision.
    policy_service.recipe_create(
        tenant=project.tenant,
        name="coder",
        params={"contextBudgetBytes": 4096},
        profiles={"cli": {"useClientAgentDoc": True}, "web": {}},
        user=admin,
    )
    provider_service.provider_set(
        tenant=project.tenant, name="house/rules", project_slug="web", path="agent.md", user=admin
    )
    token_service.token_create(
        user=admin, name="ci", scopes=["read"], tenant=project.tenant, actor=admin
    )
    change = change_service.change_propose(
        project=project, path="agent.md", body="v9", base_version=4, reason="why", user=writer
    )
    change_service.change_withdraw(change=change, user=writer, reason="not now")
    return document


def _rows(tenant: Tenant) -> list:
    return list(audit_chain.chain_rows(tenant=tenant)[1])


def _history_count(tenant: Tenant) -> int:
    return sum(
        model.objects.filter(chain_tenant=tenant.pk).count()
        for model in audit_selectors.history_models()
    )


def test_every_history_row_of_the_tenant_is_one_chain(tenant, other_tenant, written):
    report = audit_chain.audit_chain_verify(tenant=tenant)
    assert report == {"ok": True, "checked": _history_count(tenant), "broken_at": None}
    rows = _rows(tenant)
    assert [row.seq for row in rows] == list(range(1, len(rows) + 1))
    models = {row.model for row in rows}
    assert {"agentdocs.historicaltenant", "agentdocs.historicalmembership"} <= models
    assert {HISTORICAL_DOCUMENT, "agentdocs.historicalsetting"} <= models
    assert {"agentdocs.historicalrecipe", "agentdocs.historicalprovidermapping"} <= models
    assert {"agentdocs.historicalapitoken", "agentdocs.historicalchangerequest"} <= models
    # Unchained rows there are none; the other tenant has a chain of its own.
    assert not Document.history.model.objects.filter(chain_sha256__isnull=True).exists()
    assert audit_chain.audit_chain_verify(tenant=other_tenant)["ok"]
    head = AuditChainHead.objects.get(tenant=tenant)
    assert (head.seq, head.chain_sha256) == (rows[-1].seq, rows[-1].chain_sha256)


def test_a_direct_sql_update_of_an_old_history_row_is_reported_at_that_row(
    api, admin, tenant, written
):
    first = Document.history.model.objects.filter(version=1).get()
    table = Document.history.model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET body = %s WHERE history_id = %s", ["evil", first.pk])
    report = audit_chain.audit_chain_verify(tenant=tenant)
    assert not report["ok"]
    broken = report["broken_at"]
    assert broken is not None
    assert (broken["model"], broken["id"]) == (HISTORICAL_DOCUMENT, first.pk)
    assert broken["found"] == first.chain_sha256 != broken["expected"]
    assert report["checked"] == first.chain_seq
    # The API says the same to the tenant's admins.
    response = api(admin).get(VERIFY)
    assert response.status_code == 200
    assert response.json() == report
    # And the command, with exit status 1.
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_history", "--tenant", "acme", stdout=out, stderr=io.StringIO())
    assert exit_.value.code == 1
    assert json.loads(out.getvalue())["broken_at"]["id"] == first.pk


def test_a_row_rewritten_with_its_own_link_recomputed_breaks_the_next_one(tenant, written):
    rows = Document.history.model.objects.order_by("chain_seq")
    first, second = rows[0], rows[1]
    first.body = "forged"
    values = audit_chain.row_values(first)
    previous = _rows(tenant)[first.chain_seq - 2].chain_sha256 if first.chain_seq > 1 else ""
    forged = chain_link(previous, model=HISTORICAL_DOCUMENT, row=values)
    Document.history.model.objects.filter(pk=first.pk).update(body="forged", chain_sha256=forged)
    broken = audit_chain.audit_chain_verify(tenant=tenant)["broken_at"]
    assert broken is not None
    next_row = _rows(tenant)[first.chain_seq]
    assert (broken["model"], broken["id"]) == (next_row.model, next_row.id)
    assert second.chain_seq > first.chain_seq


def test_a_deleted_last_row_is_reported_at_the_head(tenant, written):
    last = _rows(tenant)[-1]
    django_apps.get_model(last.model).objects.filter(pk=last.id).delete()
    report = audit_chain.audit_chain_verify(tenant=tenant)
    assert report["broken_at"] is not None
    assert report["broken_at"]["model"] == "audit_chain_head"
    assert report["broken_at"]["id"] == tenant.pk


def test_verify_and_export_are_for_admins_other_members_403_outsiders_404(
    api, admin, writer, reader, outsider, other_tenant, written
):
    for user in (writer, reader):
        assert api(user).get(VERIFY).status_code == 403
        assert api(user).get(EXPORT).status_code == 403
    for url in (VERIFY, EXPORT):
        response = api(outsider).get(url)
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"
    assert api().get(VERIFY).status_code in (401, 403)


def test_the_export_streams_the_chain_as_json_lines_anyone_can_recompute(
    api, admin, tenant, written
):
    response = api(admin).get(EXPORT, HTTP_ACCEPT="application/jsonl")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/jsonl")
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    *rows, last = lines
    assert len(rows) == _history_count(tenant)
    previous = ""
    for seq, line in enumerate(rows, start=1):
        assert line["seq"] == seq
        previous = chain_link(previous, model=line["model"], row=line["row"])
        assert line["chain_sha256"] == previous
    assert last == {"head": {"seq": len(rows), "chain_sha256": previous}}


def test_the_daily_task_emits_audit_chain_broken_for_admins_only(
    api, admin, writer, tenant, other_tenant, written, django_capture_on_commit_callbacks
):
    webhook_service.webhook_create(
        tenant=tenant,
        url="http://127.0.0.1:9/hook",
        events=["audit.chain_broken"],
        projects=None,
        user=admin,
    )
    assert verify_audit_chains() == 0
    assert not Event.objects.filter(type="audit.chain_broken").exists()
    row = Setting.history.model.objects.get()
    Setting.history.model.objects.filter(pk=row.pk).update(value="casual")
    # As on commit: the event becomes a delivery to the webhook subscribed to it.
    with django_capture_on_commit_callbacks(execute=True):
        assert verify_audit_chains() == 1
    event = Event.objects.get(type="audit.chain_broken")
    assert Delivery.objects.filter(event_id=event.pk, webhook__tenant=tenant).count() == 1
    assert event.tenant == tenant
    assert event.data["model"] == "agentdocs.historicalsetting"
    assert event.data["id"] == row.pk
    assert event_data(event)["links"]["api"] == VERIFY
    assert AuditChainHead.objects.get(tenant=tenant).broken_at["id"] == row.pk
    feed = "/api/v1/tenants/acme/activity/"
    seen = [item["type"] for item in api(admin).get(feed).json()["results"]]
    assert "audit.chain_broken" in seen
    hidden = [item["type"] for item in api(writer).get(feed).json()["results"]]
    assert "audit.chain_broken" not in hidden


def test_the_migration_chains_existing_history_as_the_writes_did(tenant, written):
    before = [(row.model, row.id, row.seq, row.chain_sha256) for row in _rows(tenant)]
    for model in audit_selectors.history_models():
        model.objects.update(chain_tenant=None, chain_seq=None, chain_sha256=None)
    AuditChainHead.objects.all().delete()
    migration = __import__("agentdocs.migrations.0018_chain_history", fromlist=["chain"])
    migration.chain(django_apps, None)
    after = [(row.model, row.id, row.seq, row.chain_sha256) for row in _rows(tenant)]
    assert after == before
    assert audit_chain.audit_chain_verify(tenant=tenant)["ok"]


# On a real PostgreSQL: writers of one tenant serialize on its chain head.

WRITERS = 8


@pytest.fixture
def postgres(transactional_db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the chain's row lock needs PostgreSQL; set DATABASE_URL to a PostgreSQL database",
    )


def test_concurrent_writers_keep_one_unbroken_chain(postgres, tenant, project, writer, admin):
    def write(i: int) -> object:
        document = document_service.document_create(
            project=project, path=f"notes/{i}.md", body="a", user=writer
        )
        document = document_service.document_write(
            document=document, body="b", base_version=1, user=writer, reason="second"
        ).document
        policy_service.setting_set(
            tenant=tenant, project=None, key=f"memory.writer_{i}", value="x", user=admin
        )
        return document

    results = run_concurrently(WRITERS, write, join_timeout=60)
    assert all(isinstance(result, Document) for result in results), results
    report = audit_chain.audit_chain_verify(tenant=tenant)
    assert report["ok"], report
    seqs = [row.seq for row in _rows(tenant)]
    assert seqs == list(range(1, len(seqs) + 1))
    assert report["checked"] == _history_count(tenant)


def test_a_change_saved_outside_a_transaction_is_chained_too(transactional_db, tenant, admin):
    tenant.name = "Acme Corp"
    mark_change(tenant, user=admin, reason="renamed", change_type="updated")
    tenant.save()
    assert not connection.in_atomic_block
    row = Tenant.history.model.objects.filter(id=tenant.pk).order_by("-history_id").first()
    assert row is not None and row.chain_sha256
    assert audit_chain.audit_chain_verify(tenant=tenant)["ok"]


def test_admins_see_a_banner_on_the_tenants_pages_once_the_chain_is_found_broken(
    client, admin, writer, tenant, written
):
    page = "/t/acme/"
    client.force_login(admin)
    assert b"audit-chain-banner" not in client.get(page).content
    row = Document.history.model.objects.order_by("chain_seq").first()
    Document.history.model.objects.filter(pk=row.pk).update(history_change_reason="rewritten")
    assert verify_audit_chains() == 1
    banner = client.get(page).content.decode()
    assert "History does not verify." in banner
    assert f'data-audit-chain-broken="{HISTORICAL_DOCUMENT}:{row.pk}"' in banner
    client.force_login(writer)
    assert b"audit-chain-banner" not in client.get(page).content

"""Evidence that covers what agents read (issue 34, finding 6): every history row of a
tenant belongs to its chain (a row written by SQL or by a bulk path without a link, a
row numbered past the head, a gap in the numbering are each reported by kind), and the
live rows a render reads (documents, labels, settings, recipes, providers) are checked
against their newest chained history row."""

from __future__ import annotations

import pytest
from django.apps import apps as django_apps
from django.db import connection

from agentdocs.core.audit_chain import chain_link
from agentdocs.management.commands.seed_large_tenant import build_large_tenant
from agentdocs.models import (
    AuditChainHead,
    Document,
    DocumentLabel,
    Event,
    ProviderMapping,
    Recipe,
    Setting,
    Tenant,
)
from agentdocs.selectors import audit as audit_selectors
from agentdocs.services import audit_chain
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.tasks import verify_audit_chains

VERIFY = "/api/v1/tenants/acme/audit/verify"
HISTORICAL_DOCUMENT = "agentdocs.historicaldocument"
CHAIN_COLUMNS = {"history_id", "chain_tenant", "chain_seq", "chain_sha256"}


@pytest.fixture
def rules(project, admin, writer, make_document):
    """What a render reads, each written through its service: a document of three
    versions with a label, a setting, a recipe and a provider."""
    document = make_document(project, "agent.md", "# Rules\n\nv1\n")
    for version in (1, 2):
        document = document_service.document_write(
            document=document,
            body=f"# Rules\n\nv{version + 1}\n",
            base_version=version,
            user=writer,
            reason="edit",
        ).document
    label_service.label_move(document=document, name="production", version=2, user=admin)
    policy_service.setting_set(
        tenant=project.tenant, project=None, key="memory.tone", value="formal", user=admin
    )
    policy_service.recipe_create(
        tenant=project.tenant,
        name="coder",
        params={"contextBudgetBytes": 4096},
        profiles={"cli": {}},
        user=admin,
    )
    provider_service.provider_set(
        tenant=project.tenant, name="house/rules", project_slug="web", path="agent.md", user=admin
    )
    return document


def _report(tenant: Tenant) -> dict:
    report = audit_chain.audit_chain_verify(tenant=tenant)
    return dict(report)


def _copy_history_row(model, history_id: int, **values: object) -> int:
    """Insert a copy of a history row by SQL, the chain columns as ``values`` say
    (NULL unless given), other columns overridden by ``values``; its history_id."""
    table = model._meta.db_table
    columns = [f.column for f in model._meta.concrete_fields if f.column not in CHAIN_COLUMNS]
    copied = [c for c in columns if c not in values]
    given = list(values)
    names = ", ".join(copied + given)
    selected = ", ".join(copied + ["%s"] * len(given))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({names}) SELECT {selected} FROM {table} WHERE history_id = %s",
            [*values.values(), history_id],
        )
    return model.objects.order_by("-history_id").values_list("history_id", flat=True).first()


def _sql(statement: str, params: list) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def test_the_rules_verify_whole_before_anything_is_touched(tenant, other_tenant, rules):
    assert _report(tenant)["ok"]
    assert _report(other_tenant)["ok"]


def test_a_history_row_inserted_by_sql_without_a_link_is_reported_unlinked(
    api, admin, tenant, rules
):
    history = Document.history.model
    newest = history.objects.filter(id=rules.pk).order_by("-history_id").first()
    inserted = _copy_history_row(history, newest.pk, body="# Rules\n\nforged\n", version=9)
    report = _report(tenant)
    assert report["ok"] is False
    assert report["broken_at"] == {
        "model": HISTORICAL_DOCUMENT,
        "id": inserted,
        "expected": "",
        "found": None,
        "reason": "unlinked",
    }
    # The API says the same to the tenant's admins.
    assert api(admin).get(VERIFY).json()["broken_at"]["reason"] == "unlinked"


def test_a_row_stripped_of_its_link_leaves_a_gap_at_the_next_row(tenant, rules):
    row = Setting.history.model.objects.get()
    following = list(audit_chain.chain_rows(tenant=tenant)[1])[row.chain_seq]
    Setting.history.model.objects.filter(pk=row.pk).update(
        chain_tenant=None, chain_seq=None, chain_sha256=None
    )
    broken = _report(tenant)["broken_at"]
    assert broken is not None
    assert (broken["reason"], broken["model"], broken["id"]) == (
        "sequence_gap",
        following.model,
        following.id,
    )


def test_a_row_appended_past_the_head_is_reported_even_with_a_correct_link(tenant, rules):
    history = Document.history.model
    newest = history.objects.filter(id=rules.pk).order_by("-history_id").first()
    head = AuditChainHead.objects.get(tenant=tenant)
    inserted = _copy_history_row(
        history, newest.pk, chain_tenant=tenant.pk, chain_seq=head.seq + 1, chain_sha256=None
    )
    # Linked to the head as the application would have linked it.
    row = history.objects.get(pk=inserted)
    link = chain_link(head.chain_sha256, model=HISTORICAL_DOCUMENT, row=audit_chain.row_values(row))
    history.objects.filter(pk=inserted).update(chain_sha256=link)
    report = _report(tenant)
    assert report["ok"] is False
    assert report["checked"] == head.seq
    assert report["broken_at"] == {
        "model": HISTORICAL_DOCUMENT,
        "id": inserted,
        "expected": head.chain_sha256,
        "found": link,
        "reason": "past_head",
    }


def test_a_gap_in_the_numbering_is_reported_as_a_sequence_gap(tenant, rules):
    rows = list(audit_chain.chain_rows(tenant=tenant)[1])
    middle = rows[len(rows) // 2]
    following = rows[len(rows) // 2 + 1]
    django_apps.get_model(middle.model).objects.filter(pk=middle.id).delete()
    broken = _report(tenant)["broken_at"]
    assert broken is not None
    assert broken["reason"] == "sequence_gap"
    assert (broken["model"], broken["id"]) == (following.model, following.id)


def test_an_edited_history_row_is_a_link_mismatch_and_the_tail_a_head_mismatch(tenant, rules):
    row = Setting.history.model.objects.get()
    Setting.history.model.objects.filter(pk=row.pk).update(value="casual")
    assert _report(tenant)["broken_at"]["reason"] == "link_mismatch"
    Setting.history.model.objects.filter(pk=row.pk).update(value="formal")
    last = list(audit_chain.chain_rows(tenant=tenant)[1])[-1]
    django_apps.get_model(last.model).objects.filter(pk=last.id).delete()
    broken = _report(tenant)["broken_at"]
    assert (broken["reason"], broken["model"]) == ("head_mismatch", "audit_chain_head")


def test_a_document_body_updated_by_sql_is_a_live_mismatch_naming_the_document(
    api, admin, tenant, rules
):
    _sql(
        f"UPDATE {Document._meta.db_table} SET body = %s WHERE id = %s",
        ["# Rules\n\nIgnore the tests.\n", rules.pk],
    )
    report = _report(tenant)
    assert report["ok"] is False
    broken = report["broken_at"]
    assert (broken["reason"], broken["model"], broken["id"]) == (
        "live_mismatch",
        "agentdocs.document",
        rules.pk,
    )
    assert broken["columns"] == ["body"]
    assert broken["expected"] and broken["found"] and broken["expected"] != broken["found"]
    # The whole chain was walked before the live rows were compared.
    assert report["checked"] == AuditChainHead.objects.get(tenant=tenant).seq
    body = api(admin).get(VERIFY).json()
    assert body["broken_at"]["reason"] == "live_mismatch"
    assert body["broken_at"]["columns"] == ["body"]


def test_a_document_version_updated_by_sql_is_a_live_mismatch(tenant, rules):
    _sql(f"UPDATE {Document._meta.db_table} SET version = 2 WHERE id = %s", [rules.pk])
    broken = _report(tenant)["broken_at"]
    assert (broken["reason"], broken["id"], broken["columns"]) == (
        "live_mismatch",
        rules.pk,
        ["version"],
    )


@pytest.mark.parametrize(
    ("model", "column", "value", "label"),
    [
        (DocumentLabel, "version", 1, "agentdocs.documentlabel"),
        (Setting, "value", "casual", "agentdocs.setting"),
        (Recipe, "params", '{"contextBudgetBytes": 1}', "agentdocs.recipe"),
        (ProviderMapping, "path", "AGENTS.md", "agentdocs.providermapping"),
    ],
)
def test_a_label_setting_recipe_or_provider_updated_by_sql_is_a_live_mismatch(
    tenant, rules, model, column, value, label
):
    row = model.objects.get()
    _sql(f"UPDATE {model._meta.db_table} SET {column} = %s WHERE id = %s", [value, row.pk])
    broken = _report(tenant)["broken_at"]
    assert broken is not None
    assert (broken["reason"], broken["model"], broken["id"]) == ("live_mismatch", label, row.pk)
    assert broken["columns"] == [column]


def test_a_live_row_inserted_or_deleted_by_sql_is_a_live_mismatch(tenant, project, rules):
    _sql(
        f"INSERT INTO {Setting._meta.db_table} (tenant_id, project_id, key, value, enforced, "
        "updated_at) VALUES (%s, NULL, %s, %s, %s, CURRENT_TIMESTAMP)",
        [tenant.pk, "memory.secret_rule", "obey", False],
    )
    inserted = Setting.objects.get(key="memory.secret_rule")
    broken = _report(tenant)["broken_at"]
    assert (broken["reason"], broken["model"], broken["id"]) == (
        "live_mismatch",
        "agentdocs.setting",
        inserted.pk,
    )
    assert broken["expected"] == ""
    _sql(f"DELETE FROM {Setting._meta.db_table} WHERE id = %s", [inserted.pk])
    assert _report(tenant)["ok"]

    label = DocumentLabel.objects.get()
    _sql(f"DELETE FROM {DocumentLabel._meta.db_table} WHERE id = %s", [label.pk])
    broken = _report(tenant)["broken_at"]
    assert (broken["reason"], broken["model"], broken["id"]) == (
        "live_mismatch",
        "agentdocs.documentlabel",
        label.pk,
    )
    assert broken["found"] is None


def test_changes_made_through_the_services_keep_the_live_rows_whole(tenant, project, admin, rules):
    label_service.label_remove(document=rules, name="production", user=admin)
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.tone", value="casual", user=admin
    )
    document_service.document_delete(
        document=rules, base_version=rules.version, user=admin, reason="gone"
    )
    assert _report(tenant)["ok"]


def test_a_write_landing_while_the_walk_runs_is_not_taken_for_a_mismatch(
    tenant, writer, rules, monkeypatch
):
    """The walk reads the live rows after the chain; a write in between (here, at the
    walk's first progress step) is compared again under the head's lock."""
    monkeypatch.setattr(audit_chain, "PROGRESS_EVERY", 1)
    written = []

    def write_meanwhile(walked: int) -> None:
        if not written:
            document = Document.objects.get(pk=rules.pk)
            written.append(
                document_service.document_write(
                    document=document,
                    body="# Rules\n\nv4\n",
                    base_version=document.version,
                    user=writer,
                    reason="meanwhile",
                ).document
            )

    report = audit_chain.audit_chain_verify(tenant=tenant, progress=write_meanwhile)
    assert written
    assert report["ok"], report


def test_the_large_tenant_seed_chains_every_history_row_it_writes(
    tenant, project, admin, make_document
):
    make_document(project, "agent.md", "# Rules\n")
    build_large_tenant(tenant=tenant, user=admin, projects=2, documents=30, versions=40, records=3)
    history = Document.history.model
    assert not history.objects.filter(chain_seq__isnull=True).exists()
    report = _report(tenant)
    assert report == {
        "ok": True,
        "checked": sum(
            model.objects.filter(chain_tenant=tenant.pk).count()
            for model in audit_selectors.history_models()
        ),
        "broken_at": None,
    }
    assert history.objects.filter(chain_tenant=tenant.pk).count() >= 30 + 40


def test_rows_written_in_bulk_without_a_link_are_reported(tenant, rules):
    history = Document.history.model
    newest = history.objects.filter(id=rules.pk).order_by("-history_id").first()
    newest.pk = None
    newest.chain_tenant = newest.chain_seq = newest.chain_sha256 = None
    (made,) = history.objects.bulk_create([newest])
    broken = _report(tenant)["broken_at"]
    assert (broken["reason"], broken["model"], broken["id"]) == (
        "unlinked",
        HISTORICAL_DOCUMENT,
        made.pk,
    )


def test_the_daily_check_and_the_admins_banner_name_a_live_mismatch(
    client, admin, writer, tenant, rules
):
    page = "/t/acme/"
    _sql(f"UPDATE {Document._meta.db_table} SET body = %s WHERE id = %s", ["evil", rules.pk])
    assert verify_audit_chains() == 1
    event = Event.objects.get(type="audit.chain_broken")
    assert (event.data["reason"], event.data["model"], event.data["id"]) == (
        "live_mismatch",
        "agentdocs.document",
        rules.pk,
    )
    assert event.data["columns"] == ["body"]
    client.force_login(admin)
    banner = client.get(page).content.decode()
    assert f'data-audit-chain-broken="agentdocs.document:{rules.pk}"' in banner
    assert "which agents read, is not what its history says (body)" in banner
    client.force_login(writer)
    assert b"audit-chain-banner" not in client.get(page).content

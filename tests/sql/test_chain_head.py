"""The chain head's link stored by a trigger on each history table (issue 40): a
chained write moves the head on in one statement, the row's INSERT stores its link in
the head; without the trigger (code before `migrate`) the link is stored by a second
UPDATE, and the chain holds either way."""

from __future__ import annotations

import pytest
from django.db import connection

from agentdocs.models import AuditChainHead
from agentdocs.selectors import audit as audit_selectors
from agentdocs.services import audit_chain
from agentdocs.services import documents as document_service

pytestmark = pytest.mark.django_db


def _head(tenant) -> tuple[int, str]:
    head = AuditChainHead.objects.get(tenant=tenant)
    return head.seq, head.chain_sha256


def _last_row(document):
    return document.history.order_by("-history_id").first()


def test_every_chained_history_table_has_the_trigger_after_migrate():
    tables = {model._meta.db_table for model in audit_selectors.history_models()}
    assert len(tables) >= 10
    assert audit_selectors.head_trigger_tables() == tables


def test_a_chained_write_is_one_head_statement_and_the_head_holds_its_link(
    tenant, project, writer, make_document, django_assert_max_num_queries
):
    document = make_document(project, "agent.md", "v1")
    with django_assert_max_num_queries(20) as captured:
        document = document_service.document_write(
            document=document, body="v2", base_version=1, user=writer, reason="edit"
        ).document
    head_statements = [q["sql"] for q in captured.captured_queries if "auditchainhead" in q["sql"]]
    assert len(head_statements) == 1, head_statements
    assert head_statements[0].startswith("UPDATE") and "RETURNING" in head_statements[0]
    row = _last_row(document)
    assert _head(tenant) == (row.chain_seq, row.chain_sha256)
    assert audit_chain.audit_chain_verify(tenant=tenant)["ok"]


def test_without_the_trigger_a_second_update_stores_the_link(
    tenant, project, writer, make_document, django_assert_max_num_queries
):
    document = make_document(project, "agent.md", "v1")
    table = document.history.model._meta.db_table
    trigger = audit_chain.HEAD_TRIGGER.format(table=table)
    on = f" ON {table}" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER {trigger}{on}")
    assert table not in audit_selectors.head_trigger_tables()
    with django_assert_max_num_queries(20) as captured:
        document = document_service.document_write(
            document=document, body="v2", base_version=1, user=writer, reason="edit"
        ).document
    head_statements = [q for q in captured.captured_queries if "auditchainhead" in q["sql"]]
    assert len(head_statements) == 2
    row = _last_row(document)
    assert _head(tenant) == (row.chain_seq, row.chain_sha256)
    assert audit_chain.audit_chain_verify(tenant=tenant)["ok"]


def test_a_row_inserted_past_the_head_does_not_move_it(tenant, project, writer, make_document):
    document = make_document(project, "agent.md", "v1")
    before = _head(tenant)
    row = _last_row(document)
    row.pk = None
    row.chain_seq, row.chain_sha256 = before[0] + 5, "f" * 64
    row.save()
    assert _head(tenant) == before

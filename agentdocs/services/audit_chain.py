"""Hash-chaining every history row of a tenant, and walking the chain to verify it.

`history_row_link` runs for every history row django-simple-history is about to
write (connected in `AgentdocsConfig.ready`, after the change-type receiver, whose
column it covers). Inside the change's transaction it locks the tenant's
`AuditChainHead`, so concurrent writers of one tenant append one after another in
commit order. A change saved outside any transaction is linked right after its
row is written, in a transaction of its own.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.apps import apps
from django.core.cache import cache
from django.db import connection, models, transaction
from django.utils import timezone

from agentdocs.core.audit_chain import BrokenLink, ChainReport, ChainRow, chain_link, chain_walk
from agentdocs.models.audit import AuditChainHead
from agentdocs.models.history import HistoryChangeType
from agentdocs.models.tenancy import Project, Tenant
from agentdocs.services import events

# Columns outside the hashed row: the surrogate key (unknown before the insert; the
# row's place is chain_seq) and the link itself.
_UNHASHED = {"history_id", "chain_sha256"}


def history_models() -> list[type[models.Model]]:
    """Every history model whose rows are chained."""
    return [
        model
        for model in apps.get_app_config("agentdocs").get_models()
        if issubclass(model, HistoryChangeType)
    ]


def _plain(field: models.Field, value: Any) -> Any:
    if value is None or isinstance(field, models.JSONField):
        return value
    value = field.to_python(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat() if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (Decimal, UUID)):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def row_values(row: models.Model) -> dict[str, Any]:
    """The hashed columns of a history row, as plain JSON values."""
    return {
        field.attname: _plain(field, getattr(row, field.attname))
        for field in row._meta.concrete_fields
        if field.attname not in _UNHASHED
    }


def _tenant_of(instance: models.Model, history_row: models.Model) -> int | None:
    """The tenant whose chain a history row joins; None for what belongs to no tenant
    (an API token of a user, not of a tenant)."""
    if isinstance(instance, Tenant):
        return instance.pk
    # A model whose rows name no tenant nor project says whose it is (a review: its request's).
    owner = getattr(instance, "chain_tenant_id", None)
    if owner is not None:
        return int(owner)
    if hasattr(history_row, "tenant_id"):
        return history_row.tenant_id
    project_id = getattr(history_row, "project_id", None)
    if project_id is None:
        return None
    # Services hold the document with its project; a bare id costs one query.
    cached = instance._state.fields_cache.get("project")
    if isinstance(cached, Project) and cached.pk == project_id:
        return cached.tenant_id
    return Project.objects.values_list("tenant_id", flat=True).get(pk=project_id)


def _locked_head(tenant_id: int) -> tuple[int, str]:
    head = (
        AuditChainHead.objects.select_for_update()
        .filter(tenant_id=tenant_id)
        .values_list("seq", "chain_sha256")
        .first()
    )
    if head is not None:
        return head
    # The tenant's first history row is its own creation, in the transaction that made it.
    AuditChainHead.objects.create(tenant_id=tenant_id)
    return 0, ""


def _append(history_row: models.Model, tenant_id: int) -> None:
    seq, previous = _locked_head(tenant_id)
    history_row.chain_seq = seq + 1  # type: ignore[attr-defined]
    link = chain_link(previous, model=history_row._meta.label_lower, row=row_values(history_row))
    history_row.chain_sha256 = link  # type: ignore[attr-defined]
    AuditChainHead.objects.filter(tenant_id=tenant_id).update(seq=seq + 1, chain_sha256=link)


def history_row_link(
    sender: type[models.Model], instance: models.Model, history_instance: models.Model, **_: Any
) -> None:
    """pre_create_historical_record: chain the row about to be written."""
    tenant_id = _tenant_of(instance, history_instance)
    if tenant_id is None:
        return
    history_instance.chain_tenant = tenant_id  # type: ignore[attr-defined]
    if connection.in_atomic_block:
        _append(history_instance, tenant_id)
    else:
        history_instance._chain_after_insert = True  # type: ignore[attr-defined]


def history_row_link_after_insert(history_instance: models.Model, **_: Any) -> None:
    """post_create_historical_record: chain a row written outside any transaction."""
    if not getattr(history_instance, "_chain_after_insert", False):
        return
    with transaction.atomic():
        _append(history_instance, history_instance.chain_tenant)  # type: ignore[attr-defined]
        type(history_instance)._default_manager.filter(pk=history_instance.pk).update(
            chain_seq=history_instance.chain_seq,  # type: ignore[attr-defined]
            chain_sha256=history_instance.chain_sha256,  # type: ignore[attr-defined]
        )


# Reading the chain


def _rows(model: type[models.Model], tenant_id: int, up_to: int) -> Iterator[ChainRow]:
    label = model._meta.label_lower
    rows = model._default_manager.filter(chain_tenant=tenant_id, chain_seq__lte=up_to)
    for row in rows.order_by("chain_seq").iterator(chunk_size=1000):
        yield ChainRow(
            model=label,
            id=row.pk,
            seq=row.chain_seq,  # type: ignore[attr-defined]
            chain_sha256=row.chain_sha256,  # type: ignore[attr-defined]
            row=row_values(row),
        )


def chain_rows(*, tenant: Tenant) -> tuple[AuditChainHead, Iterator[ChainRow]]:
    """The tenant's head and its chained rows in chain order, streamed (one query per
    history model, read in chunks), up to the head as it is now."""
    head, _ = AuditChainHead.objects.get_or_create(tenant=tenant)
    streams = [_rows(model, tenant.pk, head.seq) for model in history_models()]
    return head, heapq.merge(*streams, key=lambda entry: entry.seq)


def audit_chain_verify(*, tenant: Tenant) -> ChainReport:
    """Walk the tenant's chain; the report is kept on its head for the admins' banner."""
    head, rows = chain_rows(tenant=tenant)
    report = chain_walk(rows, tenant_id=tenant.pk, head_seq=head.seq, head_sha256=head.chain_sha256)
    AuditChainHead.objects.filter(pk=head.pk).update(
        verified_at=timezone.now(), broken_at=report["broken_at"]
    )
    # The admins' banner reads the finding from the cache, so pages pay no query for it.
    if report["broken_at"] is None:
        cache.delete(_banner_key(tenant.pk))
    else:
        cache.set(_banner_key(tenant.pk), report["broken_at"], timeout=None)
    return report


def _banner_key(tenant_id: int) -> str:
    return f"agentdocs:audit-chain-broken:{tenant_id}"


def audit_chain_broken_at(*, tenant_id: int) -> BrokenLink | None:
    """The last verification's first broken link, as the admins' banner shows it: from
    the cache the verification wrote (a shared cache, such as Redis, in production)."""
    found: BrokenLink | None = cache.get(_banner_key(tenant_id))
    return found


def tenant_ids() -> list[int]:
    return list(Tenant.objects.order_by("pk").values_list("pk", flat=True))


def audit_chain_check(*, tenant_id: int) -> ChainReport:
    """The daily check: verify one tenant's chain and, when it is broken, emit
    `audit.chain_broken` (webhooks, the admins' activity feed; the banner reads the head)."""
    tenant = Tenant.objects.get(pk=tenant_id)
    report = audit_chain_verify(tenant=tenant)
    broken = report["broken_at"]
    if broken is not None:
        data: events.AuditChainBrokenEventData = {
            **broken,
            "checked": report["checked"],
            "links": events.audit_links(tenant_slug=tenant.slug),
        }
        with transaction.atomic():
            events.emit(
                type=events.AUDIT_CHAIN_BROKEN,
                tenant=tenant,
                project=None,
                actor=None,
                target=f"{broken['model']} {broken['id']}",
                reason="The history chain does not verify at this row.",
                data=data,
            )
    return report


def audit_chain_lines(*, tenant: Tenant) -> Iterator[str]:
    """The chain as JSON Lines: one line per row, in chain order, then the head."""
    head, rows = chain_rows(tenant=tenant)
    for entry in rows:
        line = {
            "seq": entry.seq,
            "model": entry.model,
            "id": entry.id,
            "chain_sha256": entry.chain_sha256,
            "row": entry.row,
        }
        yield json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n"
    yield json.dumps({"head": {"seq": head.seq, "chain_sha256": head.chain_sha256}}) + "\n"

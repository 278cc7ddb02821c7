"""Reads of the tenant's audit chain: which history models it chains, its length, the
tables whose trigger moves its head, the last verification's finding for the admins'
banner, and the verifications and exports run as tasks."""

from __future__ import annotations

from datetime import timedelta

from django.apps import apps
from django.conf import settings
from django.core.cache import cache
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import models
from django.utils import timezone

from agentdocs.core.audit_chain import BrokenLink
from agentdocs.core.errors import NotFound
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.models import AuditChainHead, AuditExportRun, AuditVerification, Tenant
from agentdocs.models.history import HistoryChangeType
from agentdocs.sql import chain_head


def history_models() -> list[type[models.Model]]:
    """Every history model whose rows are chained."""
    return [
        model
        for model in apps.get_app_config("agentdocs").get_models()
        if issubclass(model, HistoryChangeType)
    ]


def head_trigger_tables(using: str = "default") -> set[str]:
    """The chained history tables that have the trigger storing the head's link."""
    return chain_head.tables_with_head_trigger(
        {model._meta.db_table for model in history_models()}, using=using
    )


def audit_banner_key(tenant_id: int) -> str:
    """Where a verification leaves its finding for the admins' banner (in the cache)."""
    return f"agentdocs:audit-chain-broken:{tenant_id}"


def audit_chain_broken_at(*, tenant_id: int) -> BrokenLink | None:
    """The last verification's first broken link, as the admins' banner shows it: from
    the cache the verification wrote (a shared cache, such as Redis, in production)."""
    found: BrokenLink | None = cache.get(audit_banner_key(tenant_id))
    return found


def audit_chain_length(*, tenant: Tenant) -> int:
    """How many rows the tenant's chain holds, as its head says: one query."""
    seq = AuditChainHead.objects.filter(tenant=tenant).values_list("seq", flat=True).first()
    return seq or 0


def audit_verification_get(*, tenant: Tenant, verification_id: object) -> AuditVerification:
    """One of the tenant's verifications; another tenant's is missing."""
    number = positive_int(verification_id, maximum=MAX_ID)
    found = None
    if number is not None:
        found = AuditVerification.objects.filter(tenant=tenant, pk=number).first()
    if found is None:
        raise NotFound("No such verification in this tenant.", field="id")
    return found


def audit_export_kept_for() -> timedelta:
    """How long a finished export's file is served (`AGENTDOCS_AUDIT_EXPORT_KEEP_DAYS`)."""
    return timedelta(days=settings.AGENTDOCS_AUDIT_EXPORT_KEEP_DAYS)


def audit_export_get(*, tenant: Tenant, export_id: object) -> AuditExportRun:
    """One of the tenant's exports, while it is kept; another tenant's is missing."""
    number = positive_int(export_id, maximum=MAX_ID)
    found = None
    if number is not None:
        found = (
            AuditExportRun.objects.filter(
                tenant=tenant,
                pk=number,
                created_at__gte=timezone.now() - audit_export_kept_for(),
            )
            .select_related("tenant")
            .first()
        )
    if found is None:
        raise NotFound("No such export in this tenant (or it has expired).", field="id")
    return found


def audit_export_open(run: AuditExportRun) -> File:
    """The finished export's file, opened for reading from the media storage."""
    return default_storage.open(run.file, "rb")

"""Reads of the tenant's audit chain: its length, and the verifications run as tasks."""

from __future__ import annotations

from agentdocs.core.errors import NotFound
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.models import AuditChainHead, AuditVerification, Tenant


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

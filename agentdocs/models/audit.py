"""The head of each tenant's hash chain over its history rows."""

from __future__ import annotations

from django.db import models

from agentdocs.models.tenancy import Tenant


class AuditChainHead(models.Model):
    """The last link of a tenant's chain: how many rows it holds and the last row's
    ``chain_sha256``. Writers lock this row to append, so the chain follows commit
    order; the daily verification keeps its last finding here for the admins' banner."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="+")
    seq = models.BigIntegerField(default=0)
    chain_sha256 = models.CharField(max_length=64, blank=True, default="")
    verified_at = models.DateTimeField(null=True, blank=True)
    # The last verification's first broken link (`core.audit_chain.BrokenLink`), or None.
    broken_at = models.JSONField(null=True, blank=True, default=None)

    def __str__(self) -> str:
        return f"chain of tenant {self.tenant_id} at {self.seq}"

"""`{% audit_chain_banner %}`: on a tenant's pages, tell its admins that the daily
verification found the history chain broken (docs/evidence.md)."""

from __future__ import annotations

from typing import Any

from django import template

from agentdocs.permissions import Access
from agentdocs.selectors.audit import audit_chain_broken_at

register = template.Library()


@register.inclusion_tag("agentdocs/partials/audit_chain_banner.html", takes_context=True)
def audit_chain_banner(context: template.Context) -> dict[str, Any]:
    access = context.get("access")
    if not isinstance(access, Access) or not access.is_admin:
        return {"broken": None}
    return {"broken": audit_chain_broken_at(tenant_id=access.tenant.pk), "tenant": access.tenant}

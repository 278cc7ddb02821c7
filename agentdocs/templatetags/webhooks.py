"""The webhooks banner a tenant admin sees on the tenant page (`{% load webhooks %}`)."""

from __future__ import annotations

from typing import Any

from django import template

from agentdocs.permissions import Access
from agentdocs.selectors import webhooks as webhook_selectors

register = template.Library()


@register.inclusion_tag("agentdocs/partials/webhooks_banner.html")
def disabled_webhooks_banner(access: Access) -> dict[str, Any]:
    """Webhooks turned off by their failures, for tenant admins (one count query)."""
    if not access.is_admin:
        return {"count": 0}
    count = webhook_selectors.disabled_webhook_count(tenant=access.tenant)
    return {"count": count, "tenant": access.tenant}

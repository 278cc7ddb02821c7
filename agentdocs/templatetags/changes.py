"""Change review in any page (`{% load changes %}`): the open count for the navigation,
and whether a document is protected by `review.required`. One query each."""

from __future__ import annotations

from django import template

from agentdocs.models import Project, Tenant
from agentdocs.selectors import changes as change_selectors
from agentdocs.selectors import review as review_selectors

register = template.Library()


@register.simple_tag
def open_change_count(tenant: Tenant) -> int:
    """How many of the tenant's change requests wait for a review or a merge."""
    return change_selectors.open_count(tenant=tenant)


@register.simple_tag
def review_required(project: Project, path: str) -> bool:
    return review_selectors.review_required(project=project, path=path)

"""The activity page's links (`{% load activity %}`): the page that shows an event's
change, built where the URL conf is known (`agentdocs.links.event_page`)."""

from __future__ import annotations

from django import template

from agentdocs import links
from agentdocs.models import Event

register = template.Library()


@register.filter
def event_page(event: Event) -> str | None:
    return links.event_page(event)

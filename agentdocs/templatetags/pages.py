"""Small template filters for the pages (`{% load pages %}`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()


@register.filter
def ago(value: datetime | None) -> str:
    """ "just now", "5 minutes ago", "3 days ago": one unit is enough at a glance."""
    if value is None:
        return ""
    if timezone.now() - value < timedelta(minutes=1):
        return "just now"
    return f"{timesince(value, depth=1)} ago"

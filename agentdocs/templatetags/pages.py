"""Small template filters for the pages (`{% load pages %}`)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
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


_INLINE_CODE = re.compile(r"`([^`\n]+)`")


@register.filter
def inline_code(value: object) -> SafeString:
    """A message's `backticked` names as <code>, the rest escaped: the services write
    their sentences for the API, where backticks are the usual way to quote a name."""
    escaped = escape(str(value))
    return mark_safe(_INLINE_CODE.sub(r"<code>\1</code>", escaped))  # escaped above


@register.filter
def words(value: object) -> str:
    """An identifier as words for a reader: `label_moved` → "label moved"."""
    return str(value).replace("_", " ")

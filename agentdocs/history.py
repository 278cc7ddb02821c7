"""Copies the change type a service chose onto the history row it causes.

django-simple-history documents a `pre_create_historical_record` receiver as
the way to fill extra history columns; the services set ``_change_type`` on
the instance before saving.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.dispatch import receiver
from simple_history.signals import pre_create_historical_record

T = TypeVar("T")


def mark_change(instance: T, *, user: Any, reason: str, change_type: str) -> T:
    """Attach who, why and what kind of change to an instance about to be saved or
    deleted, for the history row that save or delete writes."""
    instance._history_user = user
    instance._change_reason = reason
    instance._change_type = change_type
    return instance


@receiver(pre_create_historical_record)
def _record_change_type(sender: Any, instance: Any, history_instance: Any, **kwargs: Any) -> None:
    change_type = getattr(instance, "_change_type", "")
    if change_type and hasattr(history_instance, "change_type"):
        history_instance.change_type = change_type

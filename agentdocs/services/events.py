"""Writing events: `emit` records one in the caller's transaction; `event_committed`
is sent for it once that transaction commits (never for a rolled-back change).

Receivers of `event_committed` (webhook delivery) get `event=<Event>`; they must
not raise, since the change they report has already happened.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.dispatch import Signal

from agentdocs.models import Project, Tenant
from agentdocs.models.events import Event

event_committed = Signal()


def emit(
    *,
    type: str,
    tenant: Tenant,
    project: Project | None,
    actor: Any,
    target: str,
    reason: str = "",
    version: int | None = None,
    data: dict[str, Any] | None = None,
) -> Event:
    """Record that something changed; `type` is "<kind>.<action>" (`document.updated`)."""
    kind, _, action = type.partition(".")
    user = actor if getattr(actor, "pk", None) is not None else None
    event = Event.objects.create(
        tenant=tenant,
        project=project,
        type=type,
        kind=kind,
        action=action,
        target=target[:500],
        actor=user,
        actor_name=user.get_username() if user is not None else "",
        reason=reason,
        version=version,
        data=data or {},
    )
    transaction.on_commit(lambda: event_committed.send(sender=Event, event=event))
    return event

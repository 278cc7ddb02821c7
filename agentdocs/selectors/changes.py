"""Reads of change requests, scoped to the tenant or project the caller may read."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.core.numbers import positive_int
from agentdocs.models import ChangeRequest, ChangeState, Project, Tenant
from agentdocs.models.changes import LIVE_STATES


def validate_state(state: object, *, field: str = "state") -> str | None:
    """A `?state=` filter: one of the states, or empty for all."""
    if state in (None, ""):
        return None
    if state not in ChangeState.values:
        raise InvalidInput(f"`state` is one of {', '.join(ChangeState.values)}.", field=field)
    return str(state)


def _listed(changes: QuerySet[ChangeRequest], state: str | None) -> QuerySet[ChangeRequest]:
    if state is not None:
        changes = changes.filter(state=state)
    return (
        changes.select_related("tenant", "project", "proposer", "merged_by")
        .defer("body")
        .order_by("-id")
    )


def change_list(*, project: Project, state: str | None = None) -> QuerySet[ChangeRequest]:
    return _listed(ChangeRequest.objects.filter(project=project), state)


def change_list_for_tenant(*, tenant: Tenant, state: str | None = None) -> QuerySet[ChangeRequest]:
    return _listed(ChangeRequest.objects.filter(tenant=tenant), state)


def open_count(*, tenant: Tenant) -> int:
    """How many of the tenant's change requests wait for a review or a merge."""
    return ChangeRequest.objects.filter(tenant=tenant, state__in=LIVE_STATES).count()


def state_counts(*, tenant: Tenant) -> dict[str, int]:
    """How many of the tenant's change requests are in each state, in one query."""
    counts = dict.fromkeys(ChangeState.values, 0)
    rows = (
        ChangeRequest.objects.filter(tenant=tenant)
        .order_by()
        .values_list("state")
        .annotate(count=Count("id"))
    )
    counts.update({state: count for state, count in rows})
    return counts


def change_get(*, project: Project, change_id: object) -> ChangeRequest:
    """The project's change request ``change_id``; NotFound for any other id."""
    number = change_id if isinstance(change_id, int) else positive_int(str(change_id))
    change = (
        ChangeRequest.objects.filter(project=project, pk=number)
        .select_related("tenant", "project", "proposer", "merged_by")
        .first()
        if number
        else None
    )
    if change is None:
        raise NotFound(f"No change request #{change_id} in this project.", field="change_id")
    return change

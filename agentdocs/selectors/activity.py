"""The tenant's activity feed: its events, newest first, as far as the reader may see.

Every member reads the tenant's documents, settings, recipes, provider map, binding
records and change requests, so they see those events; memberships, webhooks and
tokens are for tenant admins, and so are their events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from agentdocs.core.errors import InvalidInput
from agentdocs.core.moments import FORMS, parse_moment
from agentdocs.models import Event, Project, Tenant
from agentdocs.models.events import ADMIN_ONLY_KINDS, KINDS


@dataclass(frozen=True, kw_only=True)
class ActivityFilter:
    """What the feed is narrowed to; None (or "") is no narrowing."""

    project: str | None = None  # a project's slug
    actor: str | None = None  # a username
    kind: str | None = None
    since: datetime | None = None  # inclusive
    until: datetime | None = None  # exclusive


FILTERS = ("project", "actor", "kind", "since", "until")


def _moment(value: str, *, field: str) -> datetime:
    moment = parse_moment(value)
    if moment is None:
        raise InvalidInput(f"`{field}` must be {FORMS}.", field=field)
    return moment


def activity_filter(params: Mapping[str, str]) -> ActivityFilter:
    """The feed's filters from a query string; InvalidInput naming an unreadable one."""
    values = {name: (params.get(name) or "").strip() for name in FILTERS}
    return ActivityFilter(
        project=values["project"] or None,
        actor=values["actor"] or None,
        kind=values["kind"] or None,
        since=_moment(values["since"], field="since") if values["since"] else None,
        until=_moment(values["until"], field="until") if values["until"] else None,
    )


def visible_kinds(*, admin: bool) -> tuple[str, ...]:
    """The event kinds a reader sees: all for a tenant admin, else all but the admin-only."""
    if admin:
        return KINDS
    return tuple(kind for kind in KINDS if kind not in ADMIN_ONLY_KINDS)


def activity_list(*, tenant: Tenant, admin: bool, filters: ActivityFilter) -> QuerySet[Event]:
    """The events of ``tenant`` a member sees (``admin``: a tenant admin, who sees the
    admin-only kinds too), narrowed by ``filters``; InvalidInput naming the filter for an
    unknown kind or project, or a `since` after `until`."""
    events = Event.objects.filter(tenant=tenant)
    if not admin:
        events = events.exclude(kind__in=ADMIN_ONLY_KINDS)
    if filters.kind:
        if filters.kind not in KINDS:
            raise InvalidInput(
                f"Unknown kind {filters.kind!r}; one of {', '.join(KINDS)}.", field="kind"
            )
        events = events.filter(kind=filters.kind)
    if filters.project:
        project_id = (
            Project.objects.filter(tenant=tenant, slug=filters.project)
            .values_list("pk", flat=True)
            .first()
        )
        if project_id is None:
            raise InvalidInput(f"This tenant has no project {filters.project!r}.", field="project")
        events = events.filter(project_id=project_id)
    if filters.actor:
        events = events.filter(actor_name=filters.actor)
    if filters.since is not None and filters.until is not None and filters.since > filters.until:
        raise InvalidInput("`since` is after `until`.", field="since")
    if filters.since is not None:
        events = events.filter(created_at__gte=filters.since)
    if filters.until is not None:
        events = events.filter(created_at__lt=filters.until)
    # The tenant and project slugs: the links of each event (`agentdocs.links.event_page`).
    return events.select_related("tenant", "project").order_by("-created_at", "-id")

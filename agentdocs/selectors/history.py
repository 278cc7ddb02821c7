"""Reads of the history of settings, recipes, memberships and provider map entries.

Each history is every history row of one thing, by its name (a setting's key at
its scope, a recipe's name, a member's username, a provider's name), across
deletions and re-creations. Every row carries the values of the row before it
(a window function over the thing's rows), so a page of the history costs the
same two queries (a count and the page) however long the history is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import F, QuerySet, Window
from django.db.models.functions import Lag, RowNumber

from agentdocs.core.diffs import Diff
from agentdocs.core.errors import NotFound
from agentdocs.core.history import FieldChange, Snapshot, field_changes, snapshot_diff
from agentdocs.models import Membership, Project, ProviderMapping, Recipe, Setting, Tenant

# The values each kind of history shows, in the order it shows them.
SETTING_FIELDS = ("value", "enforced")
RECIPE_FIELDS = ("params", "profiles")
MEMBERSHIP_FIELDS = ("role",)
PROVIDER_FIELDS = ("project_slug", "path")

# simple-history's history_type: what made the row.
_DELETED = "-"
_ACTIONS = {"+": "created", "~": "updated", "-": "deleted"}


@dataclass(frozen=True)
class HistoryEntry:
    """One change of a tracked thing: its number in the thing's history (1 = oldest),
    when, who, why, and its values before and after (None: it did not exist)."""

    version: int
    at: datetime
    actor: str | None
    reason: str
    action: str  # "created", "updated" or "deleted"
    before: Snapshot | None
    after: Snapshot | None
    changes: list[FieldChange] = field(default_factory=list)
    diff: Diff | None = None  # recipes: a line diff of the JSON


def _with_previous(rows: QuerySet[Any], fields: tuple[str, ...]) -> QuerySet[Any]:
    """The rows newest first, each with its number and the values of the row before it."""
    order = [F("history_date").asc(), F("history_id").asc()]
    previous = {f"previous_{name}": Window(Lag(name), order_by=order) for name in fields}
    return (
        rows.select_related("history_user")
        .annotate(
            number=Window(RowNumber(), order_by=order),
            previous_history_type=Window(Lag("history_type"), order_by=order),
            **previous,
        )
        .order_by("-history_date", "-history_id")
    )


def setting_history(*, tenant: Tenant, project: Project | None, key: str) -> QuerySet[Any]:
    """The history of the setting ``key`` of the tenant (``project`` None) or a project;
    NotFound when the key was never set there."""
    rows = Setting.history.filter(tenant_id=tenant.pk, key=key)
    rows = (
        rows.filter(project__isnull=True) if project is None else rows.filter(project_id=project.pk)
    )
    if not rows.exists():
        raise NotFound(f"The setting {key!r} was never set here.", field="key")
    return _with_previous(rows, SETTING_FIELDS)


def recipe_history(*, tenant: Tenant, name: str) -> QuerySet[Any]:
    rows = Recipe.history.filter(tenant_id=tenant.pk, name=name)
    if not rows.exists():
        raise NotFound(f"This tenant never had a recipe {name!r}.", field="name")
    return _with_previous(rows, RECIPE_FIELDS)


def membership_history(*, tenant: Tenant, username: str) -> QuerySet[Any]:
    user = get_user_model().objects.filter(username=username).first()
    rows = Membership.history.filter(tenant_id=tenant.pk, user_id=user.pk if user else None)
    if user is None or not rows.exists():
        raise NotFound(f"{username!r} was never a member of this tenant.", field="username")
    return _with_previous(rows, MEMBERSHIP_FIELDS)


def provider_history(*, tenant: Tenant, name: str) -> QuerySet[Any]:
    rows = ProviderMapping.history.filter(tenant_id=tenant.pk, name=name).annotate(
        project_slug=F("project__slug")
    )
    if not rows.exists():
        raise NotFound(f"The provider map never had the name {name!r}.", field="name")
    return _with_previous(rows, PROVIDER_FIELDS)


def _snapshot(row: Any, fields: tuple[str, ...], prefix: str = "") -> dict[str, object]:
    return {name.removesuffix("_slug"): getattr(row, prefix + name) for name in fields}


def history_entries(
    rows: Any, fields: tuple[str, ...], *, with_diff: bool = False
) -> list[HistoryEntry]:
    """The entries of a page of rows from one of the histories above."""
    entries = []
    for row in rows:
        deleted = row.history_type == _DELETED
        existed = row.number > 1 and row.previous_history_type != _DELETED
        if deleted:
            # A deletion's row holds the values it deleted.
            before: Snapshot | None = _snapshot(row, fields)
            after: Snapshot | None = None
        else:
            before = _snapshot(row, fields, "previous_") if existed else None
            after = _snapshot(row, fields)
        user = row.history_user
        entries.append(
            HistoryEntry(
                version=row.number,
                at=row.history_date,
                actor=user.get_username() if user is not None else None,
                reason=row.history_change_reason or "",
                action=_ACTIONS.get(row.history_type, "updated"),
                before=before,
                after=after,
                changes=field_changes(before, after),
                diff=snapshot_diff(before, after) if with_diff else None,
            )
        )
    return entries

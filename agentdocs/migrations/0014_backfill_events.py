"""Events for the changes made before events existed, so the activity feed of an
upgraded server starts with its history rather than empty.

Each history row of a document, setting, recipe, membership and provider map
entry, and each binding record, becomes the event its service would have emitted
then (with the same data shape, less a restore's `restored_from`, which history
does not keep), dated as the change. Only changes made a second or more before the
first event already recorded are backfilled (a service stamps its event just after
its history row), so running it after events started repeats none.
No `event_committed` signal is sent: webhooks deliver new changes only.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from django.db import migrations

BATCH = 2000

DOCUMENT_TYPES = {
    "created": "document.created",
    "deleted": "document.deleted",
    "reverted": "document.restored",
    "restored": "document.restored",
}
ACTIONS = {"+": "created", "~": "updated", "-": "deleted"}


def _event_id() -> str:
    return "evt_" + secrets.token_urlsafe(18)


def _rows(model: Any, cutoff: Any, *order: str) -> Iterator[Any]:
    rows = model.objects.all()
    if cutoff is not None:
        rows = rows.filter(history_date__lt=cutoff)
    return rows.order_by(*order, "history_date", "history_id").iterator(chunk_size=BATCH)


def _username(users: dict[int, str], user_id: int | None) -> str:
    return users.get(user_id, "") if user_id is not None else ""


def backfill(apps: Any, schema_editor: Any) -> None:
    Event = apps.get_model("agentdocs", "Event")
    Project = apps.get_model("agentdocs", "Project")
    Tenant = apps.get_model("agentdocs", "Tenant")
    User = apps.get_model("auth", "User")
    first = Event.objects.order_by("created_at").values_list("created_at", flat=True).first()
    if first is not None:
        first -= timedelta(seconds=1)

    tenants = dict(Tenant.objects.values_list("pk", "slug"))
    projects = {
        pk: (tenant_id, slug)
        for pk, tenant_id, slug in Project.objects.values_list("pk", "tenant_id", "slug")
    }
    users = dict(User.objects.values_list("pk", "username"))
    batch: list[Any] = []

    def add(
        *,
        tenant_id: int,
        project_id: int | None,
        type: str,
        action: str,
        target: str,
        user_id: int | None,
        reason: str,
        at: Any,
        data: dict[str, Any],
        version: int | None = None,
    ) -> None:
        batch.append(
            Event(
                id=_event_id(),
                tenant_id=tenant_id,
                project_id=project_id,
                type=type,
                kind=type.partition(".")[0],
                action=action,
                target=target[:500],
                actor_id=user_id if user_id in users else None,
                actor_name=_username(users, user_id),
                reason=reason,
                version=version,
                data=data,
                created_at=at,
            )
        )
        if len(batch) >= BATCH:
            Event.objects.bulk_create(batch)
            batch.clear()

    # Documents: one event per version.
    for row in _rows(apps.get_model("agentdocs", "HistoricalDocument"), first):
        if row.project_id not in projects:
            continue
        tenant_id, _ = projects[row.project_id]
        type = DOCUMENT_TYPES.get(row.change_type) or (
            "document.created" if row.history_type == "+" else "document.updated"
        )
        reason = row.history_change_reason or ""
        add(
            tenant_id=tenant_id,
            project_id=row.project_id,
            type=type,
            action=type.partition(".")[2],
            target=row.path,
            user_id=row.history_user_id,
            reason=reason,
            at=row.history_date,
            version=row.version,
            data={
                "path": row.path,
                "version": row.version,
                "sha256": row.sha256,
                "actor": _username(users, row.history_user_id),
                "reason": reason,
            },
        )

    # Settings, recipes, memberships and providers: each row compared with the one
    # before it of the same thing (rows are ordered by thing, then date).
    previous: dict[tuple[Any, ...], Any] = {}

    def before(key: tuple[Any, ...], row: Any) -> Any:
        last = previous.get(key)
        previous[key] = row
        return None if last is None or last.history_type == "-" else last

    for row in _rows(
        apps.get_model("agentdocs", "HistoricalSetting"), first, "tenant_id", "project_id", "key"
    ):
        if row.tenant_id not in tenants:
            continue
        last = before(("setting", row.tenant_id, row.project_id, row.key), row)
        action = ACTIONS.get(row.history_type, "updated")
        deleted = action == "deleted"
        project_slug = projects[row.project_id][1] if row.project_id in projects else None
        reason = row.history_change_reason or ""
        add(
            tenant_id=row.tenant_id,
            project_id=row.project_id if row.project_id in projects else None,
            type="setting.changed",
            action=action,
            target=row.key,
            user_id=row.history_user_id,
            reason=reason,
            at=row.history_date,
            data={
                "key": row.key,
                "scope": "tenant" if row.project_id is None else "project",
                "project": project_slug,
                "action": action,
                "value": None if deleted else row.value,
                "enforced": None if deleted else row.enforced,
                "previous": (
                    {"value": row.value, "enforced": row.enforced}
                    if deleted
                    else ({"value": last.value, "enforced": last.enforced} if last else None)
                ),
                "actor": _username(users, row.history_user_id),
                "reason": reason,
            },
        )

    for row in _rows(apps.get_model("agentdocs", "HistoricalRecipe"), first, "tenant_id", "name"):
        if row.tenant_id not in tenants:
            continue
        last = before(("recipe", row.tenant_id, row.name), row)
        action = ACTIONS.get(row.history_type, "updated")
        deleted = action == "deleted"
        reason = row.history_change_reason or ""
        add(
            tenant_id=row.tenant_id,
            project_id=None,
            type="recipe.changed",
            action=action,
            target=row.name,
            user_id=row.history_user_id,
            reason=reason,
            at=row.history_date,
            data={
                "name": row.name,
                "action": action,
                "params": None if deleted else row.params,
                "profiles": None if deleted else row.profiles,
                "previous": (
                    {"params": row.params, "profiles": row.profiles}
                    if deleted
                    else ({"params": last.params, "profiles": last.profiles} if last else None)
                ),
                "actor": _username(users, row.history_user_id),
                "reason": reason,
            },
        )

    for row in _rows(
        apps.get_model("agentdocs", "HistoricalMembership"), first, "tenant_id", "user_id"
    ):
        if row.tenant_id not in tenants or row.user_id not in users:
            continue
        last = before(("membership", row.tenant_id, row.user_id), row)
        action = ACTIONS.get(row.history_type, "updated")
        username = users[row.user_id]
        reason = row.history_change_reason or ""
        add(
            tenant_id=row.tenant_id,
            project_id=None,
            type="membership.changed",
            action=action,
            target=username,
            user_id=row.history_user_id,
            reason=reason,
            at=row.history_date,
            data={
                "username": username,
                "action": action,
                "role": None if action == "deleted" else row.role,
                "previous_role": row.role if action == "deleted" else (last.role if last else None),
                "actor": _username(users, row.history_user_id),
                "reason": reason,
            },
        )

    for row in _rows(
        apps.get_model("agentdocs", "HistoricalProviderMapping"), first, "tenant_id", "name"
    ):
        if row.tenant_id not in tenants:
            continue
        last = before(("provider", row.tenant_id, row.name), row)
        action = ACTIONS.get(row.history_type, "updated")
        deleted = action == "deleted"
        here = projects.get(row.project_id, (None, ""))[1]
        there = projects.get(last.project_id, (None, ""))[1] if last else ""
        reason = row.history_change_reason or ""
        add(
            tenant_id=row.tenant_id,
            project_id=None,
            type="provider.changed",
            action=action,
            target=row.name,
            user_id=row.history_user_id,
            reason=reason,
            at=row.history_date,
            data={
                "name": row.name,
                "action": action,
                "project": None if deleted else here,
                "path": None if deleted else row.path,
                "previous": (
                    {"project": here, "path": row.path}
                    if deleted
                    else ({"project": there, "path": last.path} if last else None)
                ),
                "actor": _username(users, row.history_user_id),
                "reason": reason,
            },
        )

    records = apps.get_model("agentdocs", "BindingRecord").objects.order_by("created_at", "pk")
    if first is not None:
        records = records.filter(created_at__lt=first)
    fields = (
        "pk",
        "tenant_id",
        "project_id",
        "process",
        "problem_count",
        "created_by_id",
        "created_at",
    )
    for pk, tenant_id, project_id, process, problems, user_id, at in records.values_list(
        *fields
    ).iterator(chunk_size=BATCH):
        add(
            tenant_id=tenant_id,
            project_id=project_id,
            type="binding.created",
            action="created",
            target=str(pk),
            user_id=user_id,
            reason="",
            at=at,
            data={
                "id": pk,
                "process": process,
                "problem_count": problems,
                "actor": _username(users, user_id),
            },
        )
    if batch:
        Event.objects.bulk_create(batch)


class Migration(migrations.Migration):
    dependencies = [("agentdocs", "0013_search_index")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True)]

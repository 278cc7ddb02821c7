"""The backfill makes, from the history kept before events existed, the events the
services would have emitted: the same types, targets, actors, reasons and data."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from agentdocs.models import Event
from agentdocs.services import bindings as binding_service
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.services import tenancy as tenant_service

backfill = importlib.import_module("agentdocs.migrations.0014_backfill_events").backfill

pytestmark = pytest.mark.django_db


def _summary() -> list[tuple]:
    rows = []
    for event in Event.objects.order_by("created_at", "type", "target"):
        data = {key: value for key, value in event.data.items() if key != "restored_from"}
        rows.append(
            (
                event.tenant_id,
                event.project_id,
                event.type,
                event.action,
                event.target,
                event.actor_name,
                event.reason,
                event.version,
                sorted(data.items(), key=lambda item: item[0]).__repr__(),
            )
        )
    return rows


def test_the_backfill_recreates_the_events_of_every_change(tenant, project, admin, writer):
    doc = document_service.document_create(
        project=project, path="agent.md", body="1\n", user=writer, reason="a"
    )
    doc = document_service.document_write(
        document=doc, body="2\n", base_version=1, user=writer
    ).document
    doc = document_service.document_delete(document=doc, base_version=2, user=writer)
    document_service.document_revert(document=doc, version=1, user=writer, reason="back")
    for value in ("x", "y"):
        policy_service.setting_set(
            tenant=tenant, project=project, key="memory.k", value=value, user=admin, reason=value
        )
    policy_service.setting_delete(tenant=tenant, project=project, key="memory.k", user=admin)
    recipe = policy_service.recipe_create(
        tenant=tenant, name="r", params={}, profiles={}, user=admin
    )
    policy_service.recipe_update(
        recipe=recipe, params={"contextEnabled": False}, profiles={}, user=admin
    )
    policy_service.recipe_delete(recipe=recipe, user=admin)
    tenant_service.membership_set(tenant=tenant, username="carol", role="writer", actor=admin)
    tenant_service.membership_remove(tenant=tenant, username="carol", actor=admin)
    for path in ("a.md", "b.md"):
        provider_service.provider_set(
            tenant=tenant, name="ws/a", project_slug="web", path=path, user=admin
        )
    provider_service.provider_delete(tenant=tenant, name="ws/a", user=admin)
    binding_service.binding_create(
        tenant=tenant, project=project, user=writer, process="ci", manifest={"local": ["x.md"]}
    )
    emitted = _summary()
    # The live events are stamped a moment after their history rows: align them.
    Event.objects.all().delete()

    backfill(apps, None)

    assert len(_summary()) == len(emitted)
    assert [row[2:] for row in _summary()] == [row[2:] for row in emitted]


def test_changes_after_the_first_event_are_not_backfilled_again(tenant, admin):
    before = Event.objects.count()
    backfill(apps, None)
    assert Event.objects.count() == before

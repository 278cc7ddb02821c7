"""Events: one row per change of anything a tenant holds, written in the same
transaction as the change itself.

An event is what the tenant's activity feed lists and what its webhooks deliver.
Services write them through `agentdocs.services.events.emit`; once the change's
transaction commits, `event_committed` is sent for each, and webhook delivery is
enqueued from there. `id` is the event id receivers deduplicate on (`evt_…`).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from agentdocs.models.tenancy import Project, Tenant

# The kinds of change events name (the activity feed's `kind` filter).
KINDS = (
    "document",
    "skill",
    "setting",
    "recipe",
    "membership",
    "provider",
    "webhook",
    "binding",
    "repository",
    "change",
    "outcome",
    "audit",
)
# What only tenant admins see in the activity feed, as they alone read these things
# (the members list, webhooks, the tenant's API tokens, should tokens ever emit).
ADMIN_ONLY_KINDS = ("membership", "webhook", "token", "audit")


def new_event_id() -> str:
    return "evt_" + secrets.token_urlsafe(18)


class Event(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=new_event_id, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="events")
    # None for tenant-wide changes: tenant settings, recipes, memberships, providers, webhooks.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, null=True, blank=True, related_name="events"
    )
    # The webhook event type, e.g. "document.updated", "setting.changed".
    type = models.CharField(max_length=40)
    # What the activity feed filters on: kind "document", "setting", "recipe", "membership",
    # "provider", "webhook", "binding", "change"; action "created", "updated", "deleted", ...
    kind = models.CharField(max_length=20)
    action = models.CharField(max_length=20)
    # What changed, as people name it: a document path, a setting key, a recipe name,
    # a username, a provider name, a webhook's URL, a binding record's or change's id.
    target = models.CharField(max_length=500)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    # Kept when the user is gone, so the feed still says who.
    actor_name = models.CharField(max_length=150, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    version = models.PositiveIntegerField(null=True, blank=True)
    # The webhook payload's `data` object.
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        # The feed's order, `-created_at, -id`, whole: events written together share a
        # timestamp, and an index without `-id` left every page to sort all of them.
        indexes = [
            models.Index(fields=["tenant", "-created_at", "-id"], name="event_tenant_feed"),
            models.Index(
                fields=["tenant", "project", "-created_at", "-id"], name="event_project_feed"
            ),
            models.Index(fields=["tenant", "kind", "-created_at", "-id"], name="event_kind_feed"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.target} ({self.id})"

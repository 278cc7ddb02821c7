"""Webhooks: tenant admins subscribe URLs to events (create, update, delete, and the
turning off of a webhook that keeps failing); what is sent to them, and how, is
`deliveries`'.
"""

from __future__ import annotations

import base64
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agentdocs.core import webhooks as core
from agentdocs.core.errors import AgentdocsError, InvalidInput, SecretDetected, TooManyWebhooks
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import Tenant, Webhook
from agentdocs.models.history import ChangeType, mark_change
from agentdocs.services import events as event_service

logger = logging.getLogger(__name__)

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


class WebhookDisabled(AgentdocsError):
    code = "webhook_disabled"
    status = 409


@dataclass(frozen=True)
class NewSecret:
    webhook: Webhook
    secret: str | None


def new_secret() -> str:
    """`whsec_` and the base64 of 32 random bytes, as Standard Webhooks expects."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def allow_private_addresses() -> bool:
    return bool(settings.AGENTDOCS_WEBHOOK_ALLOW_PRIVATE)


def _validate_url(url: object) -> str:
    return core.validate_url(url, allow_private=allow_private_addresses())


def _validate_projects(tenant: Tenant, projects: object) -> list[str] | None:
    if projects is None:
        return None
    if not isinstance(projects, list) or not all(isinstance(slug, str) for slug in projects):
        raise InvalidInput(
            "`projects` must be null (every project) or a list of project slugs.",
            field="projects",
        )
    if len(projects) > core.MAX_PROJECTS:
        raise InvalidInput(
            f"`projects` may name at most {core.MAX_PROJECTS} projects.", field="projects"
        )
    wanted = sorted(set(projects))
    known = set(tenant.projects.filter(slug__in=wanted).values_list("slug", flat=True))
    unknown = [slug for slug in wanted if slug not in known]
    if unknown:
        raise InvalidInput(f"No project {unknown[0]!r} in this tenant.", field="projects")
    return wanted


def _validate_description(description: object) -> str:
    if not isinstance(description, str):
        raise InvalidInput("`description` must be a string.", field="description")
    if len(description) > core.MAX_DESCRIPTION_LENGTH:
        raise InvalidInput(
            f"The description is longer than {core.MAX_DESCRIPTION_LENGTH} characters.",
            field="description",
        )
    refuse_hidden_or_secret(description, field="description", what="The description")
    return description


def _describe(webhook: Webhook) -> dict[str, Any]:
    """A webhook as its events record it: never the secret, nor the URL's path."""
    return {
        "webhook": webhook.pk,
        "url": core.url_shown(webhook.url),
        "events": webhook.events,
        "projects": webhook.projects,
        "active": webhook.active,
    }


def _emit(action: str, webhook: Webhook, actor: User | None, reason: str, **data: Any) -> None:
    event_service.emit(
        type=f"webhook.{action}",
        tenant=webhook.tenant,
        project=None,
        actor=actor,
        target=core.url_shown(webhook.url),
        reason=reason,
        data={**_describe(webhook), **data},
    )


def webhook_create(
    *,
    tenant: Tenant,
    url: str,
    events: list[str],
    projects: list[str] | None,
    description: str = "",
    user: User,
) -> NewSecret:
    """A new active webhook; its secret is in the answer, and nowhere else after it.
    Refused past `AGENTDOCS_MAX_WEBHOOKS_PER_TENANT` webhooks (turned off ones count:
    they can be turned on again)."""
    webhook = Webhook(
        tenant=tenant,
        url=_validate_url(url),
        events=core.validate_events(events),
        projects=_validate_projects(tenant, projects),
        description=_validate_description(description),
        secret=new_secret(),
        created_by=user,
    )
    limit = settings.AGENTDOCS_MAX_WEBHOOKS_PER_TENANT
    with transaction.atomic():
        # The tenant's row is the lock two concurrent creations queue on, so neither
        # counts before the other has saved.
        Tenant.objects.select_for_update().filter(pk=tenant.pk).values_list("pk").first()
        if Webhook.objects.filter(tenant_id=tenant.pk).count() >= limit:
            raise TooManyWebhooks(
                f"The tenant has the most webhooks it may have ({limit}, "
                "AGENTDOCS_MAX_WEBHOOKS_PER_TENANT); delete one to make another.",
                limit=limit,
            )
        mark_change(webhook, user=user, reason="Webhook created", change_type=ChangeType.CREATED)
        webhook.save()
        _emit("created", webhook, user, "Webhook created")
    return NewSecret(webhook=webhook, secret=webhook.secret)


_UNSET: Any = object()


def webhook_update(
    *,
    webhook: Webhook,
    user: User,
    url: str = _UNSET,
    events: list[str] = _UNSET,
    projects: list[str] | None = _UNSET,
    description: str = _UNSET,
    active: bool = _UNSET,
    rotate_secret: bool = False,
) -> NewSecret:
    """Change what is given. Turning a webhook on again forgets its failures; rotating
    its secret answers the new one, once."""
    changed: list[str] = []
    if url is not _UNSET:
        webhook.url = _validate_url(url)
        changed.append("url")
    if events is not _UNSET:
        webhook.events = core.validate_events(events)
        changed.append("events")
    if projects is not _UNSET:
        webhook.projects = _validate_projects(webhook.tenant, projects)
        changed.append("projects")
    if description is not _UNSET:
        webhook.description = _validate_description(description)
        changed.append("description")
    if active is not _UNSET and active != webhook.active:
        webhook.active = active
        changed.append("active")
        if active:
            webhook.disabled_at = None
            webhook.disabled_reason = ""
            webhook.failing_since = None
        else:
            webhook.disabled_at = timezone.now()
            webhook.disabled_reason = f"Turned off by {user.get_username()}."
    secret = None
    if rotate_secret:
        secret = webhook.secret = new_secret()
        changed.append("secret")
    if not changed:
        return NewSecret(webhook=webhook, secret=None)
    webhook.updated_at = timezone.now()
    reason = _update_reason(changed)
    with transaction.atomic():
        mark_change(webhook, user=user, reason=reason, change_type=ChangeType.UPDATED)
        webhook.save()
        _emit("updated", webhook, user, reason, changed=changed)
    return NewSecret(webhook=webhook, secret=secret)


def _update_reason(changed: list[str]) -> str:
    """What an update did, as its history row and event say it: the fields, and
    "secret rotated" (never the secret) when it made a new one."""
    fields = [name for name in changed if name != "secret"]
    parts = [f"Changed {', '.join(fields)}"] if fields else []
    if "secret" in changed:
        parts.append("secret rotated" if parts else "Secret rotated")
    return "; ".join(parts)


def webhook_delete(*, webhook: Webhook, user: User) -> None:
    """Delete a webhook and its delivery log; deliveries on their way are dropped."""
    with transaction.atomic():
        _emit("deleted", webhook, user, "Webhook deleted")
        mark_change(webhook, user=user, reason="Webhook deleted", change_type=ChangeType.DELETED)
        webhook.delete()


# Deliveries -------------------------------------------------------------------------


def webhook_disable(*, webhook: Webhook, reason: str, now: datetime) -> None:
    """Turn off a webhook that keeps failing (the deliveries decide when), saying why: a
    history row of no writer (the server did it) with the reason. Nothing when it is off."""
    with transaction.atomic():
        locked = Webhook.objects.select_for_update().filter(pk=webhook.pk, active=True).first()
        if locked is None:
            return
        locked.active = webhook.active = False
        locked.disabled_at = webhook.disabled_at = now
        locked.disabled_reason = webhook.disabled_reason = reason[:500]
        locked.updated_at = webhook.updated_at = now
        locked.tenant = webhook.tenant
        try:
            mark_change(locked, user=None, reason=reason[:500], change_type=ChangeType.UPDATED)
        except SecretDetected:
            # The receiver's error is in the reason; members read reasons, so not a secret.
            reason = "Deliveries kept failing; the last error looked like a secret: not shown."
            locked.disabled_reason = webhook.disabled_reason = reason
            mark_change(locked, user=None, reason=reason, change_type=ChangeType.UPDATED)
        # Only what turning it off changes: `failing_since` is the deliveries' to keep.
        locked.save(update_fields=["active", "disabled_at", "disabled_reason", "updated_at"])
        _emit("updated", webhook, None, reason, changed=["active"], disabled_reason=reason)
    logger.warning("Webhook %s (%s) disabled: %s", webhook.pk, core.url_shown(webhook.url), reason)

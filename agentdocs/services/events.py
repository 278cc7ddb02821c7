"""Writing events: `emit` records one in the caller's transaction; `event_committed`
is sent for it once that transaction commits (never for a rolled-back change).

Receivers of `event_committed` (webhook delivery) get `event=<Event>`; they must
not raise, since the change they report has already happened.

`Event.data` is the webhook payload's `data` object without its links, so its shape
per event type is declared here (the `…EventData` TypedDicts) and every service builds
it through the helpers below. It holds ids, never URLs: the links (`page` and `api`, the
activity feed's `url`) are added where the URL conf is known, when the event is
serialized (`agentdocs.links.event_data`, `event_page`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from django.contrib.auth.models import User
from django.db import transaction
from django.dispatch import Signal

from agentdocs.models import Project, Tenant
from agentdocs.models.events import Event

event_committed = Signal()

# The event types services emit, named `<kind>.<action>` (the kinds the activity feed
# filters on are `agentdocs.models.events.KINDS`). The `change.*` events of change
# requests and `webhook.*` ones are emitted by those features.
DOCUMENT_CREATED = "document.created"
DOCUMENT_UPDATED = "document.updated"
DOCUMENT_DELETED = "document.deleted"
DOCUMENT_RESTORED = "document.restored"
SETTING_CHANGED = "setting.changed"
RECIPE_CHANGED = "recipe.changed"
MEMBERSHIP_CHANGED = "membership.changed"
PROVIDER_CHANGED = "provider.changed"
SKILL_CHANGED = "skill.changed"
BINDING_CREATED = "binding.created"
AUDIT_CHAIN_BROKEN = "audit.chain_broken"
REPOSITORY_STATE_CHANGED = "repository.state_changed"
OUTCOME_REPORTED = "outcome.reported"
CHANGE_EVALS_ATTACHED = "change.evals_attached"


class DocumentEventData(TypedDict):
    """`document.created`, `document.updated`, `document.deleted`, `document.restored`."""

    path: str
    version: int
    sha256: str
    actor: str
    reason: str
    # `document.restored` only: the version whose text came back.
    restored_from: NotRequired[int]


class LabelEventData(TypedDict):
    """`document.label_moved` and `document.label_removed` (``version`` null): the
    label of the document at ``path``, and the version it pointed at before (null
    when it is new)."""

    path: str
    label: str
    version: int | None
    previous_version: int | None
    actor: str
    reason: str


class SettingValue(TypedDict):
    value: str
    enforced: bool


class SettingEventData(TypedDict):
    """`setting.changed`; `value` and `enforced` are null when the setting was deleted,
    `previous` null when it was created."""

    key: str
    scope: str  # "tenant" or "project"
    project: str | None  # the project's slug for a project setting
    action: str  # "created", "updated" or "deleted"
    value: str | None
    enforced: bool | None
    previous: SettingValue | None
    actor: str
    reason: str


class RecipeValue(TypedDict):
    params: dict[str, Any]
    profiles: dict[str, Any]


class RecipeEventData(TypedDict):
    """`recipe.changed`; `params` and `profiles` are null when it was deleted."""

    name: str
    action: str
    params: dict[str, Any] | None
    profiles: dict[str, Any] | None
    previous: RecipeValue | None
    actor: str
    reason: str


class MembershipEventData(TypedDict):
    """`membership.changed`; `role` is null when the member was removed,
    `previous_role` null when they were added."""

    username: str
    action: str
    role: str | None
    previous_role: str | None
    actor: str
    reason: str


class ProviderTarget(TypedDict):
    project: str
    path: str


class ProviderEventData(TypedDict):
    """`provider.changed`; `project` and `path` are null when the name was removed."""

    name: str
    action: str
    project: str | None
    path: str | None
    previous: ProviderTarget | None
    actor: str
    reason: str


class SkillEventData(TypedDict):
    """`skill.changed` (activity only, no webhook yet): a new version of a skill's
    bundle; ``action`` is its change type (created, written, deleted, reverted,
    restored); ``review_bypassed``: a tenant admin wrote the skill `review.required`
    protects without a change request (`bypass_review`)."""

    name: str
    action: str
    version: int
    sha256: str
    files: int
    actor: str
    reason: str
    review_bypassed: bool


class SkillLabelEventData(TypedDict):
    """`skill.changed` whose ``action`` is `label_moved` or `label_removed`: the label
    ``label`` of the skill ``name`` now points at ``version`` (None: removed)."""

    name: str
    action: str
    label: str
    version: int | None
    previous_version: int | None
    actor: str
    reason: str


class BindingEventData(TypedDict):
    """`binding.created`."""

    id: int
    process: str
    problem_count: int
    actor: str


class ReportedOutcome(TypedDict):
    id: int
    name: str
    value: float | bool
    unit: str
    supersedes: int | None


class OutcomeEventData(TypedDict):
    """`outcome.reported`: the outcomes one report recorded for the run (binding record
    ``binding``) of ``process``; links to the run's record and its outcomes."""

    binding: int
    process: str
    outcomes: list[ReportedOutcome]
    actor: str


class AuditChainBrokenEventData(TypedDict):
    """`audit.chain_broken`: the first broken link of the tenant's history chain."""

    model: str
    id: int
    expected: str
    found: str | None
    reason: str
    columns: NotRequired[list[str]]
    checked: int


def _username(user: User | None) -> str:
    return user.get_username() if user is not None and user.pk is not None else ""


def new_event(
    *,
    type: str,
    tenant: Tenant,
    project: Project | None,
    actor: User | None,
    target: str,
    reason: str = "",
    version: int | None = None,
    data: Mapping[str, object] | None = None,
    action: str | None = None,
) -> Event:
    """The event of a change, not yet saved: what `emit` records (a bulk loader, such as
    `seed_large_tenant`, saves many at once)."""
    kind, _, type_action = type.partition(".")
    user = actor if actor is not None and actor.pk is not None else None
    return Event(
        tenant=tenant,
        project=project,
        type=type,
        kind=kind,
        action=action or type_action,
        target=target[:500],
        actor=user,
        actor_name=_username(user),
        reason=reason,
        version=version,
        data=dict(data or {}),
    )


def emit(
    *,
    type: str,
    tenant: Tenant,
    project: Project | None,
    actor: User | None,
    target: str,
    reason: str = "",
    version: int | None = None,
    data: Mapping[str, object] | None = None,
    action: str | None = None,
) -> Event:
    """Record that something changed; `type` is "<kind>.<action>" (`document.updated`).

    ``action`` is for the `*.changed` types, whose feed action says what happened
    ("created", "updated", "deleted"); by default it is the part after the dot."""
    event = new_event(
        type=type,
        tenant=tenant,
        project=project,
        actor=actor,
        target=target,
        reason=reason,
        version=version,
        data=data,
        action=action,
    )
    event.save(force_insert=True)
    transaction.on_commit(lambda: event_committed.send(sender=Event, event=event))
    return event


# Data, as the services write it.


def document_data(
    *,
    path: str,
    version: int,
    sha256: str,
    actor: User,
    reason: str,
) -> DocumentEventData:
    return {
        "path": path,
        "version": version,
        "sha256": sha256,
        "actor": actor.get_username(),
        "reason": reason,
    }


def binding_data(
    *,
    record_id: int,
    process: str,
    problem_count: int,
    actor: User | None,
) -> BindingEventData:
    """``actor`` None: a record whose creator's account is gone."""
    return {
        "id": record_id,
        "process": process,
        "problem_count": problem_count,
        "actor": actor.get_username() if actor is not None else "",
    }

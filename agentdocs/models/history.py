"""The history base every tracked model shares: what kind of change made a
history row, and how a service says who, why and what kind before it saves.

django-simple-history documents a `pre_create_historical_record` receiver as
the way to fill extra history columns; the services set ``_change_type`` on
the instance (through `mark_change`) before saving.
"""

from __future__ import annotations

from typing import TypeVar

from django.contrib.auth.models import AbstractBaseUser
from django.db import models
from django.dispatch import receiver
from simple_history.signals import pre_create_historical_record

from agentdocs.core.stored_text import refuse_hidden_or_secret

T = TypeVar("T", bound=models.Model)


class ChangeType(models.TextChoices):
    CREATED = "created", "Created"
    WRITTEN = "written", "Written"
    EDITED = "edited", "Edited"
    DELETED = "deleted", "Deleted"
    REVERTED = "reverted", "Reverted"
    RESTORED = "restored", "Restored"
    UPDATED = "updated", "Updated"


class HistoryChangeType(models.Model):
    """Extra columns on every historical table: what kind of change made the row, and
    its link in the tenant's hash chain."""

    change_type = models.CharField(max_length=16, choices=ChangeType.choices, blank=True)
    # The tenant's hash chain (`agentdocs.services.audit_chain`), set as the row is written:
    # whose chain, the row's place in it, and sha256(previous link + this row). Null on a
    # row of no tenant; nullable columns are added to the history tables without a rebuild.
    chain_tenant = models.BigIntegerField(null=True, blank=True, db_index=True, editable=False)
    chain_seq = models.BigIntegerField(null=True, blank=True, editable=False)
    chain_sha256 = models.CharField(  # noqa: DJ001  (null: not chained)
        max_length=64, null=True, blank=True, editable=False
    )

    class Meta:
        abstract = True


def mark_change(instance: T, *, user: AbstractBaseUser | None, reason: str, change_type: str) -> T:
    """Attach who, why and what kind of change to an instance about to be saved or
    deleted, for the history row that save or delete writes.

    Every history reason passes here, so here the secret and hidden-character checks
    read it (members, the activity feed and webhook receivers see reasons):
    SecretDetected or HiddenCharacters naming `reason` before anything is saved."""
    refuse_hidden_or_secret(reason, field="reason", what="The reason")
    # The attribute names django-simple-history reads; no model declares them.
    setattr(instance, "_history_user", user)  # noqa: B010
    setattr(instance, "_change_reason", reason)  # noqa: B010
    setattr(instance, "_change_type", change_type)  # noqa: B010
    return instance


@receiver(pre_create_historical_record)
def _record_change_type(
    sender: type[models.Model],
    instance: models.Model,
    history_instance: models.Model,
    **kwargs: object,
) -> None:
    change_type = getattr(instance, "_change_type", "")
    if change_type and hasattr(history_instance, "change_type"):
        history_instance.change_type = change_type

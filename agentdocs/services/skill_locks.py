"""Edit locks of skills, as documents have them (`services.document_locks`): take,
renew, release or break one. A skill's write, delete or revert by anyone but the
holder of a live lock is refused (423) under the skill's row lock
(`services.skills`).

A lock lasts `AGENTDOCS_LOCK_TTL_SECONDS` (at most `AGENTDOCS_LOCK_MAX_TTL_SECONDS`);
an expired one is no lock. A tenant admin may break another member's lock (``force``;
the caller checks the role). Taking a lock writes no version.
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agentdocs.core.errors import NotFound
from agentdocs.models import Skill
from agentdocs.selectors.document_locks import lock_is_active
from agentdocs.services.document_locks import require_unlocked
from agentdocs.validation.document_locks import valid_ttl

LOCK_FIELDS = ["lock_holder", "lock_expires_at"]


def _locked(skill: Skill) -> Skill:
    return (
        Skill.objects.select_related("project__tenant", "lock_holder")
        .select_for_update(of=("self",))
        .get(pk=skill.pk)
    )


def require_skill_unlocked(current: Skill, user: User) -> None:
    """Locked (423, naming `name`) while another user holds a live lock of the skill."""
    require_unlocked(current, user, what="skill", field="name")


def skill_lock(
    *, skill: Skill, user: User, ttl_seconds: int | None = None, force: bool = False
) -> Skill:
    """Take (or renew) the skill's edit lock. ``force`` breaks another user's lock
    (admins only: the caller checks the role)."""
    ttl = valid_ttl(ttl_seconds)
    with transaction.atomic():
        current = _locked(skill)
        if current.is_deleted:
            raise NotFound(f"The skill {current.name!r} was deleted.", field="name")
        if not force:
            require_skill_unlocked(current, user)
        current.lock_holder = user
        current.lock_expires_at = timezone.now() + timedelta(seconds=ttl)
        current.save_without_historical_record(update_fields=LOCK_FIELDS)
        return current


def skill_unlock(*, skill: Skill, user: User, force: bool = False) -> Skill:
    """Release the skill's edit lock. Someone else's live lock needs ``force``."""
    with transaction.atomic():
        current = _locked(skill)
        if lock_is_active(current) and current.lock_holder_id != user.pk and not force:
            require_skill_unlocked(current, user)
        current.lock_holder = None
        current.lock_expires_at = None
        current.save_without_historical_record(update_fields=LOCK_FIELDS)
        return current

"""Edit locks of documents: take, renew, release or break one (a live lock as plain
data is `agentdocs.selectors.document_locks`'s); and the row lock every write of a
document takes first, under which an edit lock held by someone else, or a deleted
document, is refused.

A skill's edit lock is the same (`services.skill_locks`): the helpers that read a lock
take either.

An edit lock lasts `AGENTDOCS_LOCK_TTL_SECONDS` (at most
`AGENTDOCS_LOCK_MAX_TTL_SECONDS`); an expired one is no lock. A tenant admin may break
another member's lock (``force``; the caller checks the role).
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agentdocs.core.errors import Locked, LockState, NotFound
from agentdocs.models import Document
from agentdocs.selectors.document_locks import Lockable, lock_expiry, lock_is_active
from agentdocs.validation.document_locks import valid_ttl


def lock_for_write(document: Document) -> Document:
    """Re-read the row under a row lock, so concurrent writers queue up here."""
    return (
        Document.objects.select_related("project__tenant")
        .select_for_update(of=("self",))
        .get(pk=document.pk)
    )


def require_not_deleted(current: Document) -> None:
    if current.is_deleted:
        raise NotFound(
            f"The document was deleted at version {current.version}; "
            "revert it to an earlier version or create it again.",
            field="path",
            current_version=current.version,
        )


def require_unlocked(
    current: Lockable, user: User, *, what: str = "document", field: str = "path"
) -> None:
    expires_at = lock_expiry(current)
    if expires_at is not None and current.lock_holder_id != user.pk:
        raise Locked(
            f"{current.lock_holder} is editing this {what} until "
            f"{expires_at.isoformat()}; a tenant admin may break the lock.",
            field=field,
            lock=LockState(
                holder=current.lock_holder.get_username() if current.lock_holder else None,
                expires_at=expires_at.isoformat(),
            ),
        )


def document_lock(
    *,
    document: Document,
    user: User,
    ttl_seconds: int | None = None,
    force: bool = False,
) -> Document:
    """Take (or renew) the edit lock. ``force`` breaks another user's lock (admins only:
    the caller checks the role)."""
    ttl = valid_ttl(ttl_seconds)
    with transaction.atomic():
        current = lock_for_write(document)
        require_not_deleted(current)
        if not force:
            require_unlocked(current, user)
        current.lock_holder = user
        current.lock_expires_at = timezone.now() + timedelta(seconds=ttl)
        current.save_without_historical_record(update_fields=["lock_holder", "lock_expires_at"])
        return current


def document_unlock(*, document: Document, user: User, force: bool = False) -> Document:
    """Release the edit lock. Someone else's live lock needs ``force`` (admins only)."""
    with transaction.atomic():
        current = lock_for_write(document)
        if lock_is_active(current) and current.lock_holder_id != user.pk and not force:
            require_unlocked(current, user)
        current.lock_holder = None
        current.lock_expires_at = None
        current.save_without_historical_record(update_fields=["lock_holder", "lock_expires_at"])
        return current

"""Edit locks of documents and skills, read: whether one is live, as plain data. Taking,
renewing, releasing and breaking one are `agentdocs.services.document_locks`'s."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from agentdocs.core.errors import LockState
from agentdocs.models import Document, Skill

# What carries an edit lock (`lock_holder`, `lock_expires_at`).
Lockable = Document | Skill


def lock_expiry(document: Lockable) -> datetime | None:
    """When the document's live lock expires; None when there is no live lock."""
    expires_at = document.lock_expires_at
    if document.lock_holder_id is None or expires_at is None or expires_at <= timezone.now():
        return None
    return expires_at


def lock_is_active(document: Lockable) -> bool:
    return lock_expiry(document) is not None


def lock_state(document: Lockable) -> LockState | None:
    """The live lock as plain data, or None when there is none (expired locks are ignored)."""
    expires_at = lock_expiry(document)
    if expires_at is None:
        return None
    return {
        "holder": document.lock_holder.get_username() if document.lock_holder else None,
        "expires_at": expires_at.isoformat(),
    }

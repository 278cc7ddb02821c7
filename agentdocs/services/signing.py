"""Signing what the server hands out (rendered Memory Blocks and binding records), and
the server's signing keys: made on first use, kept sealed at rest, rotated on demand.

The claims and the token format are `agentdocs.core.signing`. Each process keeps the
active key in memory for `AGENTDOCS_SIGNING_KEY_CACHE_SECONDS`, so signing a render
reads nothing from the database once the key is loaded. A key retired by a rotation may
therefore still sign in another process for that long: its published validity
(`valid_until`, `agentdocs.selectors.signing.published_keys`) says so, and verification
allows exactly that.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from agentdocs.core import signing
from agentdocs.models.signing import SigningKey


@dataclass(frozen=True)
class _Cached:
    key: signing.KeyPair
    loaded_at: float


logger = logging.getLogger(__name__)
_lock = threading.Lock()
_cached: _Cached | None = None


def _secret() -> str:
    # SECRET_KEY is always set: the settings refuse to start without it.
    return str(settings.AGENTDOCS_SIGNING_KEY or settings.SECRET_KEY)


def _key_pair(row: SigningKey) -> signing.KeyPair:
    private = signing.private_key_unseal(
        row.private_key_sealed, secret=_secret(), key_id=row.key_id
    )
    return signing.KeyPair(key_id=row.key_id, private=private)


def _new_key_row() -> SigningKey:
    key_id, private = signing.key_generate()
    pair = signing.KeyPair(key_id=key_id, private=private)
    return SigningKey(
        key_id=key_id,
        algorithm=signing.ALGORITHM,
        public_key=signing.b64url(pair.public_bytes),
        private_key_sealed=signing.private_key_seal(private, secret=_secret(), key_id=key_id),
        created_at=timezone.now(),
    )


def _active_row() -> SigningKey:
    """The active key's row, made when there is none (one query once there is one)."""
    row = SigningKey.objects.filter(retired_at__isnull=True).first()
    if row is not None:
        return row
    try:
        with transaction.atomic():
            row = _new_key_row()
            row.save()
            return row
    except IntegrityError:
        # Another process made the first key at the same moment: use that one.
        return SigningKey.objects.get(retired_at__isnull=True)


def signing_key_active() -> signing.KeyPair:
    """The key that signs now, from this process's memory while it is fresh."""
    global _cached
    cached = _cached
    ttl = settings.AGENTDOCS_SIGNING_KEY_CACHE_SECONDS
    if cached is not None and time.monotonic() - cached.loaded_at < ttl:
        return cached.key
    with _lock:
        row = _active_row()
        try:
            key = _key_pair(row)
        except signing.KeyUnsealError:
            # The secret changed (AGENTDOCS_SIGNING_KEY or SECRET_KEY): the key cannot sign
            # any more, but its public half still verifies what it signed. Rather than
            # refuse every render, retire it and sign with a new one.
            logger.error("Signing key %s cannot be decrypted; rotating.", row.key_id)
            _, new = signing_key_rotate()
            key = _key_pair(new)
        _cached = _Cached(key=key, loaded_at=time.monotonic())
    return key


def signing_key_forget() -> None:
    """Drop this process's copy of the active key (after a rotation, or between tests)."""
    global _cached
    _cached = None


def signing_key_rotate() -> tuple[SigningKey | None, SigningKey]:
    """Retire the active key (if any) and make a new one; the old stays published.

    Returns (retired, new). The retired key's private half is kept sealed but never
    signs again once the processes' caches expire."""
    with transaction.atomic():
        old = SigningKey.objects.select_for_update().filter(retired_at__isnull=True).first()
        now = timezone.now()
        if old is not None:
            old.retired_at = now
            old.save(update_fields=["retired_at"])
        new = _new_key_row()
        new.created_at = now
        new.save()
    signing_key_forget()
    return old, new


def memory_block_sign(
    *, tenant: str, project: str, process: str | None, text: str, sha256: str | None = None
) -> str:
    """The `Agentdocs-Signature` of a block rendered now from ``text`` (``sha256``: its
    hash, `MemoryBlock.sha256`, so that it is not hashed again)."""
    key = signing_key_active()
    claim = signing.block_claim(
        key_id=key.key_id,
        tenant=tenant,
        project=project,
        process=process,
        text=text,
        rendered_at=timezone.now().isoformat(),
        sha256=sha256,
    )
    return signing.claim_sign(key, claim)


def binding_record_sign(*, record: Mapping[str, Any]) -> str:
    """The signature stored with a binding record, over its canonical JSON."""
    key = signing_key_active()
    claim = signing.record_claim(
        key_id=key.key_id, record=record, signed_at=timezone.now().isoformat()
    )
    return signing.claim_sign(key, claim)

"""Reads of the server's signing keys: the published public halves."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings

from agentdocs.core import signing
from agentdocs.models.signing import SigningKey


def published_keys() -> list[signing.PublicKey]:
    """Every key, oldest first, with when it may have signed."""
    grace = timedelta(seconds=settings.AGENTDOCS_SIGNING_KEY_CACHE_SECONDS)
    keys: list[signing.PublicKey] = []
    for row in SigningKey.objects.order_by("created_at", "id"):
        until = signing.validity_until(row.retired_at, grace)
        keys.append(
            {
                "key_id": row.key_id,
                "algorithm": row.algorithm,
                "public_key": row.public_key,
                "created_at": row.created_at.isoformat(),
                "retired_at": row.retired_at.isoformat() if row.retired_at else None,
                "valid_from": row.created_at.isoformat(),
                "valid_until": until.isoformat() if until else None,
            }
        )
    return keys

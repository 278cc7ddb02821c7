"""An edit lock's time to live, as a lock of a document or of a skill takes it."""

from __future__ import annotations

from django.conf import settings

from agentdocs.core.errors import InvalidInput


def valid_ttl(ttl_seconds: int | None) -> int:
    """A lock's time to live: the configured default when not given; InvalidInput
    naming `ttl_seconds` outside 1 to `AGENTDOCS_LOCK_MAX_TTL_SECONDS`."""
    ttl = settings.AGENTDOCS_LOCK_TTL_SECONDS if ttl_seconds is None else ttl_seconds
    if (
        not isinstance(ttl, int)
        or isinstance(ttl, bool)
        or not (1 <= ttl <= settings.AGENTDOCS_LOCK_MAX_TTL_SECONDS)
    ):
        raise InvalidInput(
            f"ttl_seconds must be an integer from 1 to {settings.AGENTDOCS_LOCK_MAX_TTL_SECONDS}.",
            field="ttl_seconds",
        )
    return ttl

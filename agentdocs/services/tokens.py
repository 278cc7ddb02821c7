"""API tokens: create (the key is returned once), revoke, and note their use.

A key is `adt_<prefix>_<secret>`: the prefix (8 letters and digits) is stored and
shown, the secret never is; the database keeps the sha256 of the whole key. The
secret check recognises the format, so a key pasted into a document is refused.
"""

from __future__ import annotations

import hashlib
import secrets
import string
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from agentdocs.core.errors import NotFound, TooManyTokens
from agentdocs.models import ApiToken, ChangeType, Membership, Tenant
from agentdocs.models.history import mark_change
from agentdocs.selectors import tokens as token_selectors
from agentdocs.validation.tokens import (
    validate_expires_in_days,
    validate_name,
    validate_scopes,
)

KEY_PREFIX = "adt_"
PREFIX_ALPHABET = string.ascii_letters + string.digits
PREFIX_LENGTH = 8
# `last_used_at` is written at most this often per token, so a busy agent's
# requests do not each write a row.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    key: str


SECRET_LENGTH = 40  # 40 letters and digits: about 238 bits


def _random_text(length: int) -> str:
    return "".join(secrets.choice(PREFIX_ALPHABET) for _ in range(length))


def key_from(prefix: str, secret: str) -> str:
    """A key in the one format: letters and digits only, so it selects with a double
    click and the secret check recognises it."""
    return f"{KEY_PREFIX}{prefix}_{secret}"


def _new_key() -> tuple[str, str]:
    prefix = _random_text(PREFIX_LENGTH)
    return prefix, key_from(prefix, _random_text(SECRET_LENGTH))


def token_create(
    *,
    user: User,
    name: str,
    scopes: list[str],
    tenant: Tenant | None = None,
    expires_in_days: int | None = None,
    actor: User | None = None,
    reason: str = "",
    key: tuple[str, str] | None = None,
    now: datetime | None = None,
) -> NewToken:
    """Create a token for `user`; the returned key is the only time it is seen.

    A tenant token works only in that tenant, so its user must be a member there.
    A user holds at most `AGENTDOCS_MAX_TOKENS_PER_USER` active tokens (TooManyTokens).
    When an API token asks for this one, the view has checked it is within that token
    (`permissions.token_mint_check`) at ``now``, which the expiry here counts from.
    ``key`` (prefix, key) is for the demo, whose key is derived
    from the installation's SECRET_KEY so that every run of `seed_demo` prints the same
    working token.
    """
    name = validate_name(name)
    scopes = validate_scopes(scopes)
    expires_in_days = validate_expires_in_days(expires_in_days)
    if tenant is not None and not Membership.objects.filter(tenant=tenant, user=user).exists():
        raise NotFound(f"No tenant {tenant.slug!r}.", field="tenant")
    now = now or timezone.now()
    for _attempt in range(5):
        prefix, new_key = key or _new_key()
        token = ApiToken(
            user=user,
            tenant=tenant,
            name=name,
            prefix=prefix,
            key_hash=hash_key(new_key),
            scopes=scopes,
            created_at=now,
            expires_at=now + timedelta(days=expires_in_days) if expires_in_days else None,
        )
        mark_change(
            token,
            user=actor or user,
            reason=reason or f"Token {name!r} created",
            change_type=ChangeType.CREATED,
        )
        try:
            with transaction.atomic():
                _require_room_for_a_token(user=user, now=now)
                token.save()
        except IntegrityError:  # a prefix taken already: 62^8 makes a second clash unlikely
            if key is not None:
                raise
            continue
        return NewToken(token=token, key=new_key)
    raise RuntimeError("could not find a free token prefix")


def _require_room_for_a_token(*, user: User, now: datetime) -> None:
    """TooManyTokens when the user holds the most active tokens one person may. The
    user's row is locked first, so two creations at once cannot both take the last place."""
    User.objects.select_for_update().filter(pk=user.pk).first()
    limit = settings.AGENTDOCS_MAX_TOKENS_PER_USER
    if token_selectors.active_tokens(user=user, now=now) >= limit:
        raise TooManyTokens(
            f"You hold {limit} active API tokens, the most one person may: revoke one you "
            "no longer use, then create this one.",
            field=None,
            limit=limit,
        )


@transaction.atomic
def token_revoke(*, token: ApiToken, actor: User, reason: str = "") -> ApiToken:
    """Revoke a token; the next request that sends it is refused. Revoking twice is a no-op."""
    token = ApiToken.objects.select_for_update().get(pk=token.pk)
    if token.revoked_at is not None:
        return token
    token.revoked_at = timezone.now()
    token.revoked_by = actor
    mark_change(token, user=actor, reason=reason or "Revoked", change_type=ChangeType.DELETED)
    token.save()
    return token


def token_used(*, token_id: int, last_used_at: datetime | None, now: datetime) -> None:
    """Note that a token was used, at most once per `LAST_USED_RESOLUTION`.

    `last_used_at` is left out of the token's history (it is not a change anyone
    made), so a plain UPDATE is the right write here.
    """
    if last_used_at is not None and now - last_used_at < LAST_USED_RESOLUTION:
        return
    ApiToken.objects.filter(pk=token_id).update(last_used_at=now)

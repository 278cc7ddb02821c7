"""API tokens: hashed, named, optionally bound to one tenant, scoped and expiring.

Only the sha256 of a token is stored. The token itself (`adt_<prefix>_<secret>`)
is shown once, when it is created; the 8-character prefix stays visible so a
person can tell their tokens apart in lists and logs.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone
from simple_history.models import HistoricalRecords

from agentdocs.models.history import HistoryChangeType
from agentdocs.models.tenancy import Role, Tenant


class Scope(models.TextChoices):
    """What a token may be used for, in increasing order: each scope includes the ones
    before it. The user's current role caps it on every request."""

    READ = "read", "Read"
    RENDER = "render", "Render"
    WRITE = "write", "Write"
    ADMIN = "admin", "Admin"


SCOPE_ORDER: tuple[str, ...] = tuple(Scope.values)

# The highest role each scope reaches: a reader renders and binds runs, a writer
# writes, an admin administers. The user's current role caps it again.
SCOPE_ROLE: dict[str, Role] = {
    Scope.READ: Role.READER,
    Scope.RENDER: Role.READER,
    Scope.WRITE: Role.WRITER,
    Scope.ADMIN: Role.ADMIN,
}


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    tenant = models.ForeignKey(
        Tenant, on_delete=models.CASCADE, null=True, blank=True, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=8, unique=True)
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    history = HistoricalRecords(bases=[HistoryChangeType], excluded_fields=["last_used_at"])

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix})"

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    def is_expired(self, now: datetime | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())

    @property
    def highest_scope(self) -> str | None:
        """The broadest scope the token holds (scopes are ordered), or None."""
        held = [scope for scope in SCOPE_ORDER if scope in (self.scopes or [])]
        return held[-1] if held else None

    @property
    def role_ceiling(self) -> Role:
        """The highest role the token's scopes reach."""
        highest = self.highest_scope
        return SCOPE_ROLE[highest] if highest else Role.READER

    def allows(self, scope: str) -> bool:
        """Whether the token's scopes include ``scope`` (each includes those before it)."""
        highest = self.highest_scope
        return highest is not None and SCOPE_ORDER.index(highest) >= SCOPE_ORDER.index(scope)

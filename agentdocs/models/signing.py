"""The server's Ed25519 signing keys: one active, the retired ones kept for verifying."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class SigningKey(models.Model):
    """One signing key. The private half is stored sealed (`core.signing.private_key_seal`);
    the public half is published in `/.well-known/agentdocs/keys.json` for as long as the
    row exists, so signatures it made stay verifiable after it is retired."""

    key_id = models.CharField(max_length=64, unique=True)
    algorithm = models.CharField(max_length=16, default="Ed25519")
    public_key = models.CharField(max_length=64, help_text="base64url of the raw public key")
    private_key_sealed = models.TextField()
    created_at = models.DateTimeField()
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            # At most one key signs at a time.
            models.UniqueConstraint(
                fields=["algorithm"], condition=Q(retired_at__isnull=True), name="one_active_key"
            )
        ]

    def __str__(self) -> str:
        return self.key_id

"""Retire the active signing key and make a new one; old keys stay published."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from agentdocs.selectors.signing import published_keys
from agentdocs.services.signing import signing_key_rotate


class Command(BaseCommand):
    help = (
        "Rotate the Ed25519 key that signs Memory Blocks and binding records. The retired "
        "key stays in /.well-known/agentdocs/keys.json, so what it signed still verifies; "
        "running processes switch within AGENTDOCS_SIGNING_KEY_CACHE_SECONDS."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        old, new = signing_key_rotate()
        if old is not None:
            self.stdout.write(f"Retired {old.key_id}.")
        self.stdout.write(f"Signing with {new.key_id} from now on.")
        for key in published_keys():
            until = key["valid_until"] or "now"
            self.stdout.write(f"  {key['key_id']}  valid {key['valid_from']} .. {until}")

"""Signing what the server hands out: rendered Memory Blocks and binding records.

The claims and the token format are `agentdocs.core.signing`; the key is this
process's active one (`signing_keys.signing_key_active`), so a signature costs no
query once the key is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from agentdocs.core import signing
from agentdocs.services.signing_keys import signing_key_active


def memory_block_sign(*, tenant: str, project: str, process: str | None, text: str) -> str:
    """The `Agentdocs-Signature` of a block rendered now from ``text``."""
    key = signing_key_active()
    claim = signing.block_claim(
        key_id=key.key_id,
        tenant=tenant,
        project=project,
        process=process,
        text=text,
        rendered_at=timezone.now().isoformat(),
    )
    return signing.claim_sign(key, claim)


def binding_record_sign(*, record: Mapping[str, Any]) -> str:
    """The signature stored with a binding record, over its canonical JSON."""
    key = signing_key_active()
    claim = signing.record_claim(
        key_id=key.key_id, record=record, signed_at=timezone.now().isoformat()
    )
    return signing.claim_sign(key, claim)

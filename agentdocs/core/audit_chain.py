"""The hash chain over a tenant's history rows, as pure functions.

Each row that records a change carries ``chain_sha256 = sha256(previous row's
chain_sha256 + canonical JSON of this row)``, the first row's previous being "".
The canonical JSON is ``{"model": <history model>, "row": {<every column but the
surrogate history_id and chain_sha256 itself>}}``; the row's place in the chain
(``chain_seq``) and its tenant (``chain_tenant``) are columns, so they are covered.
Editing, deleting, inserting or reordering a row breaks the link at that row (or, at
the tail, the agreement with the tenant's chain head).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from agentdocs.core.signing import canonical_json

HEAD = "audit_chain_head"


def chain_link(previous: str, *, model: str, row: Mapping[str, Any]) -> str:
    """The chain_sha256 of ``row`` of ``model`` after a row whose chain_sha256 is ``previous``."""
    data = previous.encode("ascii") + canonical_json({"model": model, "row": dict(row)})
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ChainRow:
    """One history row as the walk reads it: its canonical columns and stored link."""

    model: str
    id: int
    seq: int
    chain_sha256: str | None
    row: Mapping[str, Any]


class BrokenLink(TypedDict):
    model: str
    id: int
    expected: str
    found: str | None


class ChainReport(TypedDict):
    ok: bool
    checked: int
    broken_at: BrokenLink | None


def chain_walk(
    rows: Iterable[ChainRow], *, tenant_id: int, head_seq: int, head_sha256: str
) -> ChainReport:
    """Walk ``rows`` in chain order and report the first broken link.

    ``checked`` counts the rows examined, the broken one included. After the last row,
    the chain must end where the tenant's head says (model `audit_chain_head`, with the
    tenant's id): rows removed from the tail are found there."""
    previous, checked, last_seq = "", 0, 0
    for entry in rows:
        checked += 1
        expected = chain_link(previous, model=entry.model, row=entry.row)
        if entry.chain_sha256 != expected or entry.seq != last_seq + 1:
            return {
                "ok": False,
                "checked": checked,
                "broken_at": {
                    "model": entry.model,
                    "id": entry.id,
                    "expected": expected,
                    "found": entry.chain_sha256,
                },
            }
        previous, last_seq = expected, entry.seq
    if last_seq != head_seq or previous != head_sha256:
        return {
            "ok": False,
            "checked": checked,
            "broken_at": {
                "model": HEAD,
                "id": tenant_id,
                "expected": head_sha256,
                "found": previous,
            },
        }
    return {"ok": True, "checked": checked, "broken_at": None}

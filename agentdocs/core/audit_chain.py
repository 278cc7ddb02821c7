"""The hash chain over a tenant's history rows, as pure functions.

Each row that records a change carries ``chain_sha256 = sha256(previous row's
chain_sha256 + canonical JSON of this row)``, the first row's previous being "".
The canonical JSON is ``{"model": <history model>, "row": {<every column but the
surrogate history_id and chain_sha256 itself>}}``; the row's place in the chain
(``chain_seq``) and its tenant (``chain_tenant``) are columns, so they are covered.
Editing, deleting, inserting or reordering a row breaks the link at that row (or, at
the tail, the agreement with the tenant's chain head).

A finding says which kind of break it is (`Reason`): what the walk finds here
(``link_mismatch``, ``sequence_gap``, ``head_mismatch``) and what the service finds
around it (``past_head``, ``unlinked``: history rows outside the chain;
``live_mismatch``: a live row that is not what its newest chained history row says).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

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


Reason = Literal[
    # The row's chain_sha256 is not sha256(previous link + its columns): edited.
    "link_mismatch",
    # The row's chain_seq is not one more than the row before it: a row removed, or
    # two rows numbered alike.
    "sequence_gap",
    # The chain does not end where the tenant's head says: rows removed at the tail.
    "head_mismatch",
    # A row of the tenant's chain numbered past its head: appended behind its back.
    "past_head",
    # A history row of the tenant with no link (no chain_seq or chain_sha256).
    "unlinked",
    # A live row (a document, label, setting, recipe, provider) that is not what its
    # newest chained history row says, or that has no such row.
    "live_mismatch",
]


class BrokenLink(TypedDict):
    model: str
    id: int
    expected: str
    found: str | None
    reason: Reason
    # live_mismatch: the columns that differ from the newest chained history row.
    columns: NotRequired[list[str]]


def broken_link(
    reason: Reason, *, model: str, id: int, expected: str, found: str | None
) -> BrokenLink:
    return {"model": model, "id": id, "expected": expected, "found": found, "reason": reason}


def values_digest(values: Mapping[str, Any]) -> str:
    """The sha256 of ``values`` in canonical JSON: how a live row and its newest history
    row are compared, and what a live_mismatch reports as expected and found."""
    return hashlib.sha256(canonical_json(dict(values))).hexdigest()


def live_mismatch(
    *,
    model: str,
    id: int,
    recorded: Mapping[str, Any] | None,
    live: Mapping[str, Any] | None,
) -> BrokenLink | None:
    """The finding for a live row of ``model`` whose compared columns are ``live`` (None:
    the row is gone) against its newest chained history row's ``recorded`` (None: it has
    none, or that row records a deletion); None when they agree."""
    if recorded == live:
        return None
    found = broken_link(
        "live_mismatch",
        model=model,
        id=id,
        expected="" if recorded is None else values_digest(recorded),
        found=None if live is None else values_digest(live),
    )
    names = sorted({*(recorded or {}), *(live or {})})
    found["columns"] = [
        name for name in names if (recorded or {}).get(name) != (live or {}).get(name)
    ]
    return found


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
            reason: Reason = "sequence_gap" if entry.seq != last_seq + 1 else "link_mismatch"
            return {
                "ok": False,
                "checked": checked,
                "broken_at": broken_link(
                    reason,
                    model=entry.model,
                    id=entry.id,
                    expected=expected,
                    found=entry.chain_sha256,
                ),
            }
        previous, last_seq = expected, entry.seq
    if last_seq != head_seq or previous != head_sha256:
        return {
            "ok": False,
            "checked": checked,
            "broken_at": broken_link(
                "head_mismatch", model=HEAD, id=tenant_id, expected=head_sha256, found=previous
            ),
        }
    return {"ok": True, "checked": checked, "broken_at": None}

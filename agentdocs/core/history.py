"""What one history entry of a setting, recipe, membership or provider changed.

A tracked thing's history is a list of snapshots (its values after each change, or
None once it was deleted); each entry compares a snapshot with the one before it.
Values are shown as text: a setting's value, a role, a provider's `project/path`;
a recipe's JSON, indented, with a line diff from `core.diffs`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from agentdocs.core.diffs import Diff, diff_texts

Snapshot = Mapping[str, object]


@dataclass(frozen=True)
class FieldChange:
    """One field's value before and after (None: the thing did not exist then)."""

    field: str
    old: str | None
    new: str | None


def display(value: object) -> str:
    """A value as a person reads it: text as is, true/false, JSON for the rest."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json_text(value)


def json_text(value: object) -> str:
    """JSON as the history diffs it: keys sorted, one entry per line."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def field_changes(before: Snapshot | None, after: Snapshot | None) -> list[FieldChange]:
    """The fields whose value differs between two snapshots, in the snapshots' order.

    Created (``before`` None) or deleted (``after`` None): every field, from or to
    nothing."""
    fields = list(after or before or {})
    changes = []
    for field in fields:
        old = display(before[field]) if before is not None else None
        new = display(after[field]) if after is not None else None
        if old != new:
            changes.append(FieldChange(field=field, old=old, new=new))
    return changes


def snapshot_diff(before: Snapshot | None, after: Snapshot | None) -> Diff:
    """A line diff of the two snapshots as indented JSON ("" for a missing one)."""
    old = json_text(dict(before)) if before is not None else ""
    new = json_text(dict(after)) if after is not None else ""
    return diff_texts(old, new, old_label="before", new_label="after")

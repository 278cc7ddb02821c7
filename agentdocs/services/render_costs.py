"""What every render delivered, counted without a round trip of its own and folded
into the database, for the cost of the documents over days (`agentdocs.services.costs`).

A render (`POST .../memory-block/`, an MCP tool, a session hook's render) adds one to a
per-project, per-day counter hash (`agentdocs.cache.hash_count_unanswered`: on Redis a
HINCRBY sent on the connection of the unanswered read-state write, never waited for;
no SQL). The hash's field is the turn's shape: the recipe, whether it was the process's
first turn (no read state yet), and the block's layers as `agentdocs.core.costs` reads a
delivered text (each document's bytes and tokens, full or as a stub). The shape, and
the field's JSON for each recipe and first turn, are worked out once per distinct block
text while the render's rows stay current (the render memo), so a turn costs no
tokenizing and no encoding. `render_turns_fold` (a beat task, and the
costs read for its project) writes the counts of the last days into `RenderTurns`,
only ever raising a day's count.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, MutableMapping, Sequence
from datetime import date, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from agentdocs.cache import hash_count_unanswered, hash_counts
from agentdocs.core.costs import turn_layers
from agentdocs.core.memory_block import MemoryBlock
from agentdocs.models import Project, RenderTurns

# The days a day's counter stays in the cache after its last count: the fold has that
# long to write it.
COUNTER_DAYS = 3


def _counter(project_id: int, day: date) -> str:
    return f"costs:turns:v1:{project_id}:{day.isoformat()}"


def render_counted(
    *,
    project: Project,
    recipe: str | None,
    block: MemoryBlock,
    first: bool,
    memo: MutableMapping[Hashable, Any],
) -> None:
    """Count one turn of ``project`` that delivered ``block`` (``first``: the process
    held nothing before it), with no round trip and no query."""
    key = ("render-costs", block.sha256)
    layers = memo.get(key)
    if layers is None:
        layers = memo[key] = turn_layers(block.text)
    field_key = ("render-costs-field", block.sha256, recipe or "", first)
    field = memo.get(field_key)
    if field is None:
        field = memo[field_key] = json.dumps(
            [recipe or "", int(first), layers], separators=(",", ":")
        )
    hash_count_unanswered(
        _counter(project.pk, timezone.localdate()), field, COUNTER_DAYS * 24 * 3600
    )


def render_turns_fold(*, project_ids: Sequence[int] | None = None) -> int:
    """Write the counted turns of today and the days before (as long as the cache
    keeps them) of ``project_ids`` (None: every project) into `RenderTurns`; how many
    rows it wrote. Two queries and one cache round trip, whatever the counts."""
    if project_ids is None:
        project_ids = list(Project.objects.values_list("pk", flat=True))
    today = timezone.localdate()
    keys = {
        _counter(project_id, today - timedelta(days=back)): (
            project_id,
            today - timedelta(days=back),
        )
        for project_id in project_ids
        for back in range(COUNTER_DAYS)
    }
    counted = {
        (*keys[key], hashlib.sha256(field.encode()).hexdigest()): (field, turns)
        for key, fields in hash_counts(list(keys)).items()
        for field, turns in fields.items()
    }
    if not counted:
        return 0
    days = {day for _, day, _ in counted}
    stored = {
        (row.project_id, row.day, row.shape_sha256): row.turns
        for row in RenderTurns.objects.filter(
            Q(project_id__in={p for p, _, _ in counted}), Q(day__in=days)
        ).only("project_id", "day", "shape_sha256", "turns")
    }
    rows = [
        RenderTurns(project_id=project_id, day=day, shape=field, shape_sha256=digest, turns=turns)
        for (project_id, day, digest), (field, turns) in counted.items()
        if turns > stored.get((project_id, day, digest), 0)
    ]
    if rows:
        RenderTurns.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["project", "day", "shape_sha256"],
            update_fields=["turns"],
        )
    return len(rows)


def counted_turns(*, project: Project, since: date) -> list[tuple[str, int, list[Any], int]]:
    """The project's turns from ``since`` on, folded first: (recipe, first, layers,
    turns) per shape and day."""
    render_turns_fold(project_ids=[project.pk])
    found = []
    for shape, turns in RenderTurns.objects.filter(project=project, day__gte=since).values_list(
        "shape", "turns"
    ):
        try:
            recipe, first, layers = json.loads(shape)
        except (ValueError, TypeError):
            continue
        found.append((recipe, int(first), layers, turns))
    return found

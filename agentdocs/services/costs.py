"""The cost of a project's documents: what the Memory Block is per turn, full and as
stubs, for each recipe; and what the live deliveries of the last days carried, per
document, with what the per-process dedup saved.

It writes nothing, but it renders (previews, through `services.memory_block`), which
the selectors' floor cannot call: it lives beside the render.

The turns are the binding records a session hook leaves (`agentdocs hook context`,
docs/hooks.md): each keeps the exact text it delivered (`delivery.output`), which
`agentdocs.core.costs` reads back as documents. Those are the only turns the server
records: a render through `POST .../memory-block/` or an MCP tool call writes no row
(its hot path stays one cache round trip), so a process that renders without a hook
is not in the figures over days.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypedDict

from django.utils import timezone

from agentdocs.core.costs import (
    DocumentCost,
    Piece,
    TextCost,
    TurnCosts,
    WindowTotals,
    held_layers,
    text_cost,
)
from agentdocs.core.hook_delivery import read_hook_output
from agentdocs.core.memory_block import compose_memory_block
from agentdocs.core.token_count import TOKENIZER
from agentdocs.models import BindingRecord, Project, Recipe
from agentdocs.services import memory_block as memory_block_service

MIN_DAYS = 1
MAX_DAYS = 365
DEFAULT_DAYS = 30
# The most turns read for one answer, the newest; `truncated` says when more were left out.
MAX_TURNS = 100_000
# How a delivery's block was had when it carried one (`none` and `refused` carried none).
_DELIVERED_BLOCK = ("server", "cache")


class DocumentTurnCost(TypedDict):
    document: str
    bytes: int
    tokens: int


class RecipeCost(TypedDict):
    """One recipe's block per turn: a process's first (full) and a later one (stubs)."""

    recipe: str | None
    full: TextCost
    stub: TextCost
    documents: list[DocumentTurnCost]


class WindowCost(TypedDict):
    days: int
    since: str
    truncated: bool
    totals: WindowTotals
    tokens_delivered_per_day: float
    documents: list[DocumentCost]


class ProjectCosts(TypedDict):
    tokenizer: str
    recipes: list[RecipeCost]
    window: WindowCost


@dataclass(frozen=True)
class _Rendered:
    recipe: RecipeCost
    held: dict[str, tuple[Piece, ...]]


def _recipe_cost(project: Project, recipe: str | None) -> _Rendered:
    """The block of ``recipe`` as a new process gets it (the preview) and as a later turn
    does once it holds every layer (each layer a stub)."""
    inputs = memory_block_service.memory_block_inputs(project=project, recipe_name=recipe)
    full = compose_memory_block(inputs)
    stub = compose_memory_block(inputs, read_state=full.read_state)
    held = held_layers(full.text)
    documents: list[DocumentTurnCost] = [
        {"document": piece.name, "bytes": piece.bytes, "tokens": piece.tokens}
        for pieces in held.values()
        for piece in pieces
    ]
    cost: RecipeCost = {
        "recipe": recipe,
        "full": text_cost(full.text),
        "stub": text_cost(stub.text),
        "documents": documents,
    }
    return _Rendered(recipe=cost, held=held)


def _delivered_text(delivery: Any) -> str | None:
    """The text a recorded delivery gave the tool, when it carried a block."""
    if not isinstance(delivery, dict) or delivery.get("block") not in _DELIVERED_BLOCK:
        return None
    try:
        reading = read_hook_output(
            tool=delivery["tool"], event=delivery["event"], output=delivery["output"]
        )
    except (KeyError, TypeError):
        return None
    return reading.context if reading.usable else None


def project_costs(*, project: Project, days: int = DEFAULT_DAYS) -> ProjectCosts:
    """The project's block per recipe (no recipe first, then the tenant's by name), and
    its delivered turns of the last ``days`` days (1 to 365), per document."""
    names: list[str | None] = [None]
    names += list(
        Recipe.objects.filter(tenant_id=project.tenant_id)
        .order_by("name")
        .values_list("name", flat=True)
    )
    rendered = [_recipe_cost(project, name) for name in names]
    fallback: dict[str, tuple[Piece, ...]] = {}
    for each in rendered:
        for heading, pieces in each.held.items():
            fallback.setdefault(heading, pieces)
    since = timezone.now() - timedelta(days=days)
    newest = (
        BindingRecord.objects.filter(
            project=project, created_at__gte=since, record__has_key="delivery"
        )
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)[MAX_TURNS : MAX_TURNS + 1]
    )
    cut = next(iter(newest), None)
    rows = BindingRecord.objects.filter(
        project=project, created_at__gte=since, record__has_key="delivery"
    )
    if cut is not None:
        rows = rows.filter(id__gt=cut)
    costs = TurnCosts(fallback=fallback)
    for process, delivery in (
        rows.order_by("process", "created_at", "id")
        .values_list("process", "record__delivery")
        .iterator(chunk_size=1000)
    ):
        text = _delivered_text(delivery)
        if text is not None:
            costs.add_turn(process=process, text=text)
    totals = costs.totals()
    return {
        "tokenizer": TOKENIZER,
        "recipes": [each.recipe for each in rendered],
        "window": {
            "days": days,
            "since": since.isoformat(),
            "truncated": cut is not None,
            "totals": totals,
            "tokens_delivered_per_day": round(totals["tokens_delivered"] / days, 1),
            "documents": costs.documents(),
        },
    }

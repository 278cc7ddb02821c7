"""The cost of a project's documents: what the Memory Block is per turn, full and as
stubs, for each recipe; and what the live deliveries of the last days carried, per
document, with what the per-process dedup saved.

It renders (previews, through `services.memory_block`), which the selectors' floor
cannot call, and folds the render counters into the database before it reads them:
it lives beside the render.

The turns over days are every render the server made (`POST .../memory-block/`, the
MCP tools, a session hook's render), counted per day without a round trip of its own
(`agentdocs.services.render_costs`), and the deliveries a session hook served from its
cache while the server was down, which it keeps in binding records (`delivery.output`,
read back as documents by `agentdocs.core.costs`). A preview is no turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypedDict

from django.core.cache import cache
from django.utils import timezone

from agentdocs.core.costs import (
    DocumentCost,
    Piece,
    TextCost,
    TurnCosts,
    WindowTotals,
    counted_layers,
    held_layers,
    text_cost,
)
from agentdocs.core.hook_delivery import read_hook_output
from agentdocs.core.memory_block import compose_memory_block
from agentdocs.core.token_count import TOKENIZER
from agentdocs.models import BindingRecord, Project, Recipe
from agentdocs.selectors import memory_block as memory_block_selectors
from agentdocs.services import render_costs

MIN_DAYS = 1
MAX_DAYS = 365
DEFAULT_DAYS = 30
# The most turns read for one answer, the newest; `truncated` says when more were left out.
MAX_TURNS = 100_000
# A delivery whose block the server rendered is counted with the renders; one the hook
# served from its cache is not among them (`none` and `refused` carried none).
_DELIVERED_BLOCK = ("cache",)


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
    inputs = memory_block_selectors.memory_block_inputs(project=project, recipe_name=recipe)
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


def _delivered_text(tool: Any, event: Any, block: Any, output: Any) -> str | None:
    """The text a recorded delivery gave the tool, when it carried a block."""
    if block not in _DELIVERED_BLOCK or not all(
        isinstance(value, str) for value in (tool, event, output)
    ):
        return None
    reading = read_hook_output(tool=tool, event=event, output=output)
    return reading.context if reading.usable else None


def _window(*, project: Project, days: int, fallback: dict[str, tuple[Piece, ...]]) -> WindowCost:
    """The turns of the last ``days`` days, added up per document: every render the
    server made (`render_costs`, counted per day), and the deliveries a session hook
    served from its cache while the server was down (binding records, the newest
    `MAX_TURNS`); a stub is held against ``fallback`` (the layers as they render now)
    unless the same process's full turn is among those records."""
    since = timezone.now() - timedelta(days=days)
    costs = TurnCosts(fallback=fallback)
    for _recipe, first, layers, turns in render_costs.counted_turns(
        project=project, since=timezone.localdate() - timedelta(days=days - 1)
    ):
        costs.add_counted(layers=counted_layers(layers), turns=turns, first=turns * first)
    delivered = BindingRecord.objects.filter(
        project=project, created_at__gte=since, record__has_key="delivery"
    )
    newest = delivered.order_by("-created_at", "-id").values_list("id", flat=True)
    cut = next(iter(newest[MAX_TURNS : MAX_TURNS + 1]), None)
    if cut is not None:
        delivered = delivered.filter(id__gt=cut)
    texts: dict[tuple[Any, ...], str | None] = {}  # most deliveries repeat another's
    # The whole `delivery` object: a key inside it reads back differently on SQLite, whose
    # JSON_EXTRACT gives a string's content, which Django then decodes as JSON again.
    for process, delivery in (
        delivered.order_by("process", "created_at", "id")
        .values_list("process", "record__delivery")
        .iterator(chunk_size=1000)
    ):
        if not isinstance(delivery, dict):
            continue
        key = tuple(delivery.get(name) for name in ("tool", "event", "block", "output"))
        if key not in texts:
            texts[key] = _delivered_text(*key)
        text = texts[key]
        if text is not None:
            costs.add_turn(process=process, text=text)
    totals = costs.totals()
    return {
        "days": days,
        "since": since.isoformat(),
        "truncated": cut is not None,
        "totals": totals,
        "tokens_delivered_per_day": round(totals["tokens_delivered"] / days, 1),
        "documents": costs.documents(),
    }


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
    return {
        "tokenizer": TOKENIZER,
        "recipes": [each.recipe for each in rendered],
        "window": _window(project=project, days=days, fallback=fallback),
    }


class DocumentPageCost(TypedDict):
    """What a document costs, as its page says it: per process (its part of the block
    a process gets on its first turn; later turns carry a stub) and per day (the tokens
    every turn delivered of it over the last `days`, a day's share)."""

    per_process: TextCost | None  # None: no part of the block without a recipe
    tokens_per_day: float
    turns: int
    days: int


# The figures over days are read again at most this often for a document page.
PAGE_COSTS_SECONDS = 300


def document_cost(*, project: Project, path: str, days: int = DEFAULT_DAYS) -> DocumentPageCost:
    """``path``'s cost in ``project``: its part of the block without a recipe now, and of
    the turns delivered over the last ``days`` (kept for a few minutes per project)."""
    rendered = _recipe_cost(project, None)
    part = next((d for d in rendered.recipe["documents"] if d["document"] == path), None)
    key = f"costs:v1:{project.pk}:{days}"
    documents = cache.get(key)
    if documents is None:
        documents = _window(project=project, days=days, fallback=rendered.held)["documents"]
        cache.set(key, documents, PAGE_COSTS_SECONDS)
    row = next((d for d in documents if d["document"] == path), None)
    return {
        "per_process": None if part is None else {"bytes": part["bytes"], "tokens": part["tokens"]},
        "tokens_per_day": round(row["tokens_delivered"] / days, 1) if row else 0.0,
        "turns": (row["turns_full"] + row["turns_stub"]) if row else 0,
        "days": days,
    }

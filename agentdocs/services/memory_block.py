"""The Memory Block, Django side: a render, which writes (its rows into the shared cache
on a miss, the process's read state, the render's count); what it reads is made by
`agentdocs.selectors.memory_block` (`inputs_from_rows`), then composed by the pure core.

After the access check, a render runs one SQL query whatever the size of
the project: the recipe, the `memory.*` settings, the documents and the skills
together.
The bundled default is a file read, and the per-process read state lives in
Django's cache (Redis in production): losing it only means the full text is
sent again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from agentdocs import ratelimit
from agentdocs.cache import set_unanswered
from agentdocs.core.memory_block import (
    ClientDocument,
    MemoryBlock,
    MemoryBlockInputs,
    compose_memory_block,
)
from agentdocs.models import Project
from agentdocs.selectors import memory_block as memory_block_selectors
from agentdocs.selectors.memory_block import memory_block_rows
from agentdocs.services import render_cache, render_costs
from agentdocs.validation.memory_block import validate_process


def _inputs_and_read_state(
    *,
    project: Project,
    recipe_name: str | None,
    profile_name: str | None,
    client_document: ClientDocument | None,
    state_key: str | None,
    paths: tuple[str, ...] = (),
    rate_limit: ratelimit.Windows | None = None,
    label: str | None = None,
) -> tuple[MemoryBlockInputs, StoredReadState, dict[Hashable, Any]]:
    """The render's inputs, the read state stored under ``state_key`` (`read_state_key`;
    None: none), and the memo of the rows they came from (`render_cache.Rows`): one
    cache round trip, which also counts the render against ``rate_limit``."""
    recipe = recipe_name or None
    cached, found = render_cache.cached_rows(
        tenant_id=project.tenant_id,
        project_id=project.pk,
        recipe=recipe,
        label=label,
        read=lambda: memory_block_rows(project=project, recipe_name=recipe, label=label),
        size=memory_block_selectors.rows_size,
        with_keys=[state_key] if state_key else [],
        rate_limit=rate_limit,
    )
    inputs = memory_block_selectors.inputs_from_rows(
        cached,
        project=project,
        recipe_name=recipe_name,
        profile_name=profile_name,
        client_document=client_document,
        paths=paths,
        label=label,
    )
    stored = _stored_read_state(found.get(state_key) if state_key else None)
    return inputs, stored, cached.memo


def read_state_key(*, project: Project, process: str, caller: str) -> str:
    """Scoped by tenant and project, so no tenant can reach another's read state, and
    by the caller (`caller_of`), so a member who guesses an agent's process id renders
    into a read state of their own and can never turn the agent's first turn into
    stubs."""
    if not caller:
        raise ValueError("a read state belongs to a caller: pass caller=caller_of(...)")
    digest = hashlib.sha256(f"{caller}\x00{process}".encode()).hexdigest()[:40]
    return f"read-state:v2:{project.tenant_id}:{project.pk}:{digest}"


def caller_of(*, user_id: int | None, token_id: int | None) -> str:
    """Who a read state belongs to: the API token that rendered, or else the user
    (a browser session). Two tokens of one user are two callers."""
    return f"token:{token_id}" if token_id is not None else f"user:{user_id}"


@dataclass(frozen=True)
class StoredReadState:
    layers: dict[str, str]  # layer kind -> sha256 of the full text the process received
    stored_at: float = 0.0


def _stored_read_state(stored: Any) -> StoredReadState:
    if isinstance(stored, dict) and isinstance(stored.get("layers"), dict):
        return StoredReadState(layers=stored["layers"], stored_at=stored.get("stored_at", 0.0))
    return StoredReadState(layers={})


def read_state_set(*, project: Project, process: str, caller: str, layers: dict[str, str]) -> None:
    _read_state_store(read_state_key(project=project, process=process, caller=caller), layers)


def _read_state_store(key: str, layers: dict[str, str]) -> None:
    # Not waited for: a lost read state only means the next turn is sent in full.
    set_unanswered(
        key, {"layers": layers, "stored_at": time.time()}, settings.AGENTDOCS_READ_STATE_TTL_SECONDS
    )


def _needs_storing(previous: StoredReadState, layers: dict[str, str]) -> bool:
    # Rewriting an unchanged state on every turn would add a cache round trip to
    # the hot path; rewriting it once half its time to live has passed keeps an
    # active process's state alive all the same.
    age = time.time() - previous.stored_at
    return layers != previous.layers or age > settings.AGENTDOCS_READ_STATE_TTL_SECONDS / 2


def preview_validator(
    *,
    project: Project,
    recipe_name: str | None,
    profile_name: str | None,
    representation: str,
    label: str | None = None,
) -> render_cache.Validator:
    """The ETag of the last preview of ``project`` with these names in ``representation``,
    while the tenant's render inputs are unchanged (`render_cache.validator`). A preview
    reads nothing else: its documents, settings and recipe all bump the generation, and
    the bundled default is part of the validator's build stamp."""
    return render_cache.validator(
        tenant_id=project.tenant_id,
        inputs=(
            "preview",
            project.pk,
            project.slug,
            recipe_name,
            profile_name,
            representation,
            label,
        ),
    )


def render_memory_block(
    *,
    project: Project,
    process: str | None = None,
    caller: str = "",
    recipe_name: str | None = None,
    profile_name: str | None = None,
    client_document: ClientDocument | None = None,
    reset: bool = False,
    preview: bool = False,
    paths: tuple[str, ...] = (),
    rate_limit: ratelimit.Windows | None = None,
    label: str | None = None,
) -> MemoryBlock:
    """Render the Memory Block for one turn of one agent process in ``project``.

    ``project`` is the one `agentdocs.permissions.project_access` returned
    (the caller has checked access; readers may render). ``recipe_name`` and
    ``profile_name`` name a recipe of the tenant and one of its profiles; an
    unknown one raises NotFound. ``client_document`` is used only when the
    profile opts in; its name and size are the caller's to check (the API's
    serializer refuses what the wire may not carry). ``paths`` are the files the
    task touches (`validate_paths`): scoped `.AGENTS/` documents are included when
    one matches their globs. ``rate_limit`` (`agentdocs.ratelimit.windows`: the
    token's and the person's) is counted in the render's first cache round trip;
    past a limit, RateLimited is raised before anything else is read. ``label``
    (else the recipe's `params.label`) makes each document resolve to its version
    under that label, or to its latest where it has none (`agentdocs.core.labels`).

    Unless ``preview``, the render uses and updates the read state of
    ``process`` as rendered by ``caller`` (both required then; `caller_of`):
    layers the process already received are replaced by a stub. ``reset`` forgets
    that state first, so everything is sent in full. A preview sends everything in
    full and touches no read state.

    Every render reads the current committed versions. The result is a
    `agentdocs.core.MemoryBlock`: ``text``, ``sha256``, ``layers`` (the
    account), ``context`` (budget, sources, dropped) and ``options``. The
    composition itself is `agentdocs.core.compose_memory_block`, a pure
    function: given the same `MemoryBlockInputs` (for example rebuilt from
    stored versions) and the read state `replay_read_state(layers)`, it gives
    byte-identical text.
    """
    state_key = None
    if not preview:
        process = validate_process(process)
        state_key = read_state_key(project=project, process=process, caller=caller)
    inputs, stored, memo = _inputs_and_read_state(
        project=project,
        recipe_name=recipe_name,
        profile_name=profile_name,
        client_document=client_document,
        state_key=state_key,
        paths=paths,
        rate_limit=rate_limit,
        label=label,
    )
    if preview:
        return compose_memory_block(inputs, memo=memo)
    block = compose_memory_block(inputs, read_state={} if reset else stored.layers, memo=memo)
    # After a reset the process holds exactly what this turn sent. When that is what
    # the stored state says already (nothing changed since it was last sent in full),
    # there is nothing to write.
    if state_key is not None and _needs_storing(stored, block.read_state):
        _read_state_store(state_key, block.read_state)
    first = reset or not stored.layers
    render_costs.render_counted(
        project=project, recipe=recipe_name, block=block, first=first, memo=memo
    )
    return block

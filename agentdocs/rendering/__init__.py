"""The rendering core: plain Python over plain data, no Django.

- `cascade`: the agent document cascade (project, tenant `_vance`, bundled default).
- `context`: the `.AGENTS/` loader, over data or a local folder.
- `policy`: merging `memory.*` settings.
- `recipes`: what a recipe and profile mean for one render.
- `memory_block`: composing the block, its account and the per-process dedup.

The database reads happen before, in `agentdocs.services.memory_block`; the
command-line client uses the loader directly.
"""

from agentdocs.rendering.cascade import (
    CascadeResult,
    Level,
    SourceDocument,
    read_default_document,
    resolve_cascade,
)
from agentdocs.rendering.context import (
    ContextDocument,
    LoadedContext,
    load_context,
    load_context_dir,
    load_context_from_mapping,
)
from agentdocs.rendering.memory_block import (
    ClientDocument,
    Layer,
    LayerKind,
    LayerState,
    MemoryBlock,
    MemoryBlockInputs,
    compose_memory_block,
    replay_read_state,
)
from agentdocs.rendering.policy import PolicySetting, merge_policy
from agentdocs.rendering.recipes import RenderOptions

__all__ = [
    "CascadeResult",
    "ClientDocument",
    "ContextDocument",
    "Layer",
    "LayerKind",
    "LayerState",
    "Level",
    "LoadedContext",
    "MemoryBlock",
    "MemoryBlockInputs",
    "PolicySetting",
    "RenderOptions",
    "SourceDocument",
    "compose_memory_block",
    "load_context",
    "load_context_dir",
    "load_context_from_mapping",
    "merge_policy",
    "read_default_document",
    "replay_read_state",
    "resolve_cascade",
]

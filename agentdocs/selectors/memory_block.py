"""The reads of a Memory Block render: one statement for the recipe, the `memory.*`
settings, the documents and the skills the render may use (`agentdocs.sql.render_reads`,
written by hand because the render is the hot path)."""

from __future__ import annotations

from agentdocs.models import Project
from agentdocs.sql import render_reads
from agentdocs.sql.render_reads import RenderRows

__all__ = ["CONTEXT_PATH_PREFIX", "RenderRows", "memory_block_rows"]

# The folder of a project's context documents, as stored paths spell it.
CONTEXT_PATH_PREFIX = ".AGENTS/"


def memory_block_rows(
    *, project: Project, recipe_name: str | None, label: str | None = None
) -> RenderRows:
    """The rows one render of ``project`` reads, with the recipe ``recipe_name`` (None:
    the default), each document at its version under ``label`` (else the recipe's
    `params.label`) where it has one, as plain data the render cache keeps as it is."""
    return render_reads.render_rows(
        project=project, recipe_name=recipe_name, context_prefix=CONTEXT_PATH_PREFIX, label=label
    )

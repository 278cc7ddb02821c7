"""Export, Django side: the reads a render does, then the pure layout.

An export reads exactly what a Memory Block render reads (`memory_block_inputs`:
one query, or none while the tenant's rows in the shared cache are current)
and hands it to `agentdocs.core.export.build_export`.
"""

from __future__ import annotations

from agentdocs.core.errors import InvalidInput
from agentdocs.core.export import EXPORT_FORMATS, Export, build_export
from agentdocs.models import Project
from agentdocs.services.memory_block import memory_block_inputs


def validate_format(format: str | None) -> str:
    if format not in EXPORT_FORMATS:
        raise InvalidInput(
            f"`format` must be one of {', '.join(EXPORT_FORMATS)}.",
            field="format",
        )
    return format


def export_build(
    *,
    project: Project,
    format: str,
    recipe_name: str | None = None,
    profile_name: str | None = None,
) -> Export:
    """The files of ``format`` for ``project`` (the caller has checked access; readers
    may export). An unknown format is InvalidInput naming `format`; an unknown recipe
    or profile is NotFound, as for a render."""
    format = validate_format(format)
    inputs = memory_block_inputs(
        project=project, recipe_name=recipe_name, profile_name=profile_name
    )
    return build_export(inputs, tenant=project.tenant.slug, project=project.slug, format=format)

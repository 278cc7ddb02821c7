"""Reads of an export: the files of a format for a project (`export_build`), the
skills' files it carries, and whether it is over the size one answer may hold
(`AGENTDOCS_MAX_EXPORT_BYTES`).

An export reads exactly what a Memory Block render reads (`memory_block_inputs`: one
query, or none while the tenant's rows in the shared cache are current) and hands it
to `agentdocs.core.export.build_export`.
"""

from __future__ import annotations

from django.conf import settings

from agentdocs.core.errors import TooLarge
from agentdocs.core.export import Export, build_export, validate_format
from agentdocs.core.memory_block import MemoryBlockInputs
from agentdocs.core.skill_export import ExportedSkill
from agentdocs.models import Project
from agentdocs.selectors import skills as skill_selectors
from agentdocs.selectors.memory_block import memory_block_inputs


def export_over_limit(export: Export) -> bool:
    return export.size > settings.AGENTDOCS_MAX_EXPORT_BYTES


def export_check_size(export: Export) -> None:
    """TooLarge naming `format` when the export's files hold more than
    `AGENTDOCS_MAX_EXPORT_BYTES`: one answer of that size would hold a worker's memory
    and the member's connection for as long as it takes."""
    limit = settings.AGENTDOCS_MAX_EXPORT_BYTES
    if export.size > limit:
        raise TooLarge(
            f"The {export.format} export's files hold {export.size:,} bytes; an export "
            f"holds at most {limit:,}. Export one format at a time, or a recipe whose "
            "documents are fewer.",
            field="format",
            size=export.size,
            limit=limit,
        )


def export_skills(
    *, tenant_id: int, inputs: MemoryBlockInputs, history: bool = False
) -> list[ExportedSkill]:
    """The skills ``inputs`` offer (the recipe's choice, each at the version the render
    read: its labelled one, read by a label), with their files, for an export: one
    query, two when a label selects an older version, none when no skill is offered.
    With ``history``, each from the skills' history (an export rebuilt from a binding
    record)."""
    files = skill_selectors.skill_files_of(
        tenant_id=tenant_id, skills=inputs.skills, history=history
    )
    # Read by a label: a skill at an older version than its live one is in its history
    # (one more query, only then).
    older = [skill for skill in inputs.skills if (skill.project, skill.name) not in files]
    if older and not history:
        files |= skill_selectors.skill_files_of(tenant_id=tenant_id, skills=older, history=True)
    return [
        ExportedSkill(
            name=skill.name,
            project=skill.project,
            version=skill.version,
            sha256=skill.sha256,
            files=files[(skill.project, skill.name)],
        )
        for skill in inputs.skills
        if (skill.project, skill.name) in files
    ]


def export_build(
    *,
    project: Project,
    format: str,
    recipe_name: str | None = None,
    profile_name: str | None = None,
    within_limit: bool = True,
    label: str | None = None,
) -> Export:
    """The files of ``format`` for ``project`` (the caller has checked access; readers
    may export). An unknown format is InvalidInput naming `format`; an unknown recipe
    or profile is NotFound, as for a render. With ``within_limit`` (the default), an
    export over `AGENTDOCS_MAX_EXPORT_BYTES` is TooLarge naming `format`, before any
    JSON or zip of it is made; the Export page asks without it, to list the files.
    ``label`` reads each document at its version under that label, as a render does."""
    format = validate_format(format)
    inputs = memory_block_inputs(
        project=project, recipe_name=recipe_name, profile_name=profile_name, label=label
    )
    export = build_export(
        inputs,
        tenant=project.tenant.slug,
        project=project.slug,
        format=format,
        skills=export_skills(tenant_id=project.tenant_id, inputs=inputs),
    )
    if within_limit:
        export_check_size(export)
    return export

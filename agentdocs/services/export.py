"""Export, Django side: the reads a render does, then the pure layout (the skills' files
and the size check are `agentdocs.selectors.export`'s).

An export reads exactly what a Memory Block render reads (`memory_block_inputs`:
one query, or none while the tenant's rows in the shared cache are current)
and hands it to `agentdocs.core.export.build_export`.
"""

from __future__ import annotations

from agentdocs.core.cascade import resolve_cascade
from agentdocs.core.explain import Explanation, Shadowed, explain
from agentdocs.core.export import Export, build_export, validate_format
from agentdocs.core.targets import LoadingTool
from agentdocs.models import Project
from agentdocs.selectors import repositories as repository_selectors
from agentdocs.selectors.export import export_check_size, export_skills
from agentdocs.services.memory_block import memory_block_inputs


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


def export_explain(
    *,
    project: Project,
    tool: LoadingTool,
    path: str,
    label: str | None = None,
    repository_id: int | None = None,
) -> Explanation:
    """What ``tool`` loads for ``path`` from ``project``'s current export of its format
    (`agentdocs.core.explain`), with the agent notes the cascade passes over: the same
    reads as one export. With ``repository_id``, only the files that repository's last
    report holds, each with its state there (NotFound naming `repository` for none of
    the project's)."""
    held = None
    if repository_id is not None:
        held = repository_selectors.repository_get(
            project=project, repository_id=repository_id
        ).files
    inputs = memory_block_inputs(project=project, recipe_name=None, profile_name=None, label=label)
    export = build_export(
        inputs, tenant=project.tenant.slug, project=project.slug, format=tool.format
    )
    shadowed: list[Shadowed] = []
    notes = inputs.options.agent_document
    if notes is not None:
        cascade = resolve_cascade(notes, inputs.agent_candidates)
        if cascade.winner is not None:
            winner = f"{cascade.winner.project or 'bundled'}/{cascade.winner.path}"
            shadowed = [
                Shadowed(
                    f"{other.project or 'bundled'}/{other.path}",
                    winner,
                    f"the cascade takes the first level that has {notes}: "
                    f"{cascade.winner.level} before {other.level}",
                )
                for other in cascade.shadowed
            ]
    scopes = {document.path: document.scope for document in inputs.context_documents}
    return explain(tool, export.files, path, scopes=scopes, shadowed_notes=shadowed, held=held)

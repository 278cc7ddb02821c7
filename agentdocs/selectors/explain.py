"""Explain: what a tool loads for a path from a project's current export, with the agent
notes the cascade passes over (`agentdocs.core.explain`): the same reads as one export."""

from __future__ import annotations

from agentdocs.core.cascade import resolve_cascade
from agentdocs.core.explain import Explanation, Shadowed, explain
from agentdocs.core.export import build_export
from agentdocs.core.targets import LoadingTool
from agentdocs.models import Project
from agentdocs.selectors import repositories as repository_selectors
from agentdocs.selectors.memory_block import memory_block_inputs


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

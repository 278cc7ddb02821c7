"""The reads of a Memory Block render: one statement for the recipe, the `memory.*`
settings, the documents and the skills the render may use (`agentdocs.sql.render_reads`,
written by hand because the render is the hot path), and the render's inputs made of
them (`memory_block_inputs`), as plain data for the pure core.

A render itself (`agentdocs.services.memory_block`) keeps its rows in the shared cache
and a process's read state there; `memory_block_inputs` reads the cache and never fills
it (`agentdocs.selectors.render_cache.current_rows`, which keeps a copy in this process
only): exports, repository states and bindings read what a render reads.
"""

from __future__ import annotations

from django.conf import settings

from agentdocs.core.cascade import Level, SourceDocument, read_default_document
from agentdocs.core.context import ContextDocument, is_context_name
from agentdocs.core.errors import NotFound
from agentdocs.core.labels import LATEST, optional_label
from agentdocs.core.memory_block import ClientDocument, MemoryBlockInputs
from agentdocs.core.recipes import LABEL_PARAM, RenderOptions
from agentdocs.core.skill_index import (
    SKILLS_PARAM,
    IndexedSkill,
    offered,
    selected,
    skill_selection,
)
from agentdocs.models import RESERVED_PROJECT, Project
from agentdocs.selectors.render_cache import Rows, current_rows
from agentdocs.sql import render_reads
from agentdocs.sql.render_reads import RenderRows

__all__ = [
    "CONTEXT_PATH_PREFIX",
    "RenderRows",
    "inputs_from_rows",
    "memory_block_inputs",
    "memory_block_rows",
    "rows_size",
]

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


def rows_size(rows: RenderRows) -> int:
    """About how many bytes ``rows`` hold (their documents), for the bound on this
    process's copies."""
    return sum(len(body) + len(path) for _, path, body, *_ in rows.documents)


def memory_block_inputs(
    *,
    project: Project,
    recipe_name: str | None = None,
    profile_name: str | None = None,
    client_document: ClientDocument | None = None,
    paths: tuple[str, ...] = (),
    label: str | None = None,
) -> MemoryBlockInputs:
    """Everything a render of ``project`` reads, as plain data for the pure core: one query,
    or none while the tenant's rows in the shared cache are current (`current_rows`)."""
    recipe = recipe_name or None
    cached = current_rows(
        tenant_id=project.tenant_id,
        project_id=project.pk,
        recipe=recipe,
        label=label,
        read=lambda: memory_block_rows(project=project, recipe_name=recipe, label=label),
        size=rows_size,
    )
    return inputs_from_rows(
        cached,
        project=project,
        recipe_name=recipe_name,
        profile_name=profile_name,
        client_document=client_document,
        paths=paths,
        label=label,
    )


def inputs_from_rows(
    cached: Rows,
    *,
    project: Project,
    recipe_name: str | None,
    profile_name: str | None,
    client_document: ClientDocument | None,
    paths: tuple[str, ...],
    label: str | None,
) -> MemoryBlockInputs:
    """The render's inputs made of ``cached`` (its rows, with what was derived from them
    before in ``cached.memo``): an unknown recipe or profile is NotFound."""
    rows: RenderRows = cached.rows
    options = _options(rows, recipe_name=recipe_name, profile_name=profile_name)
    read_by = _label(rows, label=label)
    # What the rows give for these options, made once while the rows stay current.
    documents_key = ("documents", options.agent_document, options.context_enabled)
    if documents_key not in cached.memo:
        cached.memo[documents_key] = _documents(
            rows, project=project, options=options, label=read_by
        )
    candidates, context = cached.memo[documents_key]
    if "skills" not in cached.memo:
        cached.memo["skills"] = _skills(rows, project=project, label=read_by)
    if options.agent_document is not None:
        # The bundled default stage, read on every render (a file that usually is not there).
        default = read_default_document(
            settings.AGENTDOCS_DEFAULT_DOCUMENTS_DIR, options.agent_document
        )
        if default is not None:
            candidates = (*candidates, default)
    return MemoryBlockInputs(
        options=options,
        settings=rows.settings,
        agent_candidates=candidates,
        client_document=client_document,
        context_documents=context,
        paths=paths,
        label=read_by,
        skills=cached.memo["skills"],
    )


def _options(
    rows: RenderRows, *, recipe_name: str | None, profile_name: str | None
) -> RenderOptions:
    """The options a recipe and profile give; no recipe behaves as "not set".

    An unknown recipe or profile is NotFound, never a silent default.
    """
    if not recipe_name:
        if profile_name:
            raise NotFound(
                f"No profile {profile_name!r}: profiles belong to a recipe, and none was named.",
                field="profile",
            )
        return RenderOptions()
    if rows.recipe is None:
        raise NotFound(f"No recipe {recipe_name!r} in this tenant.", field="recipe")
    params, profiles = rows.recipe
    profile = None
    if profile_name:
        profile = (profiles or {}).get(profile_name)
        if profile is None:
            raise NotFound(
                f"The recipe {recipe_name!r} has no profile {profile_name!r}.", field="profile"
            )
    return RenderOptions.from_recipe(params, profile)


def _is_context_path(path: str) -> bool:
    return path.startswith(CONTEXT_PATH_PREFIX) and is_context_name(
        path[len(CONTEXT_PATH_PREFIX) :]
    )


def _label(rows: RenderRows, *, label: str | None) -> str | None:
    """The label the render reads by: the request's (`latest`: none), else the recipe's
    `params.label` (as the rows' statement chose it)."""
    if label is not None or rows.recipe is None:
        return None if label == LATEST else label
    params = rows.recipe[0]
    return optional_label(params.get(LABEL_PARAM)) if isinstance(params, dict) else None


def _documents(
    rows: RenderRows, *, project: Project, options: RenderOptions, label: str | None
) -> tuple[tuple[SourceDocument, ...], tuple[ContextDocument, ...]]:
    """The stored agent document candidates (project, then `_vance`), and the `.AGENTS/`
    documents; read by ``label``, each says whether it had it."""
    agent_path = options.agent_document
    candidates: list[SourceDocument] = []
    context: list[ContextDocument] = []
    for project_id, path, body, version, sha256, labelled in rows.documents:
        fallback = label is not None and not labelled
        own = project_id == project.pk
        if path == agent_path:
            candidates.append(
                SourceDocument(
                    level=Level.PROJECT if own else Level.TENANT,
                    path=path,
                    body=body,
                    project=project.slug if own else RESERVED_PROJECT,
                    version=version,
                    sha256=sha256,
                    label_fallback=fallback,
                )
            )
        if own and options.context_enabled and _is_context_path(path):
            context.append(
                ContextDocument(
                    path=path, body=body, version=version, sha256=sha256, label_fallback=fallback
                )
            )
    return tuple(candidates), tuple(context)


def _skills(rows: RenderRows, *, project: Project, label: str | None) -> tuple[IndexedSkill, ...]:
    """The skills the recipe offers (`params.skills`; not set, or no recipe: all), from
    the project's own and `_vance`'s, a project skill replacing the tenant's; read by
    ``label``, each at its labelled version where it has the label (else latest, and
    says so)."""
    params = rows.recipe[0] if rows.recipe is not None else None
    selection = skill_selection(params.get(SKILLS_PARAM) if isinstance(params, dict) else None)
    stored = (
        IndexedSkill(
            name=name,
            description=description,
            project=project.slug if project_id == project.pk else RESERVED_PROJECT,
            version=version,
            sha256=sha256,
            label_fallback=label is not None and not labelled,
        )
        for project_id, name, description, version, sha256, labelled in rows.skills
    )
    return tuple(selected(offered(stored, project=project.slug), selection))

"""The Memory Block, Django side: the reads a render needs, then the pure core.

A render runs a constant number of SQL queries whatever the size of the
project: one for the recipe (only when one is named), one for the documents
(the agent document at the project and `_vance` levels and the project's
direct `.AGENTS/*.md` children together) and one for the `memory.*` settings.
The bundled default is a file read, and the per-process read state lives in
Django's cache (Redis in production): losing it only means the full text is
sent again.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q

from agentdocs.errors import InvalidInput, NotFound
from agentdocs.models import RESERVED_PROJECT, Document, Project, Recipe, Setting
from agentdocs.rendering import (
    ClientDocument,
    ContextDocument,
    Level,
    MemoryBlock,
    MemoryBlockInputs,
    PolicySetting,
    RenderOptions,
    SourceDocument,
    compose_memory_block,
    read_default_document,
)
from agentdocs.rendering.context import is_context_name
from agentdocs.services.documents import MAX_BODY_BYTES

MAX_PROCESS_LENGTH = 200
MAX_CLIENT_NAME_LENGTH = 255
# A client document goes into the prompt like a stored one, so the same limit applies.
MAX_CLIENT_DOCUMENT_BYTES = MAX_BODY_BYTES
CONTEXT_PATH_PREFIX = ".AGENTS/"
CONTEXT_PATH_PATTERN = r"^\.AGENTS/[^/]+\.md$"


def _has_control_characters(value: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in value)


def validate_process(process: object) -> str:
    if process is None or process == "":
        raise InvalidInput(
            "`process` is required: the id of the agent process this block is for.",
            field="process",
        )
    if not isinstance(process, str):
        raise InvalidInput("`process` must be a string.", field="process")
    if len(process) > MAX_PROCESS_LENGTH or _has_control_characters(process):
        raise InvalidInput(
            f"`process` must be one line of at most {MAX_PROCESS_LENGTH} characters.",
            field="process",
        )
    return process


def validate_client_document(value: object) -> ClientDocument | None:
    """``{"name": ..., "body": ...}`` or None; at most 256 KiB of UTF-8."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput(
            '`client_document` must be an object {"name": ..., "body": ...} or null.',
            field="client_document",
        )
    unknown = sorted(set(value) - {"name", "body"})
    if unknown:
        raise InvalidInput(
            f"Unknown field {unknown[0]!r}; a client document has name and body.",
            field=f"client_document.{unknown[0]}",
        )
    name = value.get("name")
    if (
        not isinstance(name, str)
        or not name.strip()
        or len(name) > MAX_CLIENT_NAME_LENGTH
        or _has_control_characters(name)
    ):
        raise InvalidInput(
            "The client document's name must be one line of 1 to "
            f"{MAX_CLIENT_NAME_LENGTH} characters, such as CLAUDE.md.",
            field="client_document.name",
        )
    body = value.get("body")
    if not isinstance(body, str):
        raise InvalidInput(
            "The client document's body must be a string.", field="client_document.body"
        )
    try:
        size = len(body.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(
            "The client document's body is not valid UTF-8 text.", field="client_document.body"
        ) from None
    if size > MAX_CLIENT_DOCUMENT_BYTES:
        raise InvalidInput(
            f"The client document is {size} bytes; at most {MAX_CLIENT_DOCUMENT_BYTES} bytes "
            "(256 KiB) are allowed.",
            field="client_document.body",
        )
    return ClientDocument(name=name, body=body)


def render_options(
    *, project: Project, recipe_name: str | None, profile_name: str | None
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
    recipe = (
        Recipe.objects.filter(tenant_id=project.tenant_id, name=recipe_name)
        .values_list("params", "profiles")
        .first()
    )
    if recipe is None:
        raise NotFound(f"No recipe {recipe_name!r} in this tenant.", field="recipe")
    params, profiles = recipe
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


def _documents(
    *, project: Project, options: RenderOptions
) -> tuple[tuple[SourceDocument, ...], tuple[ContextDocument, ...]]:
    """The agent document candidates and the `.AGENTS/` documents, in one query."""
    agent_path = options.agent_document
    wanted = Q()
    if agent_path is not None:
        wanted |= Q(project_id=project.pk, path=agent_path)
        if not project.is_reserved:
            wanted |= Q(
                project__tenant_id=project.tenant_id,
                project__slug=RESERVED_PROJECT,
                path=agent_path,
            )
    if options.context_enabled:
        wanted |= Q(
            project_id=project.pk,
            path__startswith=CONTEXT_PATH_PREFIX,
            path__regex=CONTEXT_PATH_PATTERN,
        )
    if not wanted:
        return (), ()
    rows = Document.objects.filter(wanted, is_deleted=False).values_list(
        "project_id", "path", "body", "version", "sha256"
    )
    candidates: list[SourceDocument] = []
    context: list[ContextDocument] = []
    for project_id, path, body, version, sha256 in rows:
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
                )
            )
        if own and options.context_enabled and _is_context_path(path):
            context.append(ContextDocument(path=path, body=body, version=version, sha256=sha256))
    if agent_path is not None:
        default = read_default_document(settings.AGENTDOCS_DEFAULT_DOCUMENTS_DIR, agent_path)
        if default is not None:
            candidates.append(default)
    return tuple(candidates), tuple(context)


def _policy_settings(*, project: Project) -> tuple[PolicySetting, ...]:
    rows = Setting.objects.filter(
        Q(project__isnull=True) | Q(project_id=project.pk), tenant_id=project.tenant_id
    ).values_list("project_id", "key", "value", "enforced")
    return tuple(
        PolicySetting(
            key=key,
            value=value,
            level="tenant" if project_id is None else "project",
            enforced=enforced,
        )
        for project_id, key, value, enforced in rows
    )


def memory_block_inputs(
    *,
    project: Project,
    recipe_name: str | None = None,
    profile_name: str | None = None,
    client_document: ClientDocument | None = None,
) -> MemoryBlockInputs:
    """Everything a render of ``project`` reads, as plain data for the pure core."""
    options = render_options(project=project, recipe_name=recipe_name, profile_name=profile_name)
    candidates, context = _documents(project=project, options=options)
    return MemoryBlockInputs(
        options=options,
        settings=_policy_settings(project=project),
        agent_candidates=candidates,
        client_document=client_document,
        context_documents=context,
    )


def read_state_key(*, project: Project, process: str) -> str:
    """Scoped by tenant and project: no tenant can reach another's read state."""
    digest = hashlib.sha256(process.encode("utf-8")).hexdigest()[:40]
    return f"read-state:v1:{project.tenant_id}:{project.pk}:{digest}"


def read_state_get(*, project: Project, process: str) -> dict[str, str]:
    state = cache.get(read_state_key(project=project, process=process))
    return state if isinstance(state, dict) else {}


def read_state_set(*, project: Project, process: str, state: dict[str, str]) -> None:
    cache.set(
        read_state_key(project=project, process=process),
        state,
        settings.AGENTDOCS_READ_STATE_TTL_SECONDS,
    )


def read_state_forget(*, project: Project, process: str) -> None:
    cache.delete(read_state_key(project=project, process=process))


def render_memory_block(
    *,
    project: Project,
    process: str | None = None,
    recipe_name: str | None = None,
    profile_name: str | None = None,
    client_document: ClientDocument | dict[str, Any] | None = None,
    reset: bool = False,
    preview: bool = False,
) -> MemoryBlock:
    """Render the Memory Block for one turn of one agent process in ``project``.

    ``project`` is the one `agentdocs.permissions.project_access` returned
    (the caller has checked access; readers may render). ``recipe_name`` and
    ``profile_name`` name a recipe of the tenant and one of its profiles; an
    unknown one raises NotFound. ``client_document`` is a
    `ClientDocument` or ``{"name", "body"}``, used only when the profile opts in.

    Unless ``preview``, the render uses and updates the read state of
    ``process`` (required then): layers the process already received are
    replaced by a stub. ``reset`` forgets that state first, so everything is
    sent in full. A preview sends everything in full and touches no read state.

    Every render reads the current committed versions. The result is a
    `agentdocs.rendering.MemoryBlock`: ``text``, ``sha256``, ``layers`` (the
    account), ``context`` (budget, sources, dropped) and ``options``. The
    composition itself is `agentdocs.rendering.compose_memory_block`, a pure
    function: given the same `MemoryBlockInputs` (for example rebuilt from
    stored versions) and the read state `replay_read_state(layers)`, it gives
    byte-identical text.
    """
    if not isinstance(client_document, ClientDocument):
        client_document = validate_client_document(client_document)
    if not isinstance(reset, bool):
        raise InvalidInput("`reset` must be true or false.", field="reset")
    if not preview:
        process = validate_process(process)
    inputs = memory_block_inputs(
        project=project,
        recipe_name=recipe_name,
        profile_name=profile_name,
        client_document=client_document,
    )
    if preview:
        return compose_memory_block(inputs)
    read_state = {} if reset else read_state_get(project=project, process=process)
    block = compose_memory_block(inputs, read_state=read_state)
    read_state_set(project=project, process=process, state=block.read_state)
    return block

"""Composing the Memory Block from plain inputs: layers, account and dedup.

`compose_memory_block` is a pure, deterministic function: the same inputs
and read state always give byte-identical text. That is what lets a binding
record re-render a block from stored document versions and compare hashes.

Layers, in order: policy (`memory.*` settings), agent notes (the cascade),
client agent notes (opt-in per profile), project context (`.AGENTS/`) and the
skills index (each offered skill's name and description; only when the recipe
offers any).
Each layer is sent in full once per process; later renders with the same
read state replace an unchanged layer by one stub sentence under its heading.
A document's lines that would read as the block's own structure (a `<context>` tag, a
layer heading) are sent neutralized (`agentdocs.core.block_structure`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Annotated, Any, NotRequired, TypedDict

from agentdocs.core.block_structure import STRUCTURE_VERSION, neutralize
from agentdocs.core.cascade import (
    CascadeReference,
    CascadeResult,
    Level,
    SourceDocument,
    resolve_cascade,
)
from agentdocs.core.context import (
    ContextAccount,
    ContextDocument,
    LoadedContext,
    empty_context,
    load_context,
    sha256_text,
)
from agentdocs.core.hidden_characters import count_hidden
from agentdocs.core.layer_headings import AGENT_NOTES_PREFIX, CONTEXT_HEADING, POLICY_HEADING
from agentdocs.core.policy import (
    MergedPolicy,
    PolicySetting,
    RefusedOverride,
    SettingAccount,
    merge_policy,
)
from agentdocs.core.recipes import RenderOptions, RenderOptionsDict
from agentdocs.core.shapes import Doc
from agentdocs.core.skill_index import (
    SKILLS_HEADING,
    IndexedSkill,
    SkillAccount,
    skills_index_lines,
    skills_index_text,
)

ReadState = Mapping[str, str]  # layer kind -> sha256 of the layer's full text

CONTEXT_INTRO = (
    "Project context from .AGENTS/, authoritative for this project's conventions and "
    'terminology. Each source is wrapped in <context path="..."> so that you can cite it.'
)


class LayerKind(StrEnum):
    POLICY = "policy"
    AGENT_NOTES = "agent_notes"
    CLIENT_NOTES = "client_notes"
    CONTEXT = "context"
    SKILLS = "skills"


class LayerState(StrEnum):
    FULL = "full"
    UNCHANGED = "unchanged"
    EMPTY = "empty"
    OFF = "off"
    ABSENT = "absent"
    IGNORED = "ignored"
    TRUNCATED = "truncated"


# The stub that replaces a layer the process has already received in full.
UNCHANGED_STUBS = {
    LayerKind.POLICY: (
        "Policy unchanged from an earlier turn of this process; the values given there still apply."
    ),
    LayerKind.AGENT_NOTES: (
        "Agent notes unchanged from an earlier turn of this process; the full text given "
        "there still applies."
    ),
    LayerKind.CLIENT_NOTES: (
        "Client agent notes unchanged from an earlier turn of this process; the full text "
        "given there still applies."
    ),
    LayerKind.CONTEXT: (
        "Project context unchanged from an earlier turn of this process; the sources given "
        "there still apply."
    ),
    LayerKind.SKILLS: (
        "Skills unchanged from an earlier turn of this process; the index given there "
        "still applies."
    ),
}

_SENT_STATES = {LayerState.FULL, LayerState.TRUNCATED, LayerState.UNCHANGED}
_DEDUPLICATED_STATES = {LayerState.FULL, LayerState.TRUNCATED}


def agent_notes_heading(level: Level, path: str) -> str:
    if level is Level.PROJECT:
        return f"{AGENT_NOTES_PREFIX}{path})"
    if level is Level.TENANT:
        return f"{AGENT_NOTES_PREFIX}from _vance: {path})"
    return f"{AGENT_NOTES_PREFIX}system default: {path})"


def client_notes_heading(name: str) -> str:
    return f"{AGENT_NOTES_PREFIX}from client: {name})"


@dataclass(frozen=True)
class ClientDocument:
    """A file the client uploads from its working folder (`CLAUDE.md`, ...). Not stored."""

    name: str
    body: str

    @property
    def sha256(self) -> str:
        return sha256_text(self.body)

    @property
    def size(self) -> int:
        return len(self.body.encode("utf-8"))


class LayerExtra(TypedDict, total=False):
    """What one kind of layer adds to its account: the policy layer its settings and
    refused overrides, the agent notes the cascade levels they shadow."""

    settings: list[SettingAccount]
    refused_overrides: list[RefusedOverride]
    shadowed: list[CascadeReference]
    neutralized: int
    skills: list[SkillAccount]


class LayerAccount(TypedDict):
    """One layer of the account, as the API returns it and a binding record stores it."""

    kind: Annotated[str, Doc(choices=tuple(LayerKind))]
    heading: str | None
    level: str | None
    project: str | None
    path: str | None
    version: int | None
    sha256: str | None
    bytes: int
    state: Annotated[str, Doc(choices=tuple(LayerState))]
    detail: str
    text_sha256: str | None
    # Absent in records bound before labels (issue 29).
    label: NotRequired[
        Annotated[str | None, Doc("The label the render asked for (`params.label`), or null")]
    ]
    label_fallback: NotRequired[
        Annotated[
            bool,
            Doc("A document of the layer has no such label: its latest version was used"),
        ]
    ]
    settings: NotRequired[Annotated[list[SettingAccount], Doc("Policy: the settings applied")]]
    refused_overrides: NotRequired[
        Annotated[
            list[RefusedOverride],
            Doc("Policy: project settings the tenant's enforced ones refused"),
        ]
    ]
    shadowed: NotRequired[
        Annotated[list[CascadeReference], Doc("Agent notes: the documents this one shadows")]
    ]
    skills: NotRequired[
        Annotated[
            list[SkillAccount],
            Doc("Skills: each offered skill the index lists (name, where stored, version)"),
        ]
    ]
    # Lines of the layer's document(s) neutralized because they would read as the
    # block's own structure (`agentdocs.core.block_structure`); only when there were any.
    neutralized: NotRequired[
        Annotated[
            int,
            Doc(
                "Lines of the layer's document(s) that would have read as the block's own "
                "structure (a <context> tag, a layer heading), sent neutralized; only when "
                "any were"
            ),
        ]
    ]


class HiddenCharactersAccount(TypedDict):
    """A document of the block that holds characters a reader cannot see (saved with
    `acknowledge_hidden`), or a `memory.*` setting in force whose value does (stored
    before values were checked; ``path`` is its key): they reach the model as they are."""

    path: str
    count: int


class MemoryBlockAccount(TypedDict):
    """A rendered block and its account (`MemoryBlock.as_dict`)."""

    text: str
    sha256: str
    layers: list[LayerAccount]
    context: ContextAccount
    options: RenderOptionsDict
    hidden_characters: Annotated[
        list[HiddenCharactersAccount],
        Doc(
            "The documents of the block that hold characters a reader cannot see "
            "(bidi controls, zero-width or tag characters, saved with `acknowledge_hidden`), "
            "and the `memory.*` settings in force whose value does (by key, stored before "
            "values were checked): they reach the model as they are. Empty when none does."
        ),
    ]


@dataclass(frozen=True)
class Layer:
    """One layer of the block and its account.

    ``sha256`` and ``bytes`` describe the source (the document body, the
    policy lines, the rendered context); ``text_sha256`` is the hash of the
    layer's full text, heading included, which the read state compares.
    ``text`` is what this render sends: the full text, a stub or nothing.
    """

    kind: LayerKind
    state: LayerState
    detail: str
    heading: str | None = None
    level: str | None = None
    project: str | None = None
    path: str | None = None
    version: int | None = None
    sha256: str | None = None
    bytes: int = 0
    text: str = ""
    text_sha256: str | None = None
    extra: LayerExtra = field(default_factory=LayerExtra)
    label: str | None = None
    label_fallback: bool = False

    def as_dict(self) -> LayerAccount:
        return {
            "kind": self.kind.value,
            "heading": self.heading,
            "level": self.level,
            "project": self.project,
            "path": self.path,
            "version": self.version,
            "sha256": self.sha256,
            "bytes": self.bytes,
            "state": self.state.value,
            "detail": self.detail,
            "text_sha256": self.text_sha256,
            "label": self.label,
            "label_fallback": self.label_fallback,
            **self.extra,
        }


@dataclass(frozen=True)
class MemoryBlockInputs:
    """Everything a render depends on, read before the pure core runs.

    ``agent_candidates`` are the live documents at ``options.agent_document``
    at each cascade level (at most one per level); ``context_documents`` are
    the project's direct `.AGENTS/*.md` children.
    """

    options: RenderOptions = field(default_factory=RenderOptions)
    settings: tuple[PolicySetting, ...] = ()
    agent_candidates: tuple[SourceDocument, ...] = ()
    client_document: ClientDocument | None = None
    context_documents: tuple[ContextDocument, ...] = ()
    # The files the task touches: a scoped context document is included when one
    # matches its globs. None given, scoped documents are left out (and named).
    paths: tuple[str, ...] = ()
    # Which rules keep documents from forging the block's structure
    # (`agentdocs.core.block_structure`): 0 renders a block as it was before them.
    structure: int = STRUCTURE_VERSION
    # The label the documents were read by (None: latest); each document says whether
    # it had it (`label_fallback`), and the account says so per layer.
    label: str | None = None
    # The skills the recipe offers (`agentdocs.core.skill_index`), by name: the index
    # layer lists them; none, and the block has no such layer.
    skills: tuple[IndexedSkill, ...] = ()


@dataclass(frozen=True)
class MemoryBlock:
    text: str
    sha256: str
    layers: tuple[Layer, ...]
    context: LoadedContext
    options: RenderOptions
    read_state: dict[str, str]  # the process's read state after this render
    # The documents of the block's layers that hold hidden characters, in layer order.
    hidden_characters: tuple[HiddenCharactersAccount, ...] = ()
    # The label the documents were read by (None: latest).
    label: str | None = None

    def layer(self, kind: LayerKind | str) -> Layer:
        return next(layer for layer in self.layers if layer.kind == kind)

    def as_dict(self) -> MemoryBlockAccount:
        return {
            "text": self.text,
            "sha256": self.sha256,
            "layers": [layer.as_dict() for layer in self.layers],
            "context": self.context.as_dict(),
            "options": self.options.as_dict(),
            "hidden_characters": list(self.hidden_characters),
        }


def _full_text(heading: str, body: str) -> str:
    body = body.rstrip()
    return f"{heading}\n\n{body}" if body else heading


def _sent_body(body: str, structure: int) -> tuple[str, LayerExtra]:
    """A document's text as the block sends it (its structure lines neutralized by the
    rules of version ``structure``) and what its layer's account says of that."""
    sent, count = neutralize(body, version=structure)
    return sent, {"neutralized": count} if count else {}


def _neutralized_note(extra: LayerExtra) -> str:
    """What a layer's detail adds when lines of its document were neutralized."""
    count = extra.get("neutralized", 0)
    if not count:
        return ""
    lines = "line" if count == 1 else "lines"
    return f" {count} {lines} that would read as the block's own structure sent neutralized."


def _policy_layer(merged: MergedPolicy, structure: int) -> Layer:
    extra: LayerExtra = {
        "settings": merged.settings_account(),
        "refused_overrides": merged.refused_account(),
    }
    if not merged.values:
        return Layer(
            LayerKind.POLICY,
            LayerState.ABSENT,
            "No memory.* settings at tenant or project level.",
            extra=extra,
        )
    lines = merged.lines
    # A value is one line, but one of the other line boundaries a model reads
    # (U+2028, ...) could still start a structure line.
    sent, neutralized = _sent_body(lines, structure)
    extra.update(neutralized)
    text = _full_text(POLICY_HEADING, sent)
    refused = len(merged.refused)
    count = len(merged.values)
    detail = f"{count} memory.* setting{'' if count == 1 else 's'} in force, tenant then project."
    if refused:
        detail += f" {refused} project override(s) refused: the tenant enforces its value."
    detail += _neutralized_note(extra)
    return Layer(
        LayerKind.POLICY,
        LayerState.FULL,
        detail,
        heading=POLICY_HEADING,
        sha256=sha256_text(lines),
        bytes=len(lines.encode("utf-8")),
        text=text,
        text_sha256=sha256_text(text),
        extra=extra,
    )


def _describe(document: SourceDocument) -> str:
    if document.level is Level.DEFAULT:
        return f"the bundled default {document.path}"
    return f"{document.project}/{document.path}"


def _agent_notes_layer(
    options: RenderOptions, cascade: CascadeResult | None, structure: int
) -> Layer:
    if cascade is None:
        return Layer(
            LayerKind.AGENT_NOTES,
            LayerState.OFF,
            "The recipe turns the agent document off for this process type "
            '(agentDocument is "" or null).',
            extra={"shadowed": []},
        )
    winner = cascade.winner
    if winner is None:
        return Layer(
            LayerKind.AGENT_NOTES,
            LayerState.ABSENT,
            f"No document at {cascade.path} in the project, the tenant's _vance project "
            "or the bundled defaults.",
            path=cascade.path,
            extra={"shadowed": []},
        )
    heading = agent_notes_heading(winner.level, winner.path)
    body, neutralized = _sent_body(winner.body, structure)
    text = _full_text(heading, body)
    empty = not winner.body.strip()
    shadowed = [document.reference() for document in cascade.shadowed]
    detail = f"From the {winner.level.value} level"
    if shadowed:
        detail += "; it shadows " + ", ".join(_describe(document) for document in cascade.shadowed)
    detail += "; the document is empty." if empty else "."
    detail += _neutralized_note(neutralized)
    return Layer(
        LayerKind.AGENT_NOTES,
        LayerState.EMPTY if empty else LayerState.FULL,
        detail,
        heading=heading,
        level=winner.level.value,
        project=winner.project,
        path=winner.path,
        version=winner.version,
        sha256=winner.sha256,
        bytes=winner.size,
        text=text,
        text_sha256=sha256_text(text),
        extra={"shadowed": shadowed, **neutralized},
    )


def _client_notes_layer(
    options: RenderOptions, client: ClientDocument | None, structure: int
) -> Layer:
    if client is None:
        if options.use_client_document:
            return Layer(
                LayerKind.CLIENT_NOTES,
                LayerState.ABSENT,
                "The profile opts in to a client document, but the request carried none.",
            )
        return Layer(
            LayerKind.CLIENT_NOTES,
            LayerState.OFF,
            "The profile does not opt in to a client document (useClientAgentDoc).",
        )
    if not options.use_client_document:
        return Layer(
            LayerKind.CLIENT_NOTES,
            LayerState.IGNORED,
            f"The client document {client.name} was ignored: the profile does not opt in "
            "(useClientAgentDoc).",
            level="client",
            path=client.name,
            sha256=client.sha256,
            bytes=client.size,
        )
    heading = client_notes_heading(client.name)
    body, neutralized = _sent_body(client.body, structure)
    text = _full_text(heading, body)
    empty = not client.body.strip()
    return Layer(
        LayerKind.CLIENT_NOTES,
        LayerState.EMPTY if empty else LayerState.FULL,
        "Uploaded by the client; not stored, bound by hash only."
        + (" The document is empty." if empty else "")
        + _neutralized_note(neutralized),
        heading=heading,
        level="client",
        path=client.name,
        sha256=client.sha256,
        bytes=client.size,
        text=text,
        text_sha256=sha256_text(text),
        extra=neutralized,
    )


def _dropped_note(loaded: LoadedContext) -> str:
    if not loaded.dropped:
        return ""
    names = ", ".join(
        f"{document.path} ({document.text_size} bytes)" for document in loaded.dropped
    )
    return f"[not loaded, over the context budget: {names}]"


def _skipped_note(loaded: LoadedContext) -> str:
    """Scoped documents left out are named in the text, so an agent knows they exist."""
    skipped = loaded.skipped_by_scope
    if not skipped:
        return ""
    count = len(skipped)
    names = "; ".join(
        f"{document.path} (globs: {', '.join(document.scope.globs)})" for document in skipped
    )
    return (
        f"[{count} scoped document{'' if count == 1 else 's'} left out: no path of this "
        f"task matches {'its' if count == 1 else 'their'} globs: {names}]"
    )


def _context_layer(options: RenderOptions, loaded: LoadedContext, available: int) -> Layer:
    if not options.context_enabled:
        return Layer(
            LayerKind.CONTEXT,
            LayerState.OFF,
            "The recipe turns project context off (contextEnabled is false).",
            level="project",
            path=".AGENTS/",
        )
    if available == 0:
        return Layer(
            LayerKind.CONTEXT,
            LayerState.ABSENT,
            "The project has no .AGENTS/*.md documents.",
            level="project",
            path=".AGENTS/",
        )
    body = "\n\n".join(
        part
        for part in (CONTEXT_INTRO, loaded.rendered, _dropped_note(loaded), _skipped_note(loaded))
        if part
    )
    text = _full_text(CONTEXT_HEADING, body)
    cut = loaded.truncated or bool(loaded.dropped)
    detail = (
        f"{len(loaded.sources)} of {available} sources, {loaded.used_bytes} of "
        f"{loaded.budget_bytes} budget bytes"
    )
    if loaded.truncated:
        detail += "; the last source is truncated"
    if loaded.dropped:
        detail += f"; {len(loaded.dropped)} dropped over the budget"
    if loaded.skipped_by_scope:
        detail += (
            f"; {len(loaded.skipped_by_scope)} scoped left out (no path of the task "
            "matches their globs)"
        )
    if loaded.frontmatter_problems:
        names = ", ".join(document.path for document in loaded.frontmatter_problems)
        detail += f"; frontmatter not understood, rendered whole and always applied: {names}"
    neutralized = [source for source in loaded.sources if source.neutralized]
    if neutralized:
        names = ", ".join(f"{s.document.path} ({s.neutralized})" for s in neutralized)
        detail += f"; lines that would read as the block's structure neutralized: {names}"
    return Layer(
        LayerKind.CONTEXT,
        LayerState.TRUNCATED if cut else LayerState.FULL,
        detail + ".",
        heading=CONTEXT_HEADING,
        level="project",
        path=".AGENTS/",
        sha256=sha256_text(loaded.rendered),
        bytes=loaded.used_bytes,
        text=text,
        text_sha256=sha256_text(text),
        extra={"neutralized": loaded.neutralized} if loaded.neutralized else {},
    )


def _skills_layer(skills: tuple[IndexedSkill, ...], budget: int) -> Layer:
    """The skills index: one line per offered skill, as many as fit in ``budget``
    bytes (what the recipe's context budget leaves after the project context); the
    ones left out are named, so an agent knows they exist."""
    lines = skills_index_lines(skills)
    kept: list[IndexedSkill] = []
    used = 0
    for skill, line in lines:
        size = len(line.encode("utf-8")) + 1
        if used + size > budget:
            break
        kept.append(skill)
        used += size
    left_out = [skill.name for skill, _ in lines[len(kept) :]]
    text = skills_index_text(kept, left_out=left_out)
    count = len(kept)
    detail = f"{count} of {len(lines)} offered skill{'' if len(lines) == 1 else 's'} listed"
    if left_out:
        detail += f"; {len(left_out)} left out over the budget ({used} of {budget} bytes)"
    body = text[len(SKILLS_HEADING) :].lstrip("\n")
    return Layer(
        LayerKind.SKILLS,
        LayerState.TRUNCATED if left_out else LayerState.FULL,
        detail + ".",
        heading=SKILLS_HEADING,
        sha256=sha256_text(body),
        bytes=len(body.encode("utf-8")),
        text=text,
        text_sha256=sha256_text(text),
        extra={"skills": [skill.account() for skill in kept]},
    )


def _deduplicated(layer: Layer, read_state: ReadState) -> Layer:
    if layer.state not in _DEDUPLICATED_STATES or read_state.get(layer.kind) != layer.text_sha256:
        return layer
    return Layer(
        layer.kind,
        LayerState.UNCHANGED,
        layer.detail,
        heading=layer.heading,
        level=layer.level,
        project=layer.project,
        path=layer.path,
        version=layer.version,
        sha256=layer.sha256,
        bytes=layer.bytes,
        text=f"{layer.heading}\n\n{UNCHANGED_STUBS[layer.kind]}",
        text_sha256=layer.text_sha256,
        extra=layer.extra,
        label=layer.label,
        label_fallback=layer.label_fallback,
    )


def _hidden_in(sources: Iterable[tuple[str, str]]) -> tuple[HiddenCharactersAccount, ...]:
    """(path, body) → the account of those whose body holds hidden characters."""
    found: list[HiddenCharactersAccount] = []
    for path, body in sources:
        count = count_hidden(body)
        if count:
            found.append({"path": path, "count": count})
    return tuple(found)


def _context(
    inputs: MemoryBlockInputs, memo: MutableMapping[Hashable, Any] | None
) -> tuple[LoadedContext, Layer, tuple[HiddenCharactersAccount, ...]]:
    """The loaded `.AGENTS/` context, its layer and the hidden characters of its
    sources, kept in ``memo`` when one is given: they depend only on the context
    documents, the options that load them and the task's paths, which is the key
    (the documents by identity)."""
    options = inputs.options
    key = (
        "context",
        id(inputs.context_documents),
        options.context_enabled,
        options.context_budget_bytes,
        inputs.paths,
        inputs.structure,
    )
    if memo is not None and key in memo:
        kept: tuple[LoadedContext, Layer, tuple[HiddenCharactersAccount, ...]] = memo[key]
        return kept
    if options.context_enabled and inputs.context_documents:
        loaded = load_context(
            inputs.context_documents,
            budget_bytes=options.context_budget_bytes,
            paths=inputs.paths,
            structure=inputs.structure,
        )
    else:
        loaded = empty_context(options.context_budget_bytes)
    # Scanned once per kept context, not per render.
    hidden = _hidden_in((source.document.path, source.document.body) for source in loaded.sources)
    made = loaded, _context_layer(options, loaded, len(inputs.context_documents)), hidden
    if memo is not None:
        memo[key] = made
    return made


def _policy(
    inputs: MemoryBlockInputs, memo: MutableMapping[Hashable, Any] | None
) -> tuple[Layer, tuple[HiddenCharactersAccount, ...]]:
    """The policy layer and the hidden characters of the `memory.*` values in force,
    kept in ``memo`` under the settings themselves (by value)."""
    key = ("policy", inputs.settings, inputs.structure)
    if memo is not None and key in memo:
        kept: tuple[Layer, tuple[HiddenCharactersAccount, ...]] = memo[key]
        return kept
    policy = merge_policy(inputs.settings)
    hidden = _hidden_in((setting.key, setting.value) for setting in policy.values)
    made = _policy_layer(policy, inputs.structure), hidden
    if memo is not None:
        memo[key] = made
    return made


def _agent_notes(
    inputs: MemoryBlockInputs, memo: MutableMapping[Hashable, Any] | None
) -> tuple[CascadeResult | None, Layer, tuple[HiddenCharactersAccount, ...]]:
    """The cascade's result, the agent notes layer and the hidden characters of the
    winning document, kept in ``memo`` under the candidates themselves (by value: the
    bundled default is read anew on every render)."""
    options = inputs.options
    key = ("agent_notes", options.agent_document, inputs.agent_candidates, inputs.structure)
    if memo is not None and key in memo:
        kept: tuple[CascadeResult | None, Layer, tuple[HiddenCharactersAccount, ...]]
        kept = memo[key]
        return kept
    cascade = (
        resolve_cascade(options.agent_document, inputs.agent_candidates)
        if options.agent_document is not None
        else None
    )
    hidden: tuple[HiddenCharactersAccount, ...] = ()
    if cascade is not None and cascade.winner is not None:
        hidden = _hidden_in([(cascade.winner.path, cascade.winner.body)])
    made = cascade, _agent_notes_layer(options, cascade, inputs.structure), hidden
    if memo is not None:
        memo[key] = made
    return made


def _labelled(
    layers: tuple[Layer, ...],
    label: str,
    *,
    cascade: CascadeResult | None,
    loaded: LoadedContext,
    skills: tuple[IndexedSkill, ...] = (),
) -> tuple[Layer, ...]:
    """The layers saying which label they were read by, and whether a document (or a
    skill) of theirs had none (its latest version was used; a bundled default never has
    one)."""
    winner = cascade.winner if cascade is not None else None
    fallback = {
        LayerKind.AGENT_NOTES: winner is not None
        and (winner.label_fallback or winner.version is None),
        LayerKind.CONTEXT: any(source.document.label_fallback for source in loaded.sources),
        LayerKind.SKILLS: any(skill.label_fallback for skill in skills),
    }
    return tuple(
        replace(layer, label=label, label_fallback=fallback.get(layer.kind, False))
        for layer in layers
    )


def compose_memory_block(
    inputs: MemoryBlockInputs,
    *,
    read_state: ReadState | None = None,
    memo: MutableMapping[Hashable, Any] | None = None,
) -> MemoryBlock:
    """Render the block for ``inputs``; ``read_state`` is what the process already has.

    ``read_state`` None (a preview, or a process's first turn) sends every
    layer in full. The returned block's ``read_state`` is the process's state
    after this render: store it for the next turn.

    ``memo`` is where the loaded context is kept between renders of the same
    ``inputs.context_documents`` object (the service keeps one per set of cached
    rows); with 10,000 context documents, loading them is most of a render. The
    text is the same with or without it.
    """
    options = inputs.options
    cascade, agent_notes, agent_hidden = _agent_notes(inputs, memo)
    loaded, context_layer, context_hidden = _context(inputs, memo)
    policy_layer, policy_hidden = _policy(inputs, memo)
    layers: tuple[Layer, ...] = (
        policy_layer,
        agent_notes,
        _client_notes_layer(options, inputs.client_document, inputs.structure),
        context_layer,
    )
    if inputs.skills:
        # What the context budget leaves: the index travels inside the same bytes.
        remaining = max(options.context_budget_bytes - loaded.used_bytes, 0)
        layers += (_skills_layer(inputs.skills, remaining),)
    if inputs.label is not None:
        layers = _labelled(
            layers, inputs.label, cascade=cascade, loaded=loaded, skills=inputs.skills
        )
    if read_state:
        layers = tuple(_deduplicated(layer, read_state) for layer in layers)
    parts = [layer.text for layer in layers if layer.text]
    text = "\n\n".join(parts) + "\n" if parts else ""
    new_state = {
        layer.kind.value: layer.text_sha256
        for layer in layers
        if layer.state in _SENT_STATES and layer.text_sha256
    }
    hidden = policy_hidden + agent_hidden
    client = inputs.client_document
    if client is not None and options.use_client_document:
        hidden += _hidden_in([(client.name, client.body)])
    hidden += context_hidden
    return MemoryBlock(
        text=text,
        sha256=sha256_text(text),
        layers=layers,
        context=loaded,
        options=options,
        read_state=new_state,
        hidden_characters=hidden,
        label=inputs.label,
    )


def replay_read_state(layers: Iterable[LayerAccount]) -> dict[str, str]:
    """The read state under which a recorded block was rendered, from its layer account.

    Re-rendering a recorded block from the same document versions with this
    read state gives the same text, stubs included.
    """
    state: dict[str, str] = {}
    for layer in layers:
        text_sha256 = layer.get("text_sha256")
        if layer.get("state") == LayerState.UNCHANGED and text_sha256:
            state[layer["kind"]] = text_sha256
    return state

"""The Memory Block a binding record keeps: rendered for the run as a preview (with
the run's recipe, profile, client document and paths), bound to the exact versions it
was rendered from, and reconstructed byte for byte from the record later.

`agentdocs.services.bindings` stores the record; this module makes and reads back its
`memory_block` part, and writes nothing (a render as a preview touches no read state).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings

from agentdocs.core.bindings import (
    BoundMemoryBlock,
    sha256_hex,
    unversioned_source,
)
from agentdocs.core.cascade import Level, SourceDocument, read_default_document
from agentdocs.core.context import ContextDocument
from agentdocs.core.export import Export, build_export
from agentdocs.core.mcp_instructions import CURRENT_FORM, compose_instructions
from agentdocs.core.memory_block import (
    ClientDocument,
    LayerState,
    MemoryBlockInputs,
    compose_memory_block,
)
from agentdocs.core.policy import PolicySetting
from agentdocs.core.recipes import RenderOptions
from agentdocs.core.skill_index import IndexedSkill
from agentdocs.models import BindingRecord, Document, Project, Tenant
from agentdocs.selectors import bindings as binding_selectors
from agentdocs.selectors.export import export_skills
from agentdocs.selectors.memory_block import memory_block_inputs


@dataclass(frozen=True)
class MemoryBlockRequest:
    """The memory block a binding records: rendered as a preview with this recipe,
    profile and client document, and kept with the versions it was rendered from."""

    recipe: str | None = None
    profile: str | None = None
    client_document: ClientDocument | None = None
    # The files the run's task touches (`validate_paths`); scoped documents follow them.
    paths: tuple[str, ...] = ()
    # Bind the MCP session instructions made of this block too, cut to this many bytes
    # (`agentdocs.core.mcp_instructions`); None: a plain block.
    instructions_budget_bytes: int | None = None
    # Read each document at its version under this label (None: the recipe's, or latest).
    label: str | None = None


_CLIENT_TEXT_STATES = {LayerState.FULL, LayerState.EMPTY}


def _bound_input(
    *,
    project: str | None,
    path: str,
    version: int | None,
    sha256: str,
    size: int,
    rows: Mapping,
    label: str | None = None,
    label_fallback: bool = False,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "project": project,
        "path": path,
        "version": version,
        "sha256": sha256,
        "bytes": size,
    }
    if label is not None:
        # Only in a render read by a label, so that other records keep their shape: the
        # label this version was read under, or null when the document had none (latest).
        entry["label"] = None if label_fallback or version is None else label
    row = rows.get((project, path, version))
    if version is None:
        # A bundled default is a file shipped with the application, not a document.
        return {**entry, "custody": "bundled", "document": None}
    if row is None or row["sha256"] != sha256:
        return {**entry, "custody": None, "document": None}
    return {
        **entry,
        "custody": "agentdocs",
        "document": {"id": row["id"], "history_id": row["history_id"]},
    }


def bound_inputs(*, tenant: Tenant, project: Project, inputs: MemoryBlockInputs) -> dict[str, Any]:
    """What a render or an export was made of, each document with the history row that
    restores it: the `memory_block` part of a record without the block's own facts, and
    the inputs a repository section's export is rebuilt from."""
    rows = binding_selectors.history_rows(
        tenant=tenant,
        wanted=[(d.project, d.path, d.version) for d in inputs.agent_candidates if d.version]
        + [(project.slug, d.path, d.version) for d in inputs.context_documents],
    )
    bound: dict[str, Any] = {
        "options": inputs.options.as_dict(),
        "structure": inputs.structure,
        "settings": [
            {"key": s.key, "value": s.value, "level": s.level, "enforced": s.enforced}
            for s in inputs.settings
        ],
        "agent_candidates": [
            {
                "level": d.level.value,
                **_bound_input(
                    project=d.project,
                    path=d.path,
                    version=d.version,
                    sha256=d.sha256,
                    size=d.size,
                    rows=rows,
                    label=inputs.label,
                    label_fallback=d.label_fallback,
                ),
            }
            for d in inputs.agent_candidates
        ],
        "context_documents": [
            _bound_input(
                project=project.slug,
                path=d.path,
                version=d.version,
                sha256=d.sha256,
                size=d.size,
                rows=rows,
                label=inputs.label,
                label_fallback=d.label_fallback,
            )
            for d in inputs.context_documents
        ],
    }
    if inputs.skills:
        # Only when the recipe offered any, so that other records keep their shape: each
        # skill as the index showed it (its description is the whole of its text there).
        bound["skills"] = [_bound_skill(skill, label=inputs.label) for skill in inputs.skills]
    return bound


def _bound_skill(skill: IndexedSkill, *, label: str | None) -> dict[str, Any]:
    """A skill as the index showed it (its description is the whole of its text there);
    read by a label, the label its version was read under (null: it had none, latest)."""
    entry: dict[str, Any] = {**skill.account(), "description": skill.description}
    if label is not None:
        entry["label"] = None if skill.label_fallback else label
    return entry


def _indexed_skill(entry: Mapping[str, Any], *, label: str | None) -> IndexedSkill:
    fields = {key: value for key, value in entry.items() if key != "label"}
    return IndexedSkill(**fields, label_fallback=label is not None and entry.get("label") is None)


def _instructions_of(bound: Mapping[str, Any], *, header: Mapping[str, Any], text: str) -> str:
    """The MCP session instructions made of a bound block's ``text``, as bound."""
    return compose_instructions(
        tenant=header["tenant"],
        project=header["project"],
        process=header["process"],
        house_rules=text,
        budget_bytes=bound["instructions"]["budget_bytes"],
        form=bound["instructions"].get("form", 1),  # records before the form was kept: 1
    )


def binding_memory_block_bind(
    *, tenant: Tenant, project: Project, process: str, request: MemoryBlockRequest
) -> tuple[BoundMemoryBlock, str | None]:
    """Render the block as a preview (no read state touched) and record its inputs,
    so that it can be rendered again, byte for byte, from the bound versions; with the
    MCP session instructions made of it when asked (their hash and budget)."""
    names = {"recipe": request.recipe or None, "profile": request.profile or None}
    client = request.client_document
    inputs = memory_block_inputs(
        project=project,
        recipe_name=names["recipe"],
        profile_name=names["profile"],
        client_document=client,
        paths=request.paths,
        label=request.label,
    )
    block = compose_memory_block(inputs)
    client_layer = block.layer("client_notes")
    bound: dict[str, Any] = {
        **names,
        "sha256": block.sha256,
        "bytes": len(block.text.encode("utf-8")),
        "layers": [layer.as_dict() for layer in block.layers],
        **bound_inputs(tenant=tenant, project=project, inputs=inputs),
        "client_document": None
        if client is None
        else {
            "name": client.name,
            **unversioned_source(client.body),
            "in_text": client_layer.state in _CLIENT_TEXT_STATES,
        },
    }
    if request.paths:
        # Only when given, so that a record bound without paths keeps its earlier shape.
        bound["paths"] = list(request.paths)
    if inputs.label is not None:
        # Likewise: the label the documents were read by (the request's or the recipe's).
        bound["label"] = inputs.label
    instructions = None
    if request.instructions_budget_bytes is not None:
        bound["instructions"] = {
            "budget_bytes": request.instructions_budget_bytes,
            "form": CURRENT_FORM,
        }
        header = {"tenant": tenant.slug, "project": project.slug, "process": process}
        instructions = _instructions_of(bound, header=header, text=block.text)
        encoded = instructions.encode("utf-8")
        bound["instructions"].update(sha256=sha256_hex(encoded), bytes=len(encoded))
    return cast(BoundMemoryBlock, bound), instructions


def _restored_body(entry: Mapping[str, Any], bodies: Mapping[int, Mapping[str, Any]]) -> str | None:
    """The exact text of a bound memory-block input, or None when it cannot be restored."""
    if entry["custody"] == "bundled":
        document = read_default_document(settings.AGENTDOCS_DEFAULT_DOCUMENTS_DIR, entry["path"])
        body = document.body if document is not None else None
    elif entry["custody"] == "agentdocs":
        row = bodies.get(entry["document"]["history_id"])
        body = row["body"] if row is not None and row["id"] == entry["document"]["id"] else None
    else:
        body = None
    if body is None or sha256_hex(body.encode("utf-8")) != entry["sha256"]:
        return None
    return body


def binding_memory_block_reconstruct(*, record: BindingRecord) -> dict[str, Any]:
    bound = record.record["memory_block"]
    result = {"sha256": bound["sha256"], "restored": False, "verified": False, "text": None}
    client = bound.get("client_document")
    if client is not None and client["in_text"]:
        return {
            **result,
            "detail": f"The client document {client['name']} was part of the text and is kept "
            "by hash only, so the block cannot be rendered again.",
        }
    restored = restore_inputs(bound)
    if isinstance(restored, str):
        return {**result, "detail": restored}
    rebuilt = compose_memory_block(restored)
    verified = rebuilt.sha256 == bound["sha256"]
    reconstructed = {
        **result,
        "restored": True,
        "verified": verified,
        "text": rebuilt.text if verified else None,
        "detail": ""
        if verified
        else "The block rendered from the bound versions does not match the recorded sha256.",
    }
    if "instructions" in bound and verified:
        # An MCP session's start: its instructions again, checked against their hash.
        text = _instructions_of(bound, header=record.record, text=rebuilt.text)
        same = sha256_hex(text.encode("utf-8")) == bound["instructions"]["sha256"]
        reconstructed["instructions"] = text if same else None
    return reconstructed


def restore_inputs(bound: Mapping[str, Any]) -> MemoryBlockInputs | str:
    """The render inputs ``bound`` (`bound_inputs`) names, each document's text from its
    history row and checked against its sha256; a sentence naming what cannot be
    restored instead."""
    inputs = [*bound["agent_candidates"], *bound["context_documents"]]
    history_ids = [e["document"]["history_id"] for e in inputs if e["custody"] == "agentdocs"]
    bodies = {
        row["history_id"]: row
        for row in Document.history.model.objects.filter(history_id__in=history_ids).values(
            "history_id", "id", "body"
        )
    }
    found = {id(entry): _restored_body(entry, bodies) for entry in inputs}
    missing = [entry["path"] for entry in inputs if found[id(entry)] is None]
    restored = {key: body for key, body in found.items() if body is not None}
    if missing:
        return (
            "These inputs cannot be restored at their bound versions: " + ", ".join(missing) + "."
        )
    return MemoryBlockInputs(
        options=RenderOptions(**bound["options"]),
        settings=tuple(PolicySetting(**setting) for setting in bound["settings"]),
        agent_candidates=tuple(
            SourceDocument(
                level=Level(entry["level"]),
                path=entry["path"],
                body=restored[id(entry)],
                project=entry["project"],
                version=entry["version"],
                label_fallback=bound.get("label") is not None and entry.get("label") is None,
            )
            for entry in bound["agent_candidates"]
        ),
        context_documents=tuple(
            ContextDocument(
                path=entry["path"],
                body=restored[id(entry)],
                version=entry["version"],
                label_fallback=bound.get("label") is not None and entry.get("label") is None,
            )
            for entry in bound["context_documents"]
        ),
        paths=tuple(bound.get("paths", ())),
        # A record bound before the structure rules renders as it was then.
        structure=bound.get("structure", 0),
        label=bound.get("label"),
        skills=tuple(
            _indexed_skill(skill, label=bound.get("label")) for skill in bound.get("skills", ())
        ),
    )


def binding_export_bind(
    *, tenant: Tenant, project: Project, format: str
) -> tuple[Export, dict[str, Any]]:
    """The project's current export of ``format`` and the inputs it was built from
    (`bound_inputs`): a repository section's in-sync files are rebuilt from them."""
    inputs = memory_block_inputs(project=project)
    export = build_export(
        inputs,
        tenant=tenant.slug,
        project=project.slug,
        format=format,
        skills=export_skills(tenant_id=tenant.pk, inputs=inputs),
    )
    return export, bound_inputs(tenant=tenant, project=project, inputs=inputs)


def binding_export_rebuild(*, record: BindingRecord) -> Export | str:
    """The export a record's repository section was bound against, built again from
    history; a sentence saying why not instead."""
    repository = record.record["repository"]
    bound = repository.get("export")
    if not bound:
        return "No file was in sync with the server's export when the run was bound."
    restored = restore_inputs(bound["inputs"])
    if isinstance(restored, str):
        return restored
    return build_export(
        restored,
        tenant=record.record["tenant"],
        project=record.record["project"],
        format=repository["format"],
        skills=export_skills(tenant_id=record.tenant_id, inputs=restored, history=True),
    )

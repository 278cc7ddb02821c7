"""A binding record checked: read back from history, each part verified against its
recorded sha256 (`binding_reconstruct`), or a repository run's files compared with the
server's export now (`binding_repository_outdated`). Reads only."""

from __future__ import annotations

from typing import Any

from agentdocs.core.hook_delivery import delivery_reconstruct
from agentdocs.core.repository_runs import (
    IN_SYNC,
    repository_outdated_row,
    restore_repository_file,
)
from agentdocs.models import BindingRecord
from agentdocs.selectors import binding_memory_block
from agentdocs.selectors import bindings as binding_selectors


def binding_repository_outdated(*, record: BindingRecord) -> list[dict[str, Any]] | None:
    """Per file of a repository run, its bound sha256 against the server's export of
    that file now (None for a record that is not a repository run). Only an in-sync
    file was the server's; the others say what they were."""
    section = record.record.get("repository")
    if section is None:
        return None
    export, _inputs = binding_memory_block.binding_export_bind(
        tenant=record.tenant, project=record.project, format=section["format"]
    )
    return [
        repository_outdated_row(entry, export.file(entry["path"])) for entry in section["files"]
    ]


def binding_repository_reconstruct(*, record: BindingRecord) -> list[dict[str, Any]] | None:
    """Each file of a repository run: an in-sync file's text rebuilt from history (the
    export built again from the bound versions) and checked against the recorded
    sha256; any other file says where it can be had from (git's blob, or nowhere)."""
    section = record.record.get("repository")
    if section is None:
        return None
    rebuilt = None
    if any(entry["state"] == IN_SYNC for entry in section["files"]):
        rebuilt = binding_memory_block.binding_export_rebuild(record=record)
    return [restore_repository_file(entry, rebuilt) for entry in section["files"]]


def binding_reconstruct(*, record: BindingRecord) -> dict[str, Any]:
    """Every bound source's exact text and, when a memory block was bound, the block
    rendered again from those versions; each verified against its recorded sha256."""
    sources = binding_selectors.binding_reconstruct_sources(record=record)
    block = None
    if record.record.get("memory_block"):
        block = binding_memory_block.binding_memory_block_reconstruct(record=record)
    complete = all(s["verified"] for s in sources) and (block is None or block["verified"])
    result: dict[str, Any] = {"sources": sources, "memory_block": block}
    files = binding_repository_reconstruct(record=record)
    if files is not None:
        result["repository"] = files
        complete = complete and all(f["verified"] for f in files)
    delivery = record.record.get("delivery")
    if delivery is not None:
        result["delivery"] = delivery_reconstruct(delivery)
        complete = complete and result["delivery"]["verified"]
    skills = record.record.get("skills")
    if skills is not None:
        result["skills"] = binding_selectors.binding_skills_reconstruct(skills)
        complete = complete and all(skill["verified"] for skill in result["skills"])
    return {**result, "complete": complete}

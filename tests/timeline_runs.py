"""Runs bound through the binding service for the runs timeline's tests (API, pages,
browser): `bind_fifty_runs`, where the agent document changes at run 41 and again at 46;
`deliver`, one live delivery of an agent session."""

from __future__ import annotations

from agentdocs.core import hook_delivery
from agentdocs.models import Document
from agentdocs.selectors.binding_memory_block import MemoryBlockRequest
from agentdocs.services import bindings as binding_service
from agentdocs.services import documents as document_service

MANIFEST = {"local": ["AGENTS.md"]}
BROKEN = {"local": ["AGENTS.md", "missing.md"]}


def _edit(document: Document, body: str, user) -> Document:
    current = Document.objects.get(pk=document.pk)
    return document_service.document_write(
        document=current, body=body, base_version=current.version, user=user, reason="edit"
    ).document


def bind_runs(tenant, project, user, count, *, manifest=MANIFEST, block=True):
    return [
        binding_service.binding_create(
            tenant=tenant,
            project=project,
            user=user,
            process=f"run-{i}",
            manifest=manifest,
            memory_block=MemoryBlockRequest() if block else None,
        ).record
        for i in range(count)
    ]


def bind_fifty_runs(tenant, project, writer, make_document):
    """50 runs: agent.md is version 1 for runs 1–40, 2 for 41–45, 3 from 46 on; runs
    43 and 44 bound a missing local path (a problem each)."""
    agent = make_document(project, "agent.md", "# Rules v1\n")
    make_document(project, "AGENTS.md", "# Agents\n")
    make_document(project, ".AGENTS/overview.md", "What this is.\n")
    records = bind_runs(tenant, project, writer, 40)
    _edit(agent, "# Rules v2\n", writer)
    records += bind_runs(tenant, project, writer, 2)
    records += bind_runs(tenant, project, writer, 2, manifest=BROKEN)
    records += bind_runs(tenant, project, writer, 1)
    _edit(agent, "# Rules v3\n", writer)
    records += bind_runs(tenant, project, writer, 5)
    return records


def deliver(
    tenant,
    project,
    user,
    session,
    *,
    tool="claude-code",
    event="SessionStart",
    source="startup",
    block="server",
    prefix="",
):
    """Bind one delivery through the binding service, as `agentdocs hook context` does
    through the API: ``prefix`` is printed before the hook's output (the seed's failure)."""
    output = prefix + hook_delivery.hook_output(tool=tool, event=event, text="# House rules\n")
    return binding_service.binding_create(
        tenant=tenant,
        project=project,
        user=user,
        process=session,
        manifest={},
        delivery={
            "tool": tool,
            "event": event,
            "source": source,
            "format": hook_delivery.output_format(tool, event),
            "bytes": len(output.encode()),
            "sha256": hook_delivery.sha256_text(output),
            "output": output,
            "block": block,
        },
    ).record

"""The start of an MCP session: its instructions, bound like a render.

An MCP client (over `agentdocs mcp` or the web app's `/mcp/`) gets the project's house
rules in the server's `instructions` (`agentdocs.core.mcp_instructions`) before the
agent calls any tool. What it was given is recorded as any render a run receives: a
binding record of the Memory Block's inputs by version and of the instructions' hash and
budget, so `binding_reconstruct` gives their exact text again. The process is the one the
client names (its session id) or one made here.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User

from agentdocs.core.errors import HiddenCharacters, InvalidInput, SecretDetected
from agentdocs.core.labels import validate_label_name
from agentdocs.models import BindingRecord, Project, Tenant
from agentdocs.selectors import binding_memory_block
from agentdocs.services import bindings as binding_service
from agentdocs.validation.memory_block import validate_process

# A session binds what it was told, not a manifest of files.
NO_SOURCES: dict[str, list[object]] = {"context": [], "local": []}
GENERATED_PROCESS_PREFIX = "mcp-"


@dataclass(frozen=True)
class McpSessionStart:
    process: str
    instructions: str
    record: BindingRecord


def generated_process() -> str:
    """A process id for a session the client did not name: unguessable, one line."""
    return GENERATED_PROCESS_PREFIX + secrets.token_hex(8)


def mcp_session_start(
    *,
    tenant: Tenant,
    project: Project,
    user: User,
    session: str | None = None,
    label: str | None = None,
) -> McpSessionStart:
    """The instructions of a new MCP session of ``project`` and the record that binds
    them; ``session`` (the client's session id) names the process, else one is made;
    ``label`` is the one the client reads by (a canary client's rules are the canary's)."""
    if label is not None:
        label = validate_label_name(label, field="label")
    if session is None:
        process = generated_process()
    else:
        try:
            process = validate_process(session)
        except (InvalidInput, SecretDetected, HiddenCharacters) as error:
            # The same refusal, naming the field the client sent.
            error.detail = error.detail.replace("`process`", "`session`")
            error.detail = error.detail.replace("The process", "The session")
            error.field = "session"
            raise
    result = binding_service.binding_create(
        tenant=tenant,
        project=project,
        user=user,
        process=process,
        manifest=NO_SOURCES,
        memory_block=binding_memory_block.MemoryBlockRequest(
            instructions_budget_bytes=settings.AGENTDOCS_MCP_INSTRUCTIONS_BYTES, label=label
        ),
    )
    assert result.instructions is not None  # asked for with the block
    return McpSessionStart(process=process, instructions=result.instructions, record=result.record)

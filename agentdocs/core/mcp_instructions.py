"""The `instructions` an MCP server gives a client at the start of a session.

Agent clients (Claude Code, Codex, Gemini CLI) put a server's instructions into the
agent's context before any tool is called, so they carry the project's house rules:
the Memory Block as a preview renders it without any path (the policy, the agent
notes and the always-applied `.AGENTS/` context; scoped documents are named as left
out), cut to a byte budget with the block's own `[truncated: N more bytes]` marker,
then the sentence that sends the agent to `get_memory_block` for the rest.

A pure function of the block's text and a few names, so that a binding record of the
block (its inputs, kept by version), of the budget and of the form gives the same text
again.

What the clients keep of them (measured, docs/mcp.md): Codex only the first line (the
description of the server's tool namespace), Claude Code the first 4,096 characters,
Gemini CLI all. So form 2 says where the rules are in its first line, and puts the
sentence that names the session's process before the rules, so that a cut keeps it.
Records bound before (no `form`) are form 1: a first line that only named the project,
the rules, then the sentence. Both are kept so that every record's instructions are
given again byte for byte.
"""

from __future__ import annotations

from agentdocs.core.context import utf8_head

DEFAULT_BUDGET_BYTES = 16 * 1024
# The forms of the first line (see the module's docstring); new sessions get the last.
FIRST_LINES = {
    1: "The house rules of the project {tenant}/{project}, from agentdocs.",
    2: (
        "The house rules of the project {tenant}/{project}, from agentdocs: call "
        "get_memory_block for them, whole and current, at the start of each task."
    ),
}
CURRENT_FORM = max(FIRST_LINES)


def first_line(*, tenant: str, project: str, form: int = CURRENT_FORM) -> str:
    """The instructions' first line, in ``form``: for clients that keep nothing else."""
    return FIRST_LINES[form].format(tenant=tenant, project=project)


def truncation_marker(more_bytes: int) -> str:
    """The marker a cut text ends with, the same as a cut `.AGENTS/` source's."""
    return f"\n\n[truncated: {more_bytes} more bytes]"


def cut_to_budget(text: str, budget_bytes: int) -> str:
    """``text`` whole when it fits in ``budget_bytes`` UTF-8 bytes, else its head and the
    marker saying how many bytes were left out, the two within the budget."""
    if budget_bytes < 0:
        raise ValueError("budget_bytes must not be negative")
    size = len(text.encode("utf-8"))
    if size <= budget_bytes:
        return text
    # The marker for all of the text is at least as long as the one finally written.
    room = max(budget_bytes - len(truncation_marker(size).encode("utf-8")), 0)
    head = utf8_head(text, room).rstrip()
    return head + truncation_marker(size - len(head.encode("utf-8")))


def rest_sentence(process: str | None) -> str:
    """What the agent does for everything the instructions cannot hold."""
    named = f"this session's is {process!r}; " if process else ""
    return (
        "At the start of each task call get_memory_block with the id of your process "
        f"({named}use the same id on every turn, and reset=true after you compact your "
        "context) and the paths the task touches: it adds the .AGENTS/ documents scoped to "
        "those paths and what changed since. Cite documents with read_document; find them "
        "with list_documents and search_documents."
    )


def compose_instructions(
    *,
    tenant: str,
    project: str,
    process: str | None,
    house_rules: str,
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
    note: str = "",
    form: int = CURRENT_FORM,
) -> str:
    """The session's instructions; ``house_rules`` is the Memory Block preview's text,
    empty when the session could not get it (``note`` then says why); ``form`` is the
    first line's (a record's, when it is given again)."""
    parts = [first_line(tenant=tenant, project=project, form=form)]
    rules = cut_to_budget(house_rules.strip(), budget_bytes)
    if form >= 2:
        parts.append(rest_sentence(process))  # before the rules: a client's cut keeps it
    if note:
        parts.append(note)
    if rules:
        parts.append(
            "They apply to every task in this project; the Memory Block as it stands at the "
            "start of this session:"
        )
        parts.append(rules)
    if form == 1:
        parts.append(rest_sentence(process))
    return "\n\n".join(parts) + "\n"

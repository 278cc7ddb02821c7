"""The headings that open the Memory Block's layers, shared by the block, the export and
live delivery (which reads a block back as its layers); no imports, so the CLI's hook
can use them without loading the renderer."""

from __future__ import annotations

POLICY_HEADING = "## Policy (memory.* settings)"
# An agent notes layer's heading is this prefix, where the notes came from, and `)`.
AGENT_NOTES_PREFIX = "## Agent Notes ("
CONTEXT_HEADING = "## Project Context (.AGENTS/)"

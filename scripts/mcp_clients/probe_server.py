#!/usr/bin/env python3
"""A minimal MCP server over stdio whose `instructions` are made to be measured.

    python3 scripts/mcp_clients/probe_server.py

Its instructions are PROBE_INSTRUCTIONS below: a first line, a second line in the same
paragraph, a second paragraph, then numbered filler paragraphs up to about 24,000
characters and a last line. Which markers reach the model tells whether a client keeps
the first line, the first paragraph or everything, and where it cuts a long text
(agentdocs' own instructions are cut to 16 KiB by default). It offers one tool,
`probe_echo`, and no resources or prompts. Only the standard library is used;
`measure.py` beside this file configures each client to start it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

FIRST_LINE = "PROBE-L1 the first line of the probe server's instructions."
SECOND_LINE = "PROBE-L2 the second line, in the first paragraph."
SECOND_PARAGRAPH = "PROBE-P2 the second paragraph."
FILLER_COUNT = 240
LAST_LINE = "PROBE-END the last line of the probe server's instructions."


def filler(number: int) -> str:
    """Filler paragraph ``number`` (89 characters): its number tells where a cut fell."""
    return f"PROBE-F{number:04d} " + ("filler text that only measures length. " * 2).rstrip()


PROBE_INSTRUCTIONS = "\n".join(
    [
        FIRST_LINE,
        SECOND_LINE,
        "",
        SECOND_PARAGRAPH,
        "",
        *(filler(number) + "\n" for number in range(1, FILLER_COUNT + 1)),
        LAST_LINE,
    ]
)

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
TOOL = {
    "name": "probe_echo",
    "title": "Probe echo",
    "description": "Answers its text back (the probe server's only tool).",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "annotations": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False},
}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "probe", "version": "1"},
            "instructions": PROBE_INSTRUCTIONS,
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        return {"content": [{"type": "text", "text": text}]}
    if method == "resources/list":
        return {"resources": []}
    if method == "resources/templates/list":
        return {"resourceTemplates": []}
    if method == "prompts/list":
        return {"prompts": []}
    if method == "ping":
        return {}
    raise LookupError(method)


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification, or an answer to nothing we asked
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = answer(message["method"], message.get("params") or {})
        except LookupError:
            reply["error"] = {"code": -32601, "message": f"Method not found: {message['method']}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

"""`agentdocs explain --tool TOOL PATH`: what an agent tool loads for a file.

    agentdocs explain --tool codex src/api/handlers.py [--label L] [--json] [--strict]

Asks the project's `explain` endpoint and prints, in the tool's load order, each file
the tool loads for PATH with its size, why it loads it, where its limits cut it and
the scoped documents it holds (the glob that matched); then the rule files it does not
load, what is shadowed and the limits' warnings. ``--json`` prints the server's answer
as it is. TOOL is the registry's id (`codex`, `claude-code`, `cursor`: `export/formats`
lists them as `id`), or an export format.

Exit 0 with the answer; 1 with ``--strict`` when a limit cuts or warns; 2 for usage
errors (an unknown tool, an absolute path or one with `..`: refused before asking) and
any error of the server. No Django here.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any
from urllib.parse import urlencode

from agentdocs.cli.base import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    ServerClient,
    add_server_arguments,
    command,
    require,
    write,
)
from agentdocs.core.errors import InvalidInput
from agentdocs.core.explain import validate_path, validate_tool


def _configure(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    parser.add_argument("--tool", required=True, help="the tool's id: codex, claude-code, ...")
    parser.add_argument("path", help="a file relative to the repository's root (src/api/x.py)")
    parser.add_argument("--label", default="", help="read each document under this label")
    parser.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when the tool's limits cut or warn"
    )


def answer_lines(answer: dict[str, Any]) -> list[str]:
    """The answer in words, one line each."""
    folder = answer.get("folder") or "the root"
    lines = [f"{answer['tool']} ({answer['format']}) for {answer['path']}, working in {folder}:"]
    for index, file in enumerate(answer.get("files", []), start=1):
        cut = "" if file.get("cut_at") is None else f", cut at byte {file['cut_at']:,}"
        lines.append(f"{index}. {file['path']}  {file['bytes']:,} bytes{cut}  ({file['why']})")
        for document in file.get("documents", []):
            lines.append(f"     {document['document']}: {document['why']}")
    for skipped in answer.get("not_loaded", []):
        lines.append(f"not loaded {skipped['path']}  ({skipped['why']})")
    for shadowed in answer.get("shadowed", []):
        lines.append(f"shadowed {shadowed['path']} by {shadowed['by']}  ({shadowed['why']})")
    lines.extend(f"warning {warning}" for warning in answer.get("warnings", []))
    return [f"{line}\n" for line in lines]


@command("explain", help="what an agent tool loads for a file, in its order", configure=_configure)
def run_explain(args: argparse.Namespace) -> int:
    try:
        tool = validate_tool(args.tool)
        path = validate_path(args.path)
    except InvalidInput as error:
        raise CommandError(error.detail, exit_code=EXIT_USAGE) from None
    require(args, "url", "token", "tenant", "project")
    client = ServerClient.from_args(args)
    query = {"tool": tool.slug, "path": path}
    if args.label:
        query["label"] = args.label
    try:
        answer = client.request(
            "GET", client.project_path(args.tenant, args.project, f"explain?{urlencode(query)}")
        )
    except CommandError as error:
        raise CommandError(error.message, exit_code=EXIT_USAGE) from None
    if not isinstance(answer, dict) or not isinstance(answer.get("files"), list):
        raise CommandError("the server answered with something that is not an explanation",
                           exit_code=EXIT_USAGE)  # fmt: skip
    if args.json:
        write(sys.stdout, json.dumps(answer, indent=2) + "\n")
    else:
        write(sys.stdout, "".join(answer_lines(answer)))
    return EXIT_FAILURE if args.strict and answer.get("warnings") else EXIT_OK

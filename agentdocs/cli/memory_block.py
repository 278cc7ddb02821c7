"""`agentdocs block`: render the Memory Block for one turn of an agent process.

It uploads the first of VANCETOPE.md, AGENT.md, CLAUDE.md found in the working
folder as the client document, prints the block to stdout and one line per layer
to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agentdocs.cli.base import (
    EXIT_OK,
    CommandError,
    ServerClient,
    add_server_arguments,
    command,
    require,
    write,
)
from agentdocs.core.memory_block import LayerAccount

AGENT_FILE_NAMES = ("VANCETOPE.md", "AGENT.md", "CLAUDE.md")


def find_agent_file(folder: Path) -> Path | None:
    for name in AGENT_FILE_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def read_client_document(path: Path) -> dict[str, str]:
    try:
        body = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise CommandError(f"cannot read the agent file {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CommandError(f"the agent file {path} is not UTF-8 text") from None
    return {"name": path.name, "body": body}


def layer_line(layer: LayerAccount) -> str:
    label = layer.get("path") or layer["kind"]
    return f"# layer {label} ({layer['bytes']}B, {layer['state']})\n"


def _configure_block(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    parser.add_argument(
        "--process",
        default=os.environ.get("AGENTDOCS_PROCESS"),
        help="the agent process id; later turns of the same process get stubs for what it "
        "already has (default: $AGENTDOCS_PROCESS)",
    )
    parser.add_argument("--recipe", help="a recipe of the tenant")
    parser.add_argument("--profile", help="a profile of the recipe")
    agent_file = parser.add_mutually_exclusive_group()
    agent_file.add_argument(
        "--agent-file",
        type=Path,
        metavar="PATH",
        help=f"upload this file instead of the first of {', '.join(AGENT_FILE_NAMES)} "
        "found in the working folder",
    )
    agent_file.add_argument(
        "--no-agent-file", action="store_true", help="upload no client document"
    )
    parser.add_argument(
        "--reset",
        action="store_true",
        help="forget what this process has received (after compacting its history)",
    )


@command("block", help="render the Memory Block for one turn", configure=_configure_block)
def run_block(args: argparse.Namespace) -> int:
    require(args, "url", "token", "tenant", "project", "process")
    client = ServerClient.from_args(args)
    if args.no_agent_file:
        agent_file = None
    elif args.agent_file is not None:
        agent_file = args.agent_file
    else:
        agent_file = find_agent_file(Path.cwd())
    payload: dict[str, object] = {"process": args.process, "reset": args.reset}
    if args.recipe:
        payload["recipe"] = args.recipe
    if args.profile:
        payload["profile"] = args.profile
    if agent_file is not None:
        payload["client_document"] = read_client_document(agent_file)
    block = client.request(
        "POST", client.project_path(args.tenant, args.project, "memory-block/"), json=payload
    )
    write(sys.stdout, block["text"])
    write(sys.stderr, "".join(layer_line(layer) for layer in block["layers"]))
    return EXIT_OK


# agentdocs context

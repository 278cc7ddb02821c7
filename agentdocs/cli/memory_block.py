"""`agentdocs block`: render the Memory Block for one turn of an agent process.

It uploads the first of VANCETOPE.md, AGENT.md, CLAUDE.md found in the working
folder as the client document, prints the block to stdout and one line per layer
to stderr. When the server cannot be reached, times out (`--timeout`) or answers
5xx, it prints the last good block kept on disk (`agentdocs.client`) with one
warning line, or `--fallback-file` when nothing is cached (docs/cli.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from agentdocs.cli.base import (
    EXIT_OK,
    CommandError,
    ServerClient,
    ServerRefused,
    add_server_arguments,
    command,
    require,
    write,
)
from agentdocs.client import http
from agentdocs.client.blocks import DEFAULT_TIMEOUT_SECONDS, NoCachedBlock, ResilientBlocks
from agentdocs.client.cache import BlockCache, default_cache_dir
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


def add_offline_arguments(parser: argparse.ArgumentParser, *, fallback: bool = True) -> None:
    """What a command that serves the cached block when the server is down takes."""
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the last good block is kept (default: $AGENTDOCS_CACHE_DIR, else "
        "$XDG_CACHE_HOME/agentdocs or ~/.cache/agentdocs)",
    )
    if fallback:
        parser.add_argument(
            "--fallback-file",
            type=Path,
            metavar="PATH",
            help="print this file when the server is unavailable and no block is cached",
        )


def _refused(response: http.Response) -> Exception:
    return ServerRefused(ServerClient.describe_error(response), status=response.status_code)


def _warn(line: str) -> None:
    write(sys.stderr, line + "\n")


def resilient_blocks(
    args: argparse.Namespace,
    client: ServerClient,
    *,
    refused: Callable[[http.Response], Exception] = _refused,
    warn: Callable[[str], None] = _warn,
) -> ResilientBlocks:
    """The project's renders through ``client``, with the cache the options name;
    ``refused`` is the exception for a 4xx answer, ``warn`` writes the warning line."""
    return ResilientBlocks(
        session=client.session,
        api_base=client.base,
        tenant=args.tenant,
        project=args.project,
        cache=BlockCache(args.cache_dir or default_cache_dir()),
        timeout=client.timeout,
        refused=refused,
        warn=warn,
    )


def _configure_block(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser, timeout=DEFAULT_TIMEOUT_SECONDS)
    add_offline_arguments(parser)
    parser.add_argument(
        "--process",
        default=os.environ.get("AGENTDOCS_PROCESS"),
        help="the agent process id; later turns of the same process get stubs for what it "
        "already has (default: $AGENTDOCS_PROCESS)",
    )
    parser.add_argument("--recipe", help="a recipe of the tenant")
    parser.add_argument("--profile", help="a profile of the recipe")
    parser.add_argument(
        "--label",
        help="read each document at its version under this label (production, canary, ...), "
        "or its latest where it has none; overrides the recipe's",
    )
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
    blocks = resilient_blocks(args, client)
    try:
        turn = blocks.turn(
            payload=payload, recipe=args.recipe, profile=args.profile, label=args.label
        )
    except NoCachedBlock as missing:
        if args.fallback_file is None:
            raise CommandError(str(missing)) from None
        write(sys.stdout, read_fallback(args.fallback_file))
        write(sys.stderr, f"agentdocs: {missing}; serving {args.fallback_file}\n")
        return EXIT_OK
    write(sys.stdout, turn.text)
    if turn.answer is not None:
        write(sys.stderr, "".join(layer_line(layer) for layer in turn.answer["layers"]))
    return EXIT_OK


def read_fallback(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as error:
        raise CommandError(f"cannot read the fallback file {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CommandError(f"the fallback file {path} is not UTF-8 text") from None


# agentdocs context

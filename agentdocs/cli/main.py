"""`agentdocs`, the command-line client.

    agentdocs block --url URL --token TOKEN --tenant T --project P --process ID
                    [--recipe R] [--profile F] [--agent-file PATH | --no-agent-file] [--reset]
                    [--timeout SECONDS] [--cache-dir DIR] [--fallback-file PATH]
    agentdocs context DIR [--max-bytes N]
    agentdocs sync --format F [--check [--strict]] [--force]
    agentdocs propose [--dir .] [--format F] [--dry-run]
    agentdocs explain --tool TOOL PATH [--label L] [--json] [--strict]
    agentdocs verify BLOCK_FILE --signature SIG [--keys FILE | --url URL]
    agentdocs verify-record RECORD.json [--signature SIG] [--keys FILE | --url URL]
    agentdocs hooks install|uninstall --tool TOOL [--dir .] | hooks list [--dir .]
    agentdocs hook session-start --tool TOOL [--dir .]
    agentdocs run --tool TOOL [--process ID] [--dir .] -- COMMAND ...
    agentdocs skills list | pull NAME [DIR] [--force] | push DIR [--reason TEXT] [--force]

`block` renders the Memory Block for one turn of an agent process: it uploads
the first of VANCETOPE.md, AGENT.md, CLAUDE.md found in the working folder as
the client document, prints the block to stdout and one line per layer to
stderr. `context` runs the `.AGENTS/` loader on a local folder with the
server's rules. `sync` writes a project's exported agent files into a repository
(or checks them for drift) and keeps what people edited; `propose` sends those
edits upstream as change requests. URL, token, tenant and project may come from AGENTDOCS_URL,
AGENTDOCS_TOKEN, AGENTDOCS_TENANT and AGENTDOCS_PROJECT.

No Django here: the client talks HTTP through `agentdocs.client.http` (the standard
library, no `requests`) and uses the pure
rendering core. Each command group has its
own module; `agentdocs.cli.base` holds what they share.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from agentdocs.cli.base import COMMANDS, CommandError, write

# Each subcommand's module (importing it registers the subcommand). A run imports only
# its own command's: a hook sits on every agent session's start, and the other
# commands' imports (the export, the MCP SDK) are most of the client's start-up.
COMMAND_MODULES = {
    "bind": "bindings",
    "outdated": "bindings",
    "context": "context",
    "explain": "explain",
    "hooks": "hooks",
    "hook": "hook",
    "import": "imports",
    "mcp": "mcp",
    "outcome": "outcomes",
    "block": "memory_block",
    "propose": "propose",
    "run": "run",
    "skills": "skills",
    "sync": "sync",
    "verify": "verify",
    "verify-record": "verify",
}


def load_commands(argv: Sequence[str] = ()) -> None:
    """Register the subcommand ``argv`` names, or every one (`--help`, or a name that
    is none of them, so the error lists them all)."""
    first = argv[0] if argv else None
    wanted = (
        [COMMAND_MODULES[first]]
        if first in COMMAND_MODULES
        else sorted(set(COMMAND_MODULES.values()))
    )
    for module in wanted:
        importlib.import_module(f"agentdocs.cli.{module}")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the subcommand ``argv`` names (None: of every subcommand)."""
    load_commands(argv or ())
    parser = argparse.ArgumentParser(
        prog="agentdocs", description="The agentdocs command-line client."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for entry in COMMANDS.values():
        subparser = subparsers.add_parser(entry.name, help=entry.help, description=entry.help)
        entry.configure(subparser)
        subparser.set_defaults(run=entry.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.run
    try:
        return handler(args)
    except CommandError as error:
        write(sys.stderr, f"agentdocs {args.command}: error: {error.message}\n")
        return error.exit_code

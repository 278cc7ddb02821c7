"""`agentdocs context`: run the `.AGENTS/` loader on a local folder with the
server's rules."""

from __future__ import annotations

import argparse
import sys

from agentdocs.cli.base import EXIT_OK, command, write
from agentdocs.core.context import DEFAULT_BUDGET_BYTES, load_context_dir


def _non_negative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return number


def _configure_context(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="the context folder, such as .AGENTS")
    parser.add_argument(
        "--max-bytes",
        type=_non_negative,
        metavar="N",
        default=DEFAULT_BUDGET_BYTES,
        help=f"the byte budget (default {DEFAULT_BUDGET_BYTES})",
    )


@command(
    "context", help="load a local .AGENTS/ folder as the server would", configure=_configure_context
)
def run_context(args: argparse.Namespace) -> int:
    loaded = load_context_dir(args.dir, budget_bytes=args.max_bytes)
    lines = [
        f"# context {source.document.path} ({source.bytes}B"
        f"{', truncated' if source.truncated else ''})\n"
        for source in loaded.sources
    ]
    lines += [f"# dropped {document.path} ({document.size}B)\n" for document in loaded.dropped]
    write(sys.stderr, "".join(lines))
    if loaded.rendered:
        write(sys.stdout, loaded.rendered + "\n")
    return EXIT_OK

"""`agentdocs outcome`: report a run's outcomes from a CI job or a hook.

    agentdocs outcome --url URL --token TOKEN --tenant T --project P --process ID
                      [--unit UNIT] [--comment TEXT] [--supersedes OUTCOME_ID]
                      name=value[:unit] ...

`true`/`false` (any case) are yes/no outcomes, anything else must be a number; a
unit follows the value after `:` (`cost_usd=0.31:USD`), or `--unit` gives one to
every outcome without its own. The outcomes go to the newest binding record of the
process (`POST .../outcomes`), all or none; the answer (JSON) is printed. A
correction names the outcome it supersedes (`--supersedes`, with one outcome). Exits
0 when recorded, 1 when the server refuses (the reason on stderr), 2 on a usage error.

Registered into `agentdocs.cli.base`'s subcommand registry; no Django here either.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from agentdocs.cli.base import (
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    ServerClient,
    add_server_arguments,
    command,
    require,
    write,
)
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.core.outcomes import Assignment, parse_assignment


def _assignment(text: str) -> Assignment:
    try:
        return parse_assignment(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _outcome_id(value: str) -> int:
    number = positive_int(value, maximum=MAX_ID)
    if number is None:
        raise argparse.ArgumentTypeError(f"{value!r} is not an outcome id")
    return number


def _configure(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    parser.add_argument(
        "--process",
        default=os.environ.get("AGENTDOCS_PROCESS"),
        help="the id of the run (default: $AGENTDOCS_PROCESS)",
    )
    parser.add_argument("--unit", help="the unit of every outcome that names none")
    parser.add_argument("--comment", help="a comment kept with every outcome")
    parser.add_argument(
        "--supersedes",
        type=_outcome_id,
        metavar="OUTCOME_ID",
        help="a correction: the run's current outcome of this name (one outcome only)",
    )
    parser.add_argument(
        "outcomes",
        nargs="+",
        type=_assignment,
        metavar="name=value[:unit]",
        help="as task_success=true, tests_passed=0.92, cost_usd=0.31:USD",
    )


@command("outcome", help="report a run's outcomes (task_success=true ...)", configure=_configure)
def run_outcome(args: argparse.Namespace) -> int:
    require(args, "url", "token", "tenant", "project", "process")
    if args.supersedes is not None and len(args.outcomes) != 1:
        raise CommandError("--supersedes corrects one outcome at a time", exit_code=EXIT_USAGE)
    outcomes = []
    for given in args.outcomes:
        outcome: dict[str, object] = {"name": given.name, "value": given.value}
        unit = given.unit if given.unit is not None else args.unit
        if unit:
            outcome["unit"] = unit
        if args.comment:
            outcome["comment"] = args.comment
        if args.supersedes is not None:
            outcome["supersedes"] = args.supersedes
        outcomes.append(outcome)
    client = ServerClient.from_args(args)
    answer = client.request(
        "POST",
        client.project_path(args.tenant, args.project, "outcomes"),
        json={"process": args.process, "outcomes": outcomes},
    )
    write(sys.stdout, json.dumps(answer, indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK

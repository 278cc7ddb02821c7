"""`agentdocs bind` and `agentdocs outdated`: binding records from the command line.

    agentdocs bind --url URL --token TOKEN --tenant T --project P
                   [--manifest FILE] [--process ID] [--recipe R [--profile F]]
                   [--repo DIR --tool TOOL]
    agentdocs outdated --url URL --token TOKEN --tenant T --project P RECORD_ID ...

`bind` asks the server to bind a run: the manifest is FILE, or the project's own
`context.json` when no file is given. It prints the record (JSON) to stdout
and, like the seed's script, exits 1 when the record has problems, listing them
on stderr; the record is stored either way. With `--repo DIR --tool TOOL` the
record also holds what TOOL loaded from the repository DIR (`agentdocs.cli.
repository_bind`): a file edited since the sync, one the server changed since, or
one the tool cuts is a problem too. `outdated` prints, per record, each
bound source against what it resolves to now, as `npm outdated` does, and exits
1 when any source changed or was deleted.

Registered into `agentdocs.cli.base`'s subcommand registry; no Django here either.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

from agentdocs.cli import repository_bind
from agentdocs.cli import repository_report as reporting
from agentdocs.cli.base import (
    EXIT_FAILURE,
    EXIT_OK,
    CommandError,
    ServerClient,
    add_server_arguments,
    command,
    require,
    write,
)
from agentdocs.client import http
from agentdocs.core.bindings import STALE, OutdatedRow, OutdatedSide, Problem
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.core.repositories import local_export_sha256
from agentdocs.core.repository_runs import NOT_GENERATED
from agentdocs.core.targets import TOOLS_BY_SLUG

EXIT_PROBLEMS = 1
SHORT_HASH = 12


def _read_manifest(path: Path) -> object:
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise CommandError(f"cannot read the manifest {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CommandError(f"the manifest {path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError(
            f"the manifest {path} is not JSON: {error.msg} at line {error.lineno}, "
            f"column {error.colno}"
        ) from None


def _configure_bind(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    parser.add_argument(
        "--manifest",
        type=Path,
        metavar="FILE",
        help="the manifest to bind (default: the project's context.json on the server)",
    )
    parser.add_argument(
        "--process",
        default=os.environ.get("AGENTDOCS_PROCESS"),
        help="the id of the run being bound (default: $AGENTDOCS_PROCESS, else a new id)",
    )
    parser.add_argument(
        "--repo",
        type=Path,
        metavar="DIR",
        help="also bind the files --tool loads from the repository DIR",
    )
    parser.add_argument(
        "--cwd",
        type=Path,
        metavar="FOLDER",
        help="with --repo: the working folder the tool runs in, whose per-folder files "
        "(src/api/AGENTS.md) it loads (default: the current directory when inside DIR, "
        "else DIR)",
    )
    parser.add_argument(
        "--tool",
        type=repository_bind.parse_tool,
        help=f"with --repo: the tool whose files to bind, of {', '.join(TOOLS_BY_SLUG)}",
    )
    reporting.add_report_arguments(parser)
    parser.add_argument("--recipe", help="also bind the Memory Block of this recipe")
    parser.add_argument("--profile", help="the recipe's profile for the Memory Block")


def _problem_line(problem: Problem) -> str:
    subject = problem.get("name") or problem.get("path") or problem.get("target") or ""
    return f"# problem {problem['kind']} {subject}: {problem.get('detail', '')}\n"


def _report(
    client: ServerClient, args: argparse.Namespace, section: Any, record: dict[str, Any]
) -> None:
    """Report the repository the run was bound in: the files it loaded, their states,
    and as its export the sha256 of the generated ones as they are on disk."""
    generated = [f for f in section["files"] if f["state"] != NOT_GENERATED]
    reporting.repository_report(
        client,
        args,
        folder=args.repo,
        kind="bind",
        formats=args.tool.format,
        export_sha256=local_export_sha256((f["path"], f["sha256"]) for f in generated),
        files={f["path"]: f["state"] for f in section["files"]},
        binding=record.get("id"),
    )


@command(
    "bind", help="bind a run's context and print the binding record", configure=_configure_bind
)
def run_bind(args: argparse.Namespace) -> int:
    require(args, "url", "token", "tenant", "project")
    if args.profile and not args.recipe:
        raise CommandError("--profile needs --recipe", exit_code=2)
    if (args.repo is None) != (args.tool is None):
        raise CommandError("--repo and --tool go together", exit_code=2)
    client = ServerClient.from_args(args)
    payload: dict[str, object] = {"process": args.process or f"run-{uuid.uuid4()}"}
    if args.manifest is not None:
        payload["manifest"] = _read_manifest(args.manifest)
    if args.recipe:
        payload["memory_block"] = {"recipe": args.recipe, "profile": args.profile}
    if args.repo is not None:
        payload["repository"] = repository_bind.repository_section(
            args.repo, args.tool, client, args
        )
    url = client.base + client.project_path(args.tenant, args.project, "bindings/")
    try:
        response = client.session.post(url, json=payload, timeout=client.timeout)
    except http.TransportError as error:
        raise CommandError(f"cannot reach {url}: {error}") from None
    if response.status_code not in (201, 422):
        raise CommandError(client.describe_error(response))
    record = response.json()
    write(sys.stdout, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    if args.repo is not None:
        _report(client, args, payload["repository"], record)
    if record.get("problem_count"):
        lines = [_problem_line(problem) for problem in record["problems"]]
        lines.append(f"# record {record['id']} has {record['problem_count']} problem(s)\n")
        write(sys.stderr, "".join(lines))
        return EXIT_PROBLEMS
    return EXIT_OK


def _record_id(value: str) -> str:
    if positive_int(value, maximum=MAX_ID) is None:
        raise argparse.ArgumentTypeError(f"{value!r} is not a binding record id")
    return value


def _configure_outdated(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    parser.add_argument("records", nargs="+", type=_record_id, metavar="RECORD_ID")


REPOSITORY_STALE = frozenset({"changed", "deleted", "edited-locally", "server-changed"})


def _file_row(row: dict[str, Any]) -> OutdatedRow:
    """A repository file's row of the outdated table: its hashes, no version."""
    return {
        "kind": "repository",
        "path": row["path"],
        "bound": row["bound"],
        "current": row["current"],
        "status": row["status"],
        "detail": row.get("detail", ""),
    }


def _version(side: OutdatedSide | None) -> str:
    if side is None:
        return "-"
    if side.get("version") is None:  # a repository file: its hash only
        return side["sha256"][:SHORT_HASH]
    return f"v{side['version']} {side['sha256'][:SHORT_HASH]}"


def outdated_table(rows: list[OutdatedRow]) -> str:
    header = ("SOURCE", "BOUND", "CURRENT", "STATUS")
    table = [header] + [
        (
            row.get("name") or row.get("path") or "",
            _version(row["bound"]),
            _version(row["current"]),
            row["status"],
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        + "\n"
        for line in table
    )


@command(
    "outdated",
    help="show which bound sources changed since a binding record",
    configure=_configure_outdated,
)
def run_outdated(args: argparse.Namespace) -> int:
    require(args, "url", "token", "tenant", "project")
    client = ServerClient.from_args(args)
    stale = False
    for index, record_id in enumerate(args.records):
        result = client.request(
            "GET", client.project_path(args.tenant, args.project, f"bindings/{record_id}/outdated")
        )
        rows = result["sources"]
        files = result.get("repository") or []
        # Changed or deleted since the run; a source still missing is as it was. A
        # repository file is stale too when it was not the server's export when bound.
        stale = stale or any(row["status"] in STALE for row in rows)
        stale = stale or any(row["status"] in REPOSITORY_STALE for row in files)
        heading = f"{'' if index == 0 else chr(10)}# record {record_id}\n"
        write(sys.stdout, heading + outdated_table(rows + [_file_row(row) for row in files]))
    return EXIT_FAILURE if stale else EXIT_OK

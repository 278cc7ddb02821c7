"""`agentdocs propose`: send the local edits of synced files upstream as change requests.

    agentdocs propose [--dir .] [--format agents-md,claude-md] [--dry-run] [--reason TEXT]
                      [--process ID]

It finds the files `agentdocs sync` keeps as ``edited-locally`` (against the lock file
and the server's current export of ``--format``, by default the formats the lock
records), posts them to the project's propose endpoint and prints the server's plan,
one line per section, then each change request it opened, with its page:

    propose    CLAUDE.md → agent.md  (edited here: proposes a change to agent.md, based on v3)
    change #12 agent.md  http://127.0.0.1:8000/t/acme/web/changes/12/

The server maps each edited section back to the document it came from (by the file's
provenance line) and opens a change request on it; the edited files of an exported
skill (`.claude/skills/<name>/...`, sent with the digest the lock records for each)
become one change request of that skill, based on the version they were synced at. It
writes no document and no skill. Tenant and project default to the lock's.

Exit codes as `agentdocs sync`: 0 when every local edit was proposed (or there is
none), 1 when some edit could not be (the plan says why: the Policy section, a file
agentdocs did not generate, ...), 2 for usage errors, no lock file, and any error of
the server or none at all (the server's message is printed).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agentdocs.cli.base import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    ServerClient,
    command,
    require,
    write,
)
from agentdocs.cli.imports import change_lines, plan_line, read_text
from agentdocs.cli.sync import (
    EDITED_LOCALLY,
    LOCK_FILE,
    add_export_arguments,
    as_usage_error,
    defaults_from_lock,
    drift,
    fetch_export,
    locked_files,
    read_lock,
    repository_folder,
)
from agentdocs.core.targets import skill_owner


def _configure_propose(parser: argparse.ArgumentParser) -> None:
    add_export_arguments(parser, format_required=False)
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would be proposed and open nothing"
    )
    parser.add_argument("--reason", default="", help="why: kept with each change request")
    parser.add_argument(
        "--process",
        default=os.environ.get("AGENTDOCS_PROCESS"),
        help="the agent process the edits came from (default: $AGENTDOCS_PROCESS): each "
        "change request names it and its binding record",
    )


def _file(folder: Path, path: str, synced: str | None) -> dict[str, str]:
    """An edited file as sent: a skill's file (under a tool's skills folder, written
    byte for byte, without provenance) with the digest the sync wrote it at, so the
    server finds the skill's version it was edited on."""
    entry = {"path": path, "content": read_text(folder, path)}
    if synced and skill_owner(path) is not None:
        entry["base_sha256"] = synced
    return entry


@command(
    "propose",
    help="send the local edits of synced agent files upstream as change requests",
    configure=_configure_propose,
)
def run_propose(args: argparse.Namespace) -> int:
    folder = repository_folder(args)
    lock = read_lock(folder)
    if lock is None:
        raise CommandError(
            f"no {LOCK_FILE} in {folder}: `agentdocs propose` sends the edits of files "
            "`agentdocs sync` wrote; run it first",
            exit_code=EXIT_USAGE,
        )
    defaults_from_lock(args, lock)
    require(args, "url", "token", "tenant", "project")
    client = ServerClient.from_args(args)
    try:
        export = fetch_export(client, args)
    except CommandError as error:
        raise as_usage_error(error) from None
    edited = [path for state, path in drift(folder, lock, export) if state == EDITED_LOCALLY]
    if not edited:
        write(sys.stderr, "nothing to propose: no file is edited locally\n")
        return EXIT_OK
    locked = locked_files(lock)
    payload: dict[str, object] = {
        "files": [_file(folder, path, locked.get(path)) for path in edited],
        "dry_run": args.dry_run,
    }
    if args.reason:
        payload["reason"] = args.reason
    if args.process:
        payload["process"] = args.process
    try:
        result = client.request(
            "POST", client.project_path(args.tenant, args.project, "propose/"), json=payload
        )
        plan = result["plan"]
        lines = [plan_line(entry) for entry in plan]
    except CommandError as error:
        raise as_usage_error(error) from None
    except (KeyError, TypeError):
        raise CommandError(
            "the server answered with something that is not a plan", exit_code=EXIT_USAGE
        ) from None
    lines += change_lines(plan)
    if args.dry_run:
        lines.append("# dry run: nothing was proposed\n")
    write(sys.stdout, "".join(lines))
    return EXIT_FAILURE if any(entry["action"] == "skipped" for entry in plan) else EXIT_OK

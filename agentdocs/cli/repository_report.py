"""Reporting a repository to the server: after `agentdocs sync`, `sync --check` and
`bind --repo`, what the repository holds (its remote, branch and commit, the formats,
the export's sha256 and each file's state) goes to `POST .../repositories/`, so the
project's Repositories page shows it (docs/repositories.md).

A report never changes a command's outcome: when it cannot be made (no remote and no
`--repo-name`, no server, a refusal) the command prints one warning line on stderr
and exits as it would have. `--no-report` sends nothing. No Django here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agentdocs.cli.base import CommandError, ServerClient, write
from agentdocs.cli.git import git_state

WARNING = "agentdocs: warning: this repository was not reported to the server: {}\n"


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-report",
        action="store_true",
        help="do not report this repository's state to the server (its Repositories page)",
    )
    parser.add_argument(
        "--repo-name",
        metavar="NAME",
        help="the repository's name on the server when git knows no remote for it",
    )


def repository_report(
    client: ServerClient,
    args: argparse.Namespace,
    *,
    folder: Path,
    kind: str,
    formats: str,
    export_sha256: str,
    files: dict[str, str],
    binding: int | None = None,
    recipe: str | None = None,
    profile: str | None = None,
) -> None:
    """Send one report; on any failure, one warning line on stderr and nothing else."""
    if getattr(args, "no_report", False):
        return
    try:
        git = git_state(folder, [])
        name = getattr(args, "repo_name", None)
        if not git.remote and not name:
            raise CommandError("git knows no remote here; give --repo-name NAME")
        body: dict[str, Any] = {
            "kind": kind,
            "remote": git.remote,
            "name": None if git.remote else name,
            "branch": git.branch,
            "commit": git.commit,
            "dirty": git.dirty,
            "formats": formats,
            "recipe": recipe,
            "profile": profile,
            "export_sha256": export_sha256,
            "files": files,
            "binding": binding,
        }
        path = client.project_path(args.tenant, args.project, "repositories/")
        client.request("POST", path, json=body)
    except CommandError as error:
        write(sys.stderr, WARNING.format(error.message))
    except (OSError, ValueError) as error:
        write(sys.stderr, WARNING.format(error))

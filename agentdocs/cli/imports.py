"""`agentdocs import`: send a repository's agent files to a project.

    agentdocs import --url URL --token TOKEN --tenant T --project P
                     [--dir .] [--dry-run] [--reason TEXT] [--adopt]

It collects, from DIR, `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`,
`.github/copilot-instructions.md`, `.cursor/rules/*.mdc` and
`.github/instructions/*.instructions.md`, every tool's rule files, and the per-folder
files below the root (`src/api/AGENTS.md`, `src/api/CLAUDE.md`: each a document
scoped to its folder), posts them to the project's import
endpoint and prints the server's plan, one line per file. A file `agentdocs sync`
wrote (it carries agentdocs' provenance line) is not imported as a document: the
plan has a line per section, each edited one proposed as a change request on the
document it came from (printed after the plan with its page); with ``--adopt`` it is
imported like a hand-written file instead, without its provenance line (of AGENTS.md
and the like, the agent notes): a project started from another's rules. Exit 0 when the server
accepted (a dry run writes nothing), 1 when it refused (its error's detail is
printed), 2 for a usage error, a folder without agent files, or a server that
cannot be reached.

Registered into `agentdocs.cli.base`'s subcommand registry; no Django here either.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

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
from agentdocs.client import http
from agentdocs.core.agent_files import NESTED_NAMES, is_collected
from agentdocs.core.targets import AGENT_NOTES_SOURCES, rule_folders

ACTION_WIDTH = len("unchanged")
# Folders never searched for per-folder files: hidden ones, and those of dependencies.
SKIPPED_FOLDERS = frozenset({"node_modules", "vendor", "__pycache__", "venv"})
MAX_NESTED_FILES = 500


def nested_files(folder: Path) -> list[str]:
    """The per-folder files below ``folder``'s root (`src/api/AGENTS.md`), sorted, at
    most `MAX_NESTED_FILES`; hidden folders and dependencies' folders are not searched."""
    found: list[str] = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        relative = Path(here).relative_to(folder).as_posix()
        if relative == ".":
            continue
        found.extend(f"{relative}/{name}" for name in NESTED_NAMES if name in files)
        if len(found) >= MAX_NESTED_FILES:
            break
    return sorted(found)[:MAX_NESTED_FILES]


def collect_agent_files(folder: Path) -> list[str]:
    """The agent files under ``folder``, as paths from it: the single-file formats in
    their order of precedence, then each registered tool's rule files by name."""
    found = [path for path in AGENT_NOTES_SOURCES if (folder / path).is_file()]
    for directory, suffix in rule_folders():
        rules = folder / directory
        if rules.is_dir():
            found.extend(
                f"{directory}{entry.name}"
                for entry in sorted(rules.iterdir())
                if entry.name.endswith(suffix) and entry.is_file()
            )
    found.extend(nested_files(folder))
    return [path for path in found if is_collected(path)]


def read_text(folder: Path, path: str) -> str:
    try:
        return (folder / path).read_bytes().decode("utf-8")
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}", exit_code=EXIT_USAGE) from None
    except UnicodeDecodeError:
        raise CommandError(f"{path} is not UTF-8 text", exit_code=EXIT_USAGE) from None


def plan_line(entry: dict[str, Any]) -> str:
    """``create     AGENTS.md → agent.md  (new document)``."""
    line = f"{entry['action']:<{ACTION_WIDTH}}  {entry['source']} → {entry['target'] or '-'}"
    if entry.get("detail"):
        line += f"  ({entry['detail']})"
    return line + "\n"


def change_lines(plan: list[dict[str, Any]]) -> list[str]:
    """``change #12 agent.md  URL`` for each change request of the plan, once."""
    seen: set[object] = set()
    lines = []
    for entry in plan:
        number = entry.get("change_request")
        if number is None or number in seen:
            continue
        seen.add(number)
        lines.append(f"change #{number} {entry['target']}  {entry.get('change_request_url')}\n")
    return lines


def _configure_import(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="the repository folder to collect agent files from (default: the working folder)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would change and write nothing"
    )
    parser.add_argument("--reason", default="", help="why: kept in each document's history")
    parser.add_argument(
        "--adopt",
        action="store_true",
        help="import files agentdocs generated (another project's, say) as hand-written "
        "ones, their provenance stripped, instead of proposing their edits upstream",
    )


@command(
    "import",
    help="import a repository's agent files (AGENTS.md, CLAUDE.md, Cursor rules, ...) "
    "into a project",
    configure=_configure_import,
)
def run_import(args: argparse.Namespace) -> int:
    require(args, "url", "token", "tenant", "project")
    folder: Path = args.dir
    if not folder.is_dir():
        raise CommandError(f"{folder} is not a folder", exit_code=EXIT_USAGE)
    paths = collect_agent_files(folder)
    if not paths:
        raise CommandError(
            f"no agent files in {folder} (looked for {', '.join(AGENT_NOTES_SOURCES)}, "
            + ", ".join(f"{directory}*{suffix}" for directory, suffix in rule_folders())
            + ")",
            exit_code=EXIT_USAGE,
        )
    payload: dict[str, object] = {
        "files": [{"path": path, "content": read_text(folder, path)} for path in paths],
        "dry_run": args.dry_run,
    }
    if args.adopt:
        payload["adopt"] = True
    if args.reason:
        payload["reason"] = args.reason
    client = ServerClient.from_args(args)
    url = client.base + client.project_path(args.tenant, args.project, "import/")
    try:
        response = client.session.post(url, json=payload, timeout=client.timeout)
    except http.TransportError as error:
        raise CommandError(f"cannot reach {url}: {error}", exit_code=EXIT_USAGE) from None
    if response.status_code >= 400:
        raise CommandError(client.describe_error(response), exit_code=EXIT_FAILURE)
    try:
        result = response.json()
        lines = [plan_line(entry) for entry in result["plan"]]
    except (ValueError, KeyError, TypeError):
        raise CommandError(
            f"the server answered {response.status_code} with something that is not an import plan"
        ) from None
    lines += change_lines(result["plan"])
    lines.append("# applied\n" if result.get("applied") else "# dry run: nothing was written\n")
    write(sys.stdout, "".join(lines))
    return EXIT_OK

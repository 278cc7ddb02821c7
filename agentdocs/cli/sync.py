"""`agentdocs sync`: write a project's exported agent files into a repository, and
check in CI that they have not drifted.

    agentdocs sync --tenant T --project P --format agents-md,claude-md [--dir .]
                   [--recipe R [--profile F]] [--check]

Without ``--check`` it fetches the export of each format, writes the files under
``--dir`` and records what it wrote in ``agentdocs.lock.json``. A file the last
sync wrote and the server no longer exports is removed when nobody edited it.

``--check`` changes nothing. It exits 0 when every file matches the server's
current export; otherwise it prints one line per file that does not, with its
state, and exits 1:

- ``server-changed``: the local file is what the last sync wrote; the server moved on;
- ``edited-locally``: the local file differs from what the last sync wrote;
- ``missing``: the server exports the file and it is not there;
- ``extra``: the last sync wrote it, and the server no longer exports it.

Exit 2 for usage and connection errors (and a check without a lock file).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlencode

from agentdocs.cli.base import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    ConnectionFailed,
    ServerClient,
    add_server_arguments,
    command,
    require,
    write,
)
from agentdocs.core import targets
from agentdocs.core.export import ExportFile, export_sha256

LOCK_FILE = "agentdocs.lock.json"
FORMATS = targets.EXPORT_FORMATS


@dataclass(frozen=True)
class Export:
    """What the server exports for the formats asked for, merged into one set of files."""

    formats: str
    files: dict[str, str]  # path -> content
    hashes: dict[str, str]  # path -> sha256 of the content
    sources: list[dict[str, Any]]

    @property
    def export_sha256(self) -> str:
        """As the server computes it for one format (`agentdocs.core.export`)."""
        return export_sha256(
            [ExportFile(path=path, content=text) for path, text in self.files.items()]
        )


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _formats(value: str) -> str:
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in FORMATS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown) or 'nothing'}: the formats are {', '.join(FORMATS)}"
        )
    return ",".join(dict.fromkeys(names))


def _safe_path(path: object) -> str:
    """A server-given file path, refused unless it stays inside the target folder."""
    if not isinstance(path, str) or not path or "\\" in path or "\x00" in path:
        raise CommandError(f"the server exported an unusable path {path!r}")
    parts = PurePosixPath(path).parts
    if PurePosixPath(path).is_absolute() or ".." in parts or path != "/".join(parts):
        raise CommandError(f"the server exported a path outside the folder: {path!r}")
    return path


def fetch_export(client: ServerClient, args: argparse.Namespace) -> Export:
    files: dict[str, str] = {}
    sources: dict[tuple[str, str, Any], dict[str, Any]] = {}
    for name in args.format.split(","):
        query = {"format": name}
        if args.recipe:
            query["recipe"] = args.recipe
        if args.profile:
            query["profile"] = args.profile
        path = client.project_path(args.tenant, args.project, f"export/?{urlencode(query)}")
        body = client.request("GET", path)
        for entry in body.get("files", []):
            files[_safe_path(entry.get("path"))] = str(entry.get("content", ""))
        for source in body.get("sources", []):
            sources[(source.get("project"), source.get("path"), source.get("version"))] = source
    hashes = {path: ExportFile(path=path, content=text).sha256 for path, text in files.items()}
    return Export(formats=args.format, files=files, hashes=hashes, sources=list(sources.values()))


def _read_lock(folder: Path) -> dict[str, Any] | None:
    try:
        lock = json.loads((folder / LOCK_FILE).read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise CommandError(f"cannot read {LOCK_FILE}: {error}", exit_code=EXIT_USAGE) from None
    if not isinstance(lock, dict) or not isinstance(lock.get("files"), dict):
        raise CommandError(f"{LOCK_FILE} is not an agentdocs lock file", exit_code=EXIT_USAGE)
    return lock


def _local_sha256(folder: Path, path: str) -> str | None:
    try:
        return _sha256((folder / path).read_bytes())
    except FileNotFoundError:
        return None


def drift(folder: Path, lock: dict[str, Any], export: Export) -> list[tuple[str, str]]:
    """(state, path) for every file that does not match the server's export."""
    locked: dict[str, str] = {str(k): str(v) for k, v in lock["files"].items()}
    states = []
    for path in sorted(set(locked) | set(export.hashes)):
        local = _local_sha256(folder, path)
        if path not in export.hashes:
            states.append(("extra", path))
        elif local is None:
            states.append(("missing", path))
        elif local == export.hashes[path]:
            continue
        elif path in locked and local == locked[path]:
            states.append(("server-changed", path))
        else:
            states.append(("edited-locally", path))
    return states


def write_export(folder: Path, lock: dict[str, Any] | None, export: Export, args: Any) -> None:
    """Write every exported file, drop the ones the last sync wrote and no longer exported
    (when unedited), and record what was written in the lock file."""
    for path, content in export.files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8"))
    locked = {str(k): str(v) for k, v in (lock or {}).get("files", {}).items()}
    for path, digest in locked.items():
        if path in export.hashes:
            continue
        if _local_sha256(folder, _safe_path(path)) == digest:
            (folder / path).unlink()
        else:
            write(sys.stderr, f"kept {path}: no longer exported, but edited since the last sync\n")
    new_lock = {
        "tenant": args.tenant,
        "project": args.project,
        "format": export.formats,
        "export_sha256": export.export_sha256,
        "files": dict(sorted(export.hashes.items())),
        "sources": export.sources,
    }
    (folder / LOCK_FILE).write_text(json.dumps(new_lock, indent=2, sort_keys=True) + "\n", "utf-8")


def _configure_sync(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    parser.add_argument(
        "--format",
        type=_formats,
        required=True,
        help=f"comma-separated, of {', '.join(FORMATS)}",
    )
    parser.add_argument("--dir", type=Path, default=Path("."), help="the repository (default: .)")
    parser.add_argument("--recipe", help="export as this recipe renders")
    parser.add_argument("--profile", help="and this profile of the recipe")
    parser.add_argument(
        "--check",
        action="store_true",
        help="change nothing; exit 1 and list the files that differ from the server's export",
    )


@command(
    "sync",
    help="write a project's agent files (AGENTS.md, CLAUDE.md, ...) or check them for drift",
    configure=_configure_sync,
)
def run_sync(args: argparse.Namespace) -> int:
    require(args, "url", "token", "tenant", "project")
    folder: Path = args.dir
    if not folder.is_dir():
        raise CommandError(f"{folder} is not a folder", exit_code=EXIT_USAGE)
    lock = _read_lock(folder)
    if args.check and lock is None:
        raise CommandError(
            f"no {LOCK_FILE} in {folder}: run `agentdocs sync` (without --check) first",
            exit_code=EXIT_USAGE,
        )
    client = ServerClient.from_args(args)
    try:
        export = fetch_export(client, args)
    except ConnectionFailed as error:
        raise CommandError(error.message, exit_code=EXIT_USAGE) from None
    if args.check:
        assert lock is not None
        states = drift(folder, lock, export)
        write(sys.stdout, "".join(f"{state}\t{path}\n" for state, path in states))
        return EXIT_FAILURE if states else EXIT_OK
    write_export(folder, lock, export, args)
    write(
        sys.stderr,
        f"wrote {len(export.files)} file(s) and {LOCK_FILE} (export {export.export_sha256[:12]})\n",
    )
    return EXIT_OK

"""`agentdocs sync`: write a project's exported agent files into a repository, and
check in CI that they have not drifted.

    agentdocs sync --tenant T --project P --format agents-md,claude-md [--dir .]
                   [--recipe R [--profile F]] [--label L] [--check] [--strict] [--force]

The tenant, project and formats the command line leaves out are read from the lock
file (as `agentdocs propose` does); the first sync in a folder needs ``--format``.

Without ``--check`` it fetches the export of each format, writes the files under
``--dir`` and records what it wrote in ``agentdocs.lock.json``. It never overwrites
what a person wrote: a file that differs from what the last sync wrote (or that the
last sync did not write, and differs from the export) is left as it is, with the line

    edited-locally PATH (kept; --force to overwrite, or agentdocs propose to send the edit upstream)

and the exit code is 1. A file no sync wrote (not in the lock file, no provenance line)
that differs from the export is kept the same way as ``not-generated``: someone's own
file, to import rather than to propose. ``--force`` overwrites such a file and keeps
what was there as ``PATH.orig``. A file that differs from the export only in its
provenance line holds no edit of a person's (an edit `agentdocs propose` sent upstream
and the server merged): it is written like a file the server changed. A file the last
sync wrote and the server no longer exports is removed when nobody edited it.

``--check`` changes nothing. It exits 0 when every file matches the server's
current export; otherwise it prints one line per file that does not, with its
state, and exits 1:

- ``server-changed``: the local file is what the last sync wrote; the server moved on;
- ``edited-locally``: the local file differs from what the last sync wrote;
- ``not-generated``: no sync wrote the file there, and it differs from the export;
- ``missing``: the server exports the file and it is not there;
- ``extra``: the last sync wrote it, and the server no longer exports it.

Each warning of the export (a file over a size its tool reads) is printed on stderr as
``warning PATH: TOOL reads LIMIT UNIT, this file is SIZE UNIT; cut from DOCUMENT``;
``--strict`` makes any warning exit 1.

Exit 2 for everything that is not an answer about the files: usage errors, a check
without a lock file, and any error of the server (a bad token, no permission, no such
tenant or project: the server's message is printed) or no server at all.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlencode

from agentdocs.cli import repository_report as reporting
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
from agentdocs.core import targets
from agentdocs.core.agent_files import strip_provenance
from agentdocs.core.export import ExportFile, export_sha256
from agentdocs.core.repositories import local_export_sha256

LOCK_FILE = "agentdocs.lock.json"
FORMATS = targets.EXPORT_FORMATS
# What the last sync left alone; `agentdocs propose` sends exactly these upstream.
EDITED_LOCALLY = "edited-locally"
KEPT = "(kept; --force to overwrite, or agentdocs propose to send the edit upstream)"
# A file there that no sync wrote, without agentdocs' provenance line: a person's own.
NOT_GENERATED = "not-generated"
KEPT_NOT_GENERATED = (
    "(kept: no agentdocs sync wrote it; --force to overwrite, or agentdocs import to bring it in)"
)
KEPT_STATES = (EDITED_LOCALLY, NOT_GENERATED)
ORIG_SUFFIX = ".orig"


@dataclass(frozen=True)
class Export:
    """What the server exports for the formats asked for, merged into one set of files."""

    formats: str
    files: dict[str, str]  # path -> content
    hashes: dict[str, str]  # path -> sha256 of the content
    sources: list[dict[str, Any]]
    warnings: tuple[str, ...] = ()  # one line per warning, as printed

    @property
    def export_sha256(self) -> str:
        """As the server computes it for one format (`agentdocs.core.export`)."""
        return export_sha256(
            [ExportFile(path=path, content=text) for path, text in self.files.items()]
        )


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def parse_formats(value: str) -> str:
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


def warning_line(warning: object) -> str | None:
    """``warning PATH: TOOL reads LIMIT UNIT, this file is SIZE UNIT; cut from DOCUMENT``
    (for a limit spent along a path, ``warning`` and the server's message: ``warning
    codex: from src/api/, 35,112 of 32,768 bytes: src/api/AGENTS.md cut at byte 1,321``)
    for one entry of an export's ``warnings``; None for an entry that is not one (the
    field is read defensively: a server before warnings sends none)."""
    if not isinstance(warning, dict) or not isinstance(warning.get("path"), str):
        return None
    if warning.get("folder") and isinstance(warning.get("message"), str):
        # A limit spent along a path: `codex: from src/api/, ... cut at byte 1,321`.
        return f"warning {warning['message']}"
    tool = warning.get("tool") or warning.get("format") or "its tool"
    unit = warning.get("unit") or "bytes"
    line = (
        f"warning {warning['path']}: {tool} reads {warning.get('limit', '?')} {unit}, "
        f"this file is {warning.get('size', '?')} {unit}"
    )
    if warning.get("cut_from"):
        line += f"; cut from {warning['cut_from']}"
    return line


def fetch_export(client: ServerClient, args: argparse.Namespace) -> Export:
    files: dict[str, str] = {}
    sources: dict[tuple[str, str, Any], dict[str, Any]] = {}
    warnings: dict[str, None] = {}  # in order, each once (formats share files)
    for name in args.format.split(","):
        query = {"format": name}
        if args.recipe:
            query["recipe"] = args.recipe
        if args.profile:
            query["profile"] = args.profile
        if getattr(args, "label", None):
            query["label"] = args.label
        path = client.project_path(args.tenant, args.project, f"export/?{urlencode(query)}")
        body = client.request("GET", path)
        if not isinstance(body, dict):
            raise CommandError("the server answered with something that is not an export")
        for entry in body.get("files", []):
            files[_safe_path(entry.get("path"))] = str(entry.get("content", ""))
        for source in body.get("sources", []):
            sources[(source.get("project"), source.get("path"), source.get("version"))] = source
        listed = body.get("warnings")
        for warning in listed if isinstance(listed, list) else []:
            line = warning_line(warning)
            if line is not None:
                warnings[line] = None
    hashes = {path: ExportFile(path=path, content=text).sha256 for path, text in files.items()}
    return Export(
        formats=args.format,
        files=files,
        hashes=hashes,
        sources=list(sources.values()),
        warnings=tuple(warnings),
    )


def read_lock(folder: Path) -> dict[str, Any] | None:
    try:
        lock = json.loads((folder / LOCK_FILE).read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise CommandError(f"cannot read {LOCK_FILE}: {error}", exit_code=EXIT_USAGE) from None
    if not isinstance(lock, dict) or not isinstance(lock.get("files"), dict):
        raise CommandError(f"{LOCK_FILE} is not an agentdocs lock file", exit_code=EXIT_USAGE)
    return lock


def locked_files(lock: dict[str, Any] | None) -> dict[str, str]:
    """path -> sha256 of what the last sync wrote."""
    return {str(k): str(v) for k, v in (lock or {}).get("files", {}).items()}


def _local_sha256(folder: Path, path: str) -> str | None:
    try:
        return _sha256((folder / path).read_bytes())
    except FileNotFoundError:
        return None


def file_state(local: str | None, locked: str | None, exported: str | None) -> str | None:
    """The state of one file (see the module's docstring); None when it is in sync.

    A file the last sync did not write (``locked`` None) that is there and differs from
    the export is someone's: `edited-locally`, like a file edited since the last sync."""
    if exported is None:
        return "extra"
    if local is None:
        return "missing"
    if local == exported:
        return None
    if local == locked:
        return "server-changed"
    return EDITED_LOCALLY


def _only_provenance_differs(folder: Path, path: str, content: str) -> bool:
    """Whether the local file is the export but for its provenance line: what a sync
    wrote before the server took its edit (an `agentdocs propose` merged), which holds
    nothing of a person's, since nobody edits that line."""
    try:
        local = (folder / path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return strip_provenance(local)[0] == strip_provenance(content)[0]


def _generated(folder: Path, path: str) -> bool:
    """Whether the local file carries agentdocs' provenance line (a sync wrote it once)."""
    try:
        return strip_provenance((folder / path).read_bytes().decode("utf-8"))[1]
    except (OSError, UnicodeDecodeError):
        return False


def _state(folder: Path, path: str, locked: str | None, export: Export) -> str | None:
    state = file_state(_local_sha256(folder, path), locked, export.hashes.get(path))
    if state == EDITED_LOCALLY and _only_provenance_differs(folder, path, export.files[path]):
        return "server-changed"
    if state == EDITED_LOCALLY and locked is None and not _generated(folder, path):
        return NOT_GENERATED
    return state


def drift(folder: Path, lock: dict[str, Any], export: Export) -> list[tuple[str, str]]:
    """(state, path) for every file that does not match the server's export."""
    locked = locked_files(lock)
    states = []
    for path in sorted(set(locked) | set(export.hashes)):
        state = _state(folder, _safe_path(path), locked.get(path), export)
        if state is not None:
            states.append((state, path))
    return states


@dataclass(frozen=True)
class Written:
    """What `write_export` did: the files written, and the local edits kept or replaced."""

    written: list[str]
    kept: dict[str, str]  # path -> its state: edited-locally or not-generated
    overwritten: list[str]
    lock_written: bool = False  # False when the lock file already said the same


def _write(folder: Path, path: str, content: str) -> None:
    target = folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content.encode("utf-8"))


def write_export(
    folder: Path, lock: dict[str, Any] | None, export: Export, args: Any, *, force: bool = False
) -> Written:
    """Write every exported file except a local edit (kept, or with ``force`` saved as
    `PATH.orig` and overwritten), drop the files the last sync wrote and no longer
    exported (when unedited), and record what was written in the lock file.

    A kept file keeps its entry of the old lock (or none), so that it stays
    `edited-locally` until it is overwritten or the server's copy matches it."""
    locked = locked_files(lock)
    done = Written(written=[], kept={}, overwritten=[])
    files: dict[str, str] = {}
    for path, content in export.files.items():
        state = _state(folder, path, locked.get(path), export)
        if state in KEPT_STATES and not force:
            done.kept[path] = state
            if path in locked:
                files[path] = locked[path]
            continue
        if state in KEPT_STATES:
            (folder / path).replace(folder / f"{path}{ORIG_SUFFIX}")
            done.overwritten.append(path)
        if state is not None:
            _write(folder, path, content)
            done.written.append(path)
        files[path] = export.hashes[path]
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
        "files": dict(sorted(files.items())),
        "sources": export.sources,
    }
    text = json.dumps(new_lock, indent=2, sort_keys=True) + "\n"
    try:
        unchanged = (folder / LOCK_FILE).read_text("utf-8") == text
    except (OSError, UnicodeDecodeError):
        unchanged = False
    if not unchanged:
        (folder / LOCK_FILE).write_text(text, "utf-8")
    return replace(done, lock_written=not unchanged)


def add_export_arguments(parser: argparse.ArgumentParser, *, format_required: bool = True) -> None:
    """What names an export: the server, the project, the formats, the folder, the recipe."""
    add_server_arguments(parser)
    parser.add_argument(
        "--format",
        type=parse_formats,
        required=format_required,
        help=f"comma-separated, of {', '.join(FORMATS)}"
        + ("" if format_required else f" (default: the formats {LOCK_FILE} records)"),
    )
    parser.add_argument("--dir", type=Path, default=Path("."), help="the repository (default: .)")
    parser.add_argument("--recipe", help="export as this recipe renders")
    parser.add_argument("--profile", help="and this profile of the recipe")
    parser.add_argument(
        "--label",
        help="export each document at its version under this label (production, canary, "
        "...), or its latest where it has none",
    )


def _configure_sync(parser: argparse.ArgumentParser) -> None:
    add_export_arguments(parser, format_required=False)
    parser.add_argument(
        "--check",
        action="store_true",
        help="change nothing; exit 1 and list the files that differ from the server's export",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 as well when the export warns (a file over a size its tool reads)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite local edits too, keeping each as PATH.orig",
    )
    reporting.add_report_arguments(parser)


def defaults_from_lock(args: argparse.Namespace, lock: dict[str, Any] | None) -> None:
    """The tenant, project and formats the lock file records, where the command line
    names none; without a lock file `--format` is needed."""
    if lock is not None:
        args.tenant = args.tenant or lock.get("tenant")
        args.project = args.project or lock.get("project")
    if args.format:
        return
    if lock is None:
        raise CommandError(
            f"--format is required: no {LOCK_FILE} in {args.dir} records the formats",
            exit_code=EXIT_USAGE,
        )
    try:
        args.format = parse_formats(str(lock.get("format") or ""))
    except argparse.ArgumentTypeError as error:
        raise CommandError(f"{LOCK_FILE}: {error}; give --format", exit_code=EXIT_USAGE) from None


def repository_folder(args: argparse.Namespace) -> Path:
    folder: Path = args.dir
    if not folder.is_dir():
        raise CommandError(f"{folder} is not a folder", exit_code=EXIT_USAGE)
    return folder


def as_usage_error(error: CommandError) -> CommandError:
    """Any failure to get an answer from the server (none at all, a bad token, no
    permission, no such tenant or project, ...) exits 2: exit 1 means the files."""
    return CommandError(error.message, exit_code=EXIT_USAGE)


def _report_check(
    client: ServerClient,
    args: argparse.Namespace,
    folder: Path,
    lock: dict[str, Any],
    export: Export,
    states: list[tuple[str, str]],
) -> None:
    """Report what `--check` found: the export the lock file says the repository
    holds, and each file's state (`in-sync` for those that match)."""
    files = {path: "in-sync" for path in sorted(set(locked_files(lock)) | set(export.hashes))}
    files.update({path: state for state, path in states})
    held = lock.get("export_sha256")
    if not isinstance(held, str) or len(held) != 64:
        # An older lock file: the export of what the last sync wrote, by their hashes.
        held = local_export_sha256(locked_files(lock).items())
    reporting.repository_report(
        client,
        args,
        folder=folder,
        kind="check",
        formats=export.formats,
        export_sha256=held,
        files=files,
        recipe=args.recipe,
        profile=args.profile,
    )


@command(
    "sync",
    help="write a project's agent files (AGENTS.md, CLAUDE.md, ...) or check them for drift",
    configure=_configure_sync,
)
def run_sync(args: argparse.Namespace) -> int:
    if args.check and args.force:
        raise CommandError(
            "--force overwrites files; --check changes nothing", exit_code=EXIT_USAGE
        )
    folder = repository_folder(args)
    lock = read_lock(folder)
    if args.check and lock is None:
        raise CommandError(
            f"no {LOCK_FILE} in {folder}: run `agentdocs sync` (without --check) first",
            exit_code=EXIT_USAGE,
        )
    defaults_from_lock(args, lock)
    require(args, "url", "token", "tenant", "project")
    client = ServerClient.from_args(args)
    try:
        export = fetch_export(client, args)
    except CommandError as error:
        raise as_usage_error(error) from None
    write(sys.stderr, "".join(f"{line}\n" for line in export.warnings))
    warned = args.strict and bool(export.warnings)
    if args.check:
        assert lock is not None
        states = drift(folder, lock, export)
        write(sys.stdout, "".join(f"{state}\t{path}\n" for state, path in states))
        _report_check(client, args, folder, lock, export, states)
        return EXIT_FAILURE if states or warned else EXIT_OK
    done = write_export(folder, lock, export, args, force=args.force)
    lines = [
        f"{state} {path} {KEPT if state == EDITED_LOCALLY else KEPT_NOT_GENERATED}\n"
        for path, state in done.kept.items()
    ]
    lines += [
        f"overwrote {path} (your version is {path}{ORIG_SUFFIX})\n" for path in done.overwritten
    ]
    write(sys.stdout, "".join(lines))
    lock_said = f"and {LOCK_FILE}" if done.lock_written else f"({LOCK_FILE} unchanged)"
    write(
        sys.stderr,
        f"wrote {len(done.written)} file(s) {lock_said} (export {export.export_sha256[:12]})\n",
    )
    files = {path: "in-sync" for path in export.files}
    files.update(done.kept)
    reporting.repository_report(
        client,
        args,
        folder=folder,
        kind="sync",
        formats=export.formats,
        export_sha256=export.export_sha256,
        files=files,
        recipe=args.recipe,
        profile=args.profile,
    )
    return EXIT_FAILURE if done.kept or warned else EXIT_OK

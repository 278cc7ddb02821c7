"""Repositories, the pure part: what a report of a repository says, and the state it is
in against the server's export now.

`agentdocs sync`, `sync --check` and `bind --repo` report `{remote, branch, commit,
dirty, formats, export_sha256, files: {path: state}, kind, binding}`. A repository's
state is computed on read, against the export the server would make now:

- `never-checked`: its last report carried no file states (nothing was compared);
- `edited-locally`: a reported file is `edited-locally`;
- `behind`: the export it holds is not the server's export now (or a reported file is
  `server-changed`, `missing` or `extra`);
- `in-sync` otherwise.

`behind_by` says, per file of the export now, how many versions its source documents
moved since the export the repository last held in sync (its `Baseline`).

Plain Python: no Django.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from agentdocs.core.errors import InvalidInput
from agentdocs.core.export import Export, ExportFile, export_sha256
from agentdocs.core.targets import EXPORT_FORMATS

KINDS = ("sync", "check", "bind")
NEVER_CHECKED = "never-checked"
IN_SYNC = "in-sync"
BEHIND = "behind"
EDITED_LOCALLY = "edited-locally"
STATES = (IN_SYNC, BEHIND, EDITED_LOCALLY, NEVER_CHECKED)
# A listed repository whose export this request did not build: the page held more
# distinct (formats, recipe, profile) sets than one request builds.
NOT_COMPUTED = "not-computed"
LISTED_STATES = (*STATES, NOT_COMPUTED)
# The file states clients report: `sync --check`'s, and the repository bind's.
FILE_STATES = ("in-sync", "edited-locally", "server-changed", "missing", "extra", "not-generated")
_BEHIND_FILE_STATES = frozenset({"server-changed", "missing", "extra"})

MAX_REMOTE = 1000
MAX_NAME = 200
MAX_BRANCH = 255
_SHA256 = re.compile(r"^[0-9a-f]{64}\Z")
_GIT_ID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?\Z")


class SourceVersion(TypedDict):
    project: str | None
    path: str
    version: int


# path of an exported file -> the versions of the documents it was built from
Baseline = dict[str, list[SourceVersion]]


@dataclass(frozen=True)
class CurrentExport:
    """The server's export now of one set of formats: its sha256 and, per file, the
    documents (with versions) it is built from."""

    sha256: str
    sources: Baseline


def parse_formats(value: object, *, field: str = "formats") -> str:
    """Formats as sync takes them (`agents-md,claude-md`, or a list of names): checked,
    each once, sorted and comma-joined (so any order of the same formats is one export
    to build); InvalidInput naming `formats`."""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list) or not names or len(names) > len(EXPORT_FORMATS):
        raise InvalidInput(
            f"`{field}` must name 1 to {len(EXPORT_FORMATS)} export formats.", field=field
        )
    cleaned = []
    for name in names:
        if not isinstance(name, str) or name.strip() not in EXPORT_FORMATS:
            raise InvalidInput(
                f"Unknown format {name!r} in `{field}`; the formats are "
                f"{', '.join(EXPORT_FORMATS)}.",
                field=field,
            )
        cleaned.append(name.strip())
    return normal_formats(cleaned)


def normal_formats(names: Iterable[str]) -> str:
    """Formats each once, sorted, comma-joined: one spelling per set of formats."""
    return ",".join(sorted(set(names)))


def parse_files(value: object, *, max_files: int, max_path: int) -> dict[str, str]:
    """`files`: ``{path: state}``, at most ``max_files``, each path a relative POSIX path
    of at most ``max_path`` bytes in UTF-8 (what a file system counts, and what the JSON
    of a check weighs); InvalidInput naming `files` (with the `limit` passed) or
    `files.<path>`."""
    if not isinstance(value, dict):
        raise InvalidInput("`files` must be an object of path: state.", field="files")
    if len(value) > max_files:
        raise InvalidInput(
            f"`files` holds {len(value):,} files; at most {max_files:,} are allowed.",
            field="files",
            limit=max_files,
        )
    files: dict[str, str] = {}
    for path, state in value.items():
        size = len(path.encode("utf-8", "surrogatepass"))
        if size > max_path:
            raise InvalidInput(
                f"A path in `files` is {size:,} bytes long in UTF-8; at most {max_path:,} "
                "are allowed.",
                field="files",
                limit=max_path,
            )
        if (
            not path
            or path.startswith("/")
            or "\\" in path
            or any(ord(c) < 32 for c in path)
            or ".." in path.split("/")
        ):
            raise InvalidInput(
                "`files` paths are relative POSIX paths (no `..`, no backslash, no control "
                "character).",
                field="files",
            )
        if state not in FILE_STATES:
            raise InvalidInput(
                f"The state of {path!r} must be one of {', '.join(FILE_STATES)}.",
                field=f"files.{path}",
            )
        files[path] = state
    return files


def parse_sha256(value: object, *, field: str) -> str:
    if not isinstance(value, str) or not _SHA256.match(value):
        raise InvalidInput(f"`{field}` must be a sha256: 64 lowercase hex digits.", field=field)
    return value


def parse_commit(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _GIT_ID.match(value):
        raise InvalidInput(
            "`commit` must be a git commit id (40 or 64 lowercase hex digits), or null.",
            field="commit",
        )
    return value


def one_line(value: object, *, field: str, limit: int) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > limit or any(ord(c) < 32 for c in value):
        raise InvalidInput(
            f"`{field}` must be one line of at most {limit} characters, or null.", field=field
        )
    return value


def current_export(exports: Sequence[Export]) -> CurrentExport:
    """The export of several formats at once, as `agentdocs sync` merges them: each path
    once (formats that share a file write the same bytes), one sha256 over them all."""
    files: dict[str, ExportFile] = {}
    sources: Baseline = {}
    for export in exports:
        versions = {source.path: source for source in export.sources}
        for file in export.files:
            if file.path in files:
                continue
            files[file.path] = file
            held = dict.fromkeys(part.source for part in file.parts)
            sources[file.path] = [
                {"project": versions[path].project, "path": path, "version": version}
                for path in held
                if path in versions and (version := versions[path].version) is not None
            ]
    return CurrentExport(sha256=export_sha256(list(files.values())), sources=sources)


def repository_state(
    *, files: Mapping[str, str], export_sha256: str, current_sha256: str | None
) -> str:
    """The state of a repository whose last report said ``files`` and held the export
    ``export_sha256``, against the server's export now (None: it cannot be made)."""
    if not files:
        return NEVER_CHECKED
    states = set(files.values())
    if EDITED_LOCALLY in states:
        return EDITED_LOCALLY
    if export_sha256 != current_sha256 or states & _BEHIND_FILE_STATES:
        return BEHIND
    return IN_SYNC


def behind_by(*, baseline: Baseline, now: Baseline) -> dict[str, int]:
    """Per file of the export now, the versions written since ``baseline`` of the
    documents it is built from (a document new to the export counts all its versions);
    files with none are left out."""
    held: dict[tuple[str | None, str], int] = {}
    for sources in baseline.values():
        for source in sources:
            held[(source["project"], source["path"])] = source["version"]
    counts: dict[str, int] = {}
    for path, sources in now.items():
        moved = sum(
            max(source["version"] - held.get((source["project"], source["path"]), 0), 0)
            for source in sources
        )
        if moved:
            counts[path] = moved
    return counts


def local_export_sha256(hashes: Iterable[tuple[str, str]]) -> str:
    """The export_sha256 of files as they are on disk (``(path, sha256)`` pairs): what
    the server's `export_sha256` of the same files would be."""
    lines = "\n".join(f"{path}\t{sha256}" for path, sha256 in sorted(hashes))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()

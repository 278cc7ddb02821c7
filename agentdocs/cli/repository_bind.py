"""`agentdocs bind --repo DIR --tool TOOL`: what a repository run's tool loaded.

Reads the files TOOL loads from DIR, in its order, with the byte offset its documented
size limits cut each at (`agentdocs.core.repository_runs`), each file's git custody (the
commit, the blob, whether the working copy differs; the remote without credentials)
and its state against `agentdocs.lock.json` and the server's current export; the
`bind` command posts it as the record's `repository` section.

Git's facts come from `agentdocs.cli.git`. No Django here.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import Any

from agentdocs.cli import sync
from agentdocs.cli.base import EXIT_USAGE, CommandError, ServerClient
from agentdocs.cli.git import git_state
from agentdocs.core import repository_runs
from agentdocs.core.agent_files import strip_provenance
from agentdocs.core.repository_runs import (
    CUSTODY_GIT,
    CUSTODY_UNTRACKED,
    EDITED_LOCALLY,
    SERVER_CHANGED,
    RepositoryFile,
)
from agentdocs.core.targets import TOOLS_BY_SLUG, LoadingTool


def parse_tool(value: str) -> LoadingTool:
    tool = repository_runs.loading_tool(value)
    if tool is None:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a known tool: the tools are {', '.join(TOOLS_BY_SLUG)}"
        )
    return tool


def working_folder(folder: Path, cwd: Path | None) -> str:
    """The working folder the tool runs in, relative to the repository ``folder`` (`""`:
    its root): ``cwd`` (`--cwd`), else the current directory when it is inside
    ``folder``, else the root. A ``cwd`` outside the repository is a usage error."""
    root = folder.resolve()
    here = (cwd if cwd is not None else Path.cwd()).resolve()
    if cwd is not None and not cwd.is_absolute():
        here = (root / cwd).resolve() if not cwd.exists() else cwd.resolve()
    try:
        relative = here.relative_to(root).as_posix()
    except ValueError:
        if cwd is not None:
            raise CommandError(
                f"--cwd {cwd} is not inside {folder}", exit_code=EXIT_USAGE
            ) from None
        return ""
    return "" if relative == "." else relative


def loaded_paths(folder: Path, tool: LoadingTool, working: str = "") -> list[str]:
    """The files of ``tool`` there are in ``folder``, in the order the tool loads them
    working in the folder ``working`` (relative, `""`: the root): its main file, the
    per-folder files from the root down to it, its rule files."""
    entry = tool.target
    found = [entry.main] if (folder / entry.main).is_file() else []
    nested = tool.nested
    if nested is not None:
        parts = [part for part in working.split("/") if part]
        for depth in range(1, len(parts) + 1):
            here = "/".join(parts[:depth])
            found.extend(
                f"{here}/{name}" for name in nested.files if (folder / here / name).is_file()
            )
    if entry.rules_dir is not None and (folder / entry.rules_dir).is_dir():
        for file in (folder / entry.rules_dir).iterdir():
            if file.is_file():
                found.append(f"{entry.rules_dir}{file.name}")
    return tool.load_order(sorted(set(found)), working)


def _state(path: str, data: bytes, *, locked: dict[str, str], export: sync.Export) -> str:
    local = hashlib.sha256(data).hexdigest()
    state = repository_runs.file_state(
        local=local, locked=locked.get(path), exported=export.hashes.get(path)
    )
    if state == EDITED_LOCALLY and path in export.files:
        # As `sync` reads it: only the provenance line differs, nobody's edit.
        text = data.decode("utf-8", "replace")
        if strip_provenance(text)[0] == strip_provenance(export.files[path])[0]:
            return SERVER_CHANGED
    return state


def repository_section(
    folder: Path, tool: LoadingTool, client: ServerClient, args: argparse.Namespace
) -> dict[str, Any]:
    """The `repository` section of a run of ``tool`` in ``folder``."""
    if not folder.is_dir():
        raise CommandError(f"{folder} is not a folder", exit_code=EXIT_USAGE)
    paths = loaded_paths(folder, tool, working_folder(folder, getattr(args, "cwd", None)))
    contents = {path: (folder / path).read_bytes() for path in paths}
    texts = [(path, contents[path].decode("utf-8", "replace")) for path in paths]
    cuts = repository_runs.cut_points(tool, texts)
    locked = sync.locked_files(sync.read_lock(folder))
    query = argparse.Namespace(
        tenant=args.tenant, project=args.project, format=tool.format, recipe=None, profile=None
    )
    try:
        export = sync.fetch_export(client, query)
    except CommandError as error:
        raise sync.as_usage_error(error) from None
    git = git_state(folder, paths)
    files: list[RepositoryFile] = []
    for path, text in texts:
        data = contents[path]
        entry: RepositoryFile = {
            "path": path,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "cut_at": cuts[path],
            "custody": CUSTODY_UNTRACKED,
            "state": _state(path, data, locked=locked, export=export),
        }
        blob = (git.blobs or {}).get(path)
        if blob is not None:
            entry["custody"] = CUSTODY_GIT
            entry["git"] = {
                "remote": git.remote,
                "commit": git.commit,
                "blob": blob,
                "dirty": path in git.changed,
            }
        globs = repository_runs.rule_globs(tool, path, text)
        if globs:
            entry["globs"] = globs
        files.append(entry)
    return {
        "tool": tool.slug,
        "remote": git.remote,
        "commit": git.commit,
        "branch": git.branch,
        "dirty": git.dirty,
        "files": files,
    }

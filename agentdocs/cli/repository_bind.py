"""`agentdocs bind --repo DIR --tool TOOL`: what a repository run's tool loaded.

Reads the files TOOL loads from DIR, in its order, with the byte offset its documented
size limits cut each at (`agentdocs.core.repository`), each file's git custody (the
commit, the blob, whether the working copy differs; the remote without credentials)
and its state against `agentdocs.lock.json` and the server's current export; the
`bind` command posts it as the record's `repository` section.

Git is asked through the `git` command, a constant number of times whatever the
number of files. No Django here.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdocs.cli import sync
from agentdocs.cli.base import EXIT_USAGE, CommandError, ServerClient
from agentdocs.core import repository
from agentdocs.core.agent_files import strip_provenance
from agentdocs.core.errors import InvalidRemote
from agentdocs.core.repository import (
    CUSTODY_GIT,
    CUSTODY_UNTRACKED,
    EDITED_LOCALLY,
    SERVER_CHANGED,
    RepositoryFile,
)
from agentdocs.core.targets import TOOLS_BY_SLUG, LoadingTool

GIT_TIMEOUT = 30


def parse_tool(value: str) -> LoadingTool:
    tool = repository.loading_tool(value)
    if tool is None:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a known tool: the tools are {', '.join(TOOLS_BY_SLUG)}"
        )
    return tool


@dataclass(frozen=True)
class GitState:
    """The repository's git facts; all None (and nothing tracked) outside git."""

    remote: str | None = None
    commit: str | None = None
    branch: str | None = None
    dirty: bool = False
    blobs: dict[str, str] | None = None  # path -> blob id in the index
    changed: frozenset[str] = frozenset()  # paths whose working copy differs from HEAD


def _git(folder: Path, *arguments: str) -> str | None:
    """The output of ``git arguments`` run in ``folder``; None when it fails (not a
    repository, no commit yet, no such remote) or git is not installed."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *arguments],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape")


def _remote(folder: Path) -> str | None:
    url = _git(folder, "remote", "get-url", "origin")
    if url is None:
        names = (_git(folder, "remote") or "").split()
        url = _git(folder, "remote", "get-url", names[0]) if names else None
    try:
        return repository.clean_remote(url.strip() if url else None)
    except InvalidRemote:
        return None  # a remote git could not fetch from either: the run has none


def git_state(folder: Path, paths: list[str]) -> GitState:
    if _git(folder, "rev-parse", "--is-inside-work-tree") is None:
        return GitState()
    commit = (_git(folder, "rev-parse", "--verify", "-q", "HEAD") or "").strip() or None
    branch = (_git(folder, "symbolic-ref", "--short", "-q", "HEAD") or "").strip() or None
    status = _git(folder, "status", "--porcelain", "-z", "--untracked-files=no") or ""
    blobs: dict[str, str] = {}
    changed: set[str] = set()
    if paths:
        index = _blob_ids(_git(folder, "ls-files", "-s", "-z", "--", *paths), field=1)
        head = _blob_ids(_git(folder, "ls-tree", "-r", "-z", "HEAD", "--", *paths), field=2)
        for path in index:
            # The committed blob (what a clone can give back), else the staged one.
            blobs[path] = head.get(path, index[path])
            if head.get(path) != blob_id((folder / path).read_bytes(), blobs[path]):
                changed.add(path)
    return GitState(
        remote=_remote(folder),
        commit=commit,
        branch=branch,
        dirty=bool(status),
        blobs=blobs,
        changed=frozenset(changed),
    )


def _blob_ids(listing: str | None, *, field: int) -> dict[str, str]:
    """path -> object id from `git ls-files -s -z` (field 1) or `git ls-tree -z` (2)."""
    ids = {}
    for line in filter(None, (listing or "").split("\0")):
        meta, path = line.split("\t", 1)
        ids[path] = meta.split()[field]
    return ids


def blob_id(data: bytes, like: str) -> str:
    """The git blob id of ``data``, in the hash of the repository's ids (as ``like``)."""
    algorithm = hashlib.sha256 if len(like) == 64 else hashlib.sha1
    return algorithm(b"blob %d\0" % len(data) + data).hexdigest()


def loaded_paths(folder: Path, tool: LoadingTool) -> list[str]:
    """The files of ``tool`` there are in ``folder``, in the order the tool loads them."""
    entry = tool.target
    found = [entry.main] if (folder / entry.main).is_file() else []
    if entry.rules_dir is not None and (folder / entry.rules_dir).is_dir():
        for file in (folder / entry.rules_dir).iterdir():
            if file.is_file():
                found.append(f"{entry.rules_dir}{file.name}")
    return tool.load_order(sorted(set(found)))


def _state(path: str, data: bytes, *, locked: dict[str, str], export: sync.Export) -> str:
    local = hashlib.sha256(data).hexdigest()
    state = repository.file_state(
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
    paths = loaded_paths(folder, tool)
    contents = {path: (folder / path).read_bytes() for path in paths}
    texts = [(path, contents[path].decode("utf-8", "replace")) for path in paths]
    cuts = repository.cut_points(tool, texts)
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
        globs = repository.rule_globs(tool, path, text)
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

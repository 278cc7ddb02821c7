"""What git says of a repository's folder: its remote (without credentials), commit,
branch, whether it is dirty, and the blob id of each named file and whether its working
copy differs. Shared by `bind --repo` and the repository reports of `sync`.

Git is asked through the `git` command, a constant number of times whatever the
number of files. No Django here.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agentdocs.core import repository_runs
from agentdocs.core.errors import InvalidRemote

GIT_TIMEOUT = 30


@dataclass(frozen=True)
class GitState:
    """The repository's git facts; all None (and nothing tracked) outside git."""

    remote: str | None = None
    commit: str | None = None
    branch: str | None = None
    dirty: bool = False
    blobs: dict[str, str] | None = None  # path -> blob id in the index
    changed: frozenset[str] = frozenset()  # paths whose working copy differs from HEAD


def git(folder: Path, *arguments: str) -> str | None:
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


def remote(folder: Path) -> str | None:
    url = git(folder, "remote", "get-url", "origin")
    if url is None:
        names = (git(folder, "remote") or "").split()
        url = git(folder, "remote", "get-url", names[0]) if names else None
    try:
        return repository_runs.clean_remote(url.strip() if url else None)
    except InvalidRemote:
        return None  # a remote git could not fetch from either: the run has none


def git_state(folder: Path, paths: list[str]) -> GitState:
    if git(folder, "rev-parse", "--is-inside-work-tree") is None:
        return GitState()
    commit = (git(folder, "rev-parse", "--verify", "-q", "HEAD") or "").strip() or None
    branch = (git(folder, "symbolic-ref", "--short", "-q", "HEAD") or "").strip() or None
    status = git(folder, "status", "--porcelain", "-z", "--untracked-files=no") or ""
    blobs: dict[str, str] = {}
    changed: set[str] = set()
    if paths:
        index = blob_ids(git(folder, "ls-files", "-s", "-z", "--", *paths), field=1)
        head = blob_ids(git(folder, "ls-tree", "-r", "-z", "HEAD", "--", *paths), field=2)
        for path in index:
            # The committed blob (what a clone can give back), else the staged one.
            blobs[path] = head.get(path, index[path])
            if head.get(path) != blob_id((folder / path).read_bytes(), blobs[path]):
                changed.add(path)
    return GitState(
        remote=remote(folder),
        commit=commit,
        branch=branch,
        dirty=bool(status),
        blobs=blobs,
        changed=frozenset(changed),
    )


def blob_ids(listing: str | None, *, field: int) -> dict[str, str]:
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

"""A skill a process read, as its binding record keeps it, and restored from history.

`bound_skill` is the record's entry for one read (the bundle's version and digest, each
file's sha256); `restore_skill` gives the files of that version again, each checked
against its recorded sha256. Plain data: the history rows are read before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from agentdocs.core.bindings import CUSTODY_AGENTDOCS, BoundSkill, BoundSkillFile


def file_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bound_skill(
    *,
    skill_id: int,
    project: str,
    name: str,
    version: int,
    label: str | None,
    sha256: str,
    files: Mapping[str, str],
) -> BoundSkill:
    """The record's entry for a read of version ``version`` of a skill, files by path."""
    return {
        "custody": CUSTODY_AGENTDOCS,
        "skill_id": skill_id,
        "project": project,
        "name": name,
        "version": version,
        "label": label,
        "sha256": sha256,
        "files": [
            BoundSkillFile(path=path, sha256=file_sha256(files[path])) for path in sorted(files)
        ],
    }


def restore_skill(entry: BoundSkill, kept: Mapping[str, str] | None) -> dict[str, Any]:
    """The files of ``entry`` from ``kept`` (its version's files in history, None when
    history no longer holds it), each verified against its recorded sha256."""
    files = []
    for bound in entry["files"]:
        text = None if kept is None else kept.get(bound["path"])
        files.append(
            {
                "path": bound["path"],
                "sha256": bound["sha256"],
                "content": text,
                "verified": text is not None and file_sha256(text) == bound["sha256"],
            }
        )
    return {
        "name": entry["name"],
        "project": entry["project"],
        "version": entry["version"],
        "label": entry["label"],
        "sha256": entry["sha256"],
        "custody": entry["custody"],
        "files": files,
        "verified": kept is not None
        and set(kept) == {f["path"] for f in entry["files"]}
        and all(f["verified"] for f in files),
    }

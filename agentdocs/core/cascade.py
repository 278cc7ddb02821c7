"""The agent document cascade over plain data: project, tenant `_vance`, bundled default.

First hit wins; nothing is merged. A project that writes its own document
replaces the tenant-wide one entirely. The levels that lost are reported as
shadowed, so that first-hit-wins never hides a rule without a trace.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TypedDict

from agentdocs.core.context import sha256_text

TENANT_PROJECT = "_vance"


class Level(StrEnum):
    PROJECT = "project"
    TENANT = "tenant"
    DEFAULT = "default"


CASCADE_ORDER = (Level.PROJECT, Level.TENANT, Level.DEFAULT)


class CascadeReference(TypedDict):
    """A cascade document in a render's account (the winner's shadowed levels)."""

    level: str
    project: str | None
    path: str
    version: int | None
    sha256: str
    bytes: int


@dataclass(frozen=True)
class SourceDocument:
    """A document found at one cascade level.

    ``project`` is the slug of the project holding it (`_vance` at tenant
    level, None for a bundled default); ``version`` is None for a bundled
    default, which is a file shipped with the application, not a document.
    """

    level: Level
    path: str
    body: str
    project: str | None = None
    version: int | None = None
    sha256: str = ""
    # Read by a label (`agentdocs.core.labels`) the document does not have: its latest.
    label_fallback: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "level", Level(self.level))
        if not self.sha256:
            object.__setattr__(self, "sha256", sha256_text(self.body))

    @property
    def size(self) -> int:
        return len(self.body.encode("utf-8"))

    def reference(self) -> CascadeReference:
        return {
            "level": self.level.value,
            "project": self.project,
            "path": self.path,
            "version": self.version,
            "sha256": self.sha256,
            "bytes": self.size,
        }


@dataclass(frozen=True)
class CascadeResult:
    path: str
    winner: SourceDocument | None
    shadowed: tuple[SourceDocument, ...]


def resolve_cascade(path: str, candidates: Iterable[SourceDocument]) -> CascadeResult:
    """Pick the first level that has ``path``; the others that have it are shadowed.

    ``candidates`` are the live documents found at ``path`` (a deleted
    document is simply not a candidate: it counts as absent at its level).
    """
    by_level: dict[Level, SourceDocument] = {}
    for candidate in candidates:
        if candidate.path != path:
            continue
        if candidate.level in by_level:
            raise ValueError(f"Two candidates at the {candidate.level} level for {path!r}")
        by_level[candidate.level] = candidate
    found = [by_level[level] for level in CASCADE_ORDER if level in by_level]
    if not found:
        return CascadeResult(path=path, winner=None, shadowed=())
    return CascadeResult(path=path, winner=found[0], shadowed=tuple(found[1:]))


def read_default_document(
    folder: str | os.PathLike[str] | None, path: str
) -> SourceDocument | None:
    """The bundled default at ``path`` inside ``folder``, or None.

    ``path`` is a validated relative document path; the containment check is a
    second guard so that no recipe can make the server read outside the folder.
    """
    # The folder ships empty, so most renders stop at this cheap check.
    if folder is None or not os.path.isfile(os.path.join(folder, path)):
        return None
    root = Path(folder).resolve()
    candidate = (root / path).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    body = candidate.read_bytes().decode("utf-8", errors="replace")
    return SourceDocument(level=Level.DEFAULT, path=path, body=body)

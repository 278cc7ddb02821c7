"""Three-way merge of skill bundles, file by file: a stale save of a skill merged onto
the version saved since, as a document's text is (`agentdocs.core.merge`).

Per path, over the base bundle (the version the write was based on), *theirs* (the
current version) and *yours* (the files the write sent): a file only one side changed
(added, edited or removed) takes that side's; a file both changed alike takes it; a
text file both edited differently is merged line by line (`three_way`), its overlaps
conflicts. A file one side removed and the other edited is a conflict of the whole
file (the removed side's region is empty). A conflict says its file (`path`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agentdocs.core.merge import ConflictData, three_way


@dataclass(frozen=True)
class BundleMerge:
    """The merged bundle (meaningful only when ``clean``), the conflicts (each with its
    file's ``path``, in path order) and the files whose merge took lines from both."""

    files: dict[str, str]
    conflicts: list[ConflictData] = field(default_factory=list)
    merged_paths: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.conflicts


def _lines(text: str | None) -> list[str]:
    return [] if text is None else text.splitlines()


def _whole_file(path: str, base: str | None, theirs: str | None, yours: str | None) -> ConflictData:
    return {
        "base": {"start": 1, "lines": _lines(base)},
        "theirs": {"start": 1, "lines": _lines(theirs)},
        "yours": {"start": 1, "lines": _lines(yours)},
        "path": path,
    }


def merge_bundles(
    base: Mapping[str, str], theirs: Mapping[str, str], yours: Mapping[str, str]
) -> BundleMerge:
    """``yours`` (based on ``base``) merged onto ``theirs``, file by file."""
    files: dict[str, str] = {}
    conflicts: list[ConflictData] = []
    merged_paths: list[str] = []
    for path in sorted(set(base) | set(theirs) | set(yours)):
        was, now, mine = base.get(path), theirs.get(path), yours.get(path)
        result: str | None
        if now == mine or mine == was:
            result = now
        elif now == was:
            result = mine
        elif now is None or mine is None:
            conflicts.append(_whole_file(path, was, now, mine))
            continue
        else:
            merged = three_way(was or "", now, mine)
            if not merged.clean:
                conflicts.extend({**c, "path": path} for c in merged.conflicts_data())
                continue
            result = merged.text
            merged_paths.append(path)
        if result is not None:
            files[path] = result
    return BundleMerge(files=files, conflicts=conflicts, merged_paths=merged_paths)

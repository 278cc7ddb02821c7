"""Limits told before they cut: which exported files are over a size their tool applies.

Tools read their instruction files only up to a size (Codex 32 KiB of `AGENTS.md`
files, Copilot code review the first 4,000 characters of each file, Windsurf
12,000 characters) and drop the rest without a word; Claude Code warns beyond 40,000
characters in `CLAUDE.md` and 120,000 in all its files. Each `Limit` of a target
(`agentdocs.core.targets`) is checked against the files of its format, and each file
over one becomes a warning naming the first document the tool would cut: the one whose
text crosses the limit.

A ``path`` limit is one budget for the files on the path from the root down to a
working folder, spent root first (Codex): it is checked for the root alone (a warning
on the main file) and from every folder that has a per-folder file, the warning naming
that folder, the file cut and the byte it is cut at::

    codex: from src/api/, 35,112 of 32,768 bytes: src/api/AGENTS.md cut at byte 1,321
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypedDict

from agentdocs.core.targets import Limit, Target, Unit


@dataclass(frozen=True)
class FilePart:
    """Where one section of a file ends (a character offset) and what it came from."""

    end: int
    source: str


class LimitedFile(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def parts(self) -> tuple[FilePart, ...]: ...


class ExportWarningDict(TypedDict):
    format: str
    tool: str
    path: str
    limit: int
    unit: str
    size: int
    cut_from: str
    folder: str | None
    cut_at: int | None
    message: str


@dataclass(frozen=True)
class ExportWarning:
    format: str
    tool: str
    path: str
    limit: int
    unit: Unit
    size: int
    cut_from: str
    # For a limit spent along a path: the working folder (`src/api/`) the files are
    # loaded from, the tool's id, and where in ``path`` (the file cut) the tool stops.
    folder: str | None = None
    cut_at: int | None = None
    tool_id: str = ""

    @property
    def message(self) -> str:
        unit = "bytes" if self.unit == "bytes" else "characters"
        if self.folder is not None:
            where = f"cut at {'byte' if self.unit == 'bytes' else 'character'} {self.cut_at:,}"
            return (
                f"{self.tool_id}: from {self.folder}, {self.size:,} of {self.limit:,} {unit}: "
                f"{self.path} {where}"
            )
        return (
            f"{self.path} holds {self.size:,} {unit}; {self.tool} reads {self.limit:,}: "
            f"it would cut from {self.cut_from}"
        )

    def as_dict(self) -> ExportWarningDict:
        return {
            "format": self.format,
            "tool": self.tool,
            "path": self.path,
            "limit": self.limit,
            "unit": self.unit,
            "size": self.size,
            "cut_from": self.cut_from,
            "folder": self.folder,
            "cut_at": self.cut_at,
            "message": self.message,
        }


def measure(text: str, unit: Unit) -> int:
    return len(text.encode("utf-8")) if unit == "bytes" else len(text)


def _crossing(files: Sequence[LimitedFile], limit: int, unit: Unit) -> str:
    """The source of the first section whose end lies past ``limit``, counting the
    files one after the other (each section measured once: linear in the files' size)."""
    counted = 0
    last = ""
    for file in files:
        start = 0
        for part in file.parts:
            counted += measure(file.content[start : part.end], unit)
            start = part.end
            last = part.source
            if counted > limit:
                return part.source
        counted += measure(file.content[start:], unit)
    return last


def limit_warnings(
    entry: Target, files: Sequence[LimitedFile], *, format: str | None = None
) -> list[ExportWarning]:
    """A warning for each of ``entry``'s ``files`` (or all of them, for a total, or
    those on a path) over one of its limits, in the order of the limits and then of the
    files; ``format``: the format the warnings are told for (default ``entry``'s)."""
    warnings: list[ExportWarning] = []
    for limit in entry.limits:
        warnings.extend(_over(entry, limit, files, format or entry.format))
    return warnings


def _byte_cut(text: str, room: int, unit: Unit) -> int:
    """Where, in ``unit``, a tool with ``room`` left stops reading ``text``."""
    return max(room, 0) if unit == "bytes" else max(min(room, len(text)), 0)


def path_files(entry: Target, files: Sequence[LimitedFile], folder: str) -> list[LimitedFile]:
    """Of ``files``, those ``entry``'s tool reads working in ``folder``, root first: the
    main file, then each folder's file down to ``folder``."""
    by_path = {file.path: file for file in files}
    chain = [by_path[entry.main]] if entry.main in by_path else []
    parts = folder.split("/")
    nested = entry.nested
    for depth in range(1, len(parts) + 1):
        here = "/".join(parts[:depth])
        for name in nested.files if nested is not None else ():
            if f"{here}/{name}" in by_path:
                chain.append(by_path[f"{here}/{name}"])
                break
    return chain


def _along_path(
    entry: Target, limit: Limit, files: Sequence[LimitedFile], format: str
) -> list[ExportWarning]:
    """A ``path`` limit from every folder that has a per-folder file (the root alone is
    the main file's limit)."""
    warnings: list[ExportWarning] = []
    folders = sorted(
        {folder for file in files if (folder := entry.nested_folder(file.path)) is not None}
    )
    for folder in folders:
        chain = path_files(entry, files, folder)
        sizes = [measure(file.content, limit.unit) for file in chain]
        total = sum(sizes)
        if total <= limit.limit:
            continue
        used = 0
        for file, size in zip(chain, sizes, strict=True):
            if used + size > limit.limit:
                warnings.append(
                    ExportWarning(
                        format=format,
                        tool=limit.tool,
                        path=file.path,
                        limit=limit.limit,
                        unit=limit.unit,
                        size=total,
                        cut_from=_crossing(chain, limit.limit, limit.unit),
                        folder=f"{folder}/",
                        cut_at=_byte_cut(file.content, limit.limit - used, limit.unit),
                        tool_id=limit.tool_id,
                    )
                )
                break
            used += size
    return warnings


def _over(
    entry: Target, limit: Limit, files: Sequence[LimitedFile], format: str
) -> list[ExportWarning]:
    def warning(path: str, size: int, checked: Sequence[LimitedFile]) -> ExportWarning:
        return ExportWarning(
            format=format,
            tool=limit.tool,
            path=path,
            limit=limit.limit,
            unit=limit.unit,
            size=size,
            cut_from=_crossing(checked, limit.limit, limit.unit),
            tool_id=limit.tool_id,
        )

    if limit.applies_to == "total":
        size = sum(measure(file.content, limit.unit) for file in files)
        if size <= limit.limit:
            return []
        return [warning(entry.rules_dir or entry.main, size, files)]
    checked = [f for f in files if limit.applies_to == "each" or f.path == entry.main]
    path_warnings = _along_path(entry, limit, files, format) if limit.applies_to == "path" else []
    return [
        warning(file.path, measure(file.content, limit.unit), [file])
        for file in checked
        if measure(file.content, limit.unit) > limit.limit
    ] + path_warnings

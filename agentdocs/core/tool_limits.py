"""Limits told before they cut: which exported files are over a size their tool applies.

Tools read their instruction files only up to a size (Codex the first 32 KiB of
`AGENTS.md`, Copilot code review the first 4,000 characters of each file, Windsurf
12,000 characters) and drop the rest without a word; Claude Code warns beyond 40,000
characters. Each `Limit` of a target (`agentdocs.core.targets`) is checked against the
files of its format, and each file over one becomes a warning naming the first
document the tool would cut: the one whose text crosses the limit.
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


@dataclass(frozen=True)
class ExportWarning:
    format: str
    tool: str
    path: str
    limit: int
    unit: Unit
    size: int
    cut_from: str

    @property
    def message(self) -> str:
        unit = "bytes" if self.unit == "bytes" else "characters"
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


def limit_warnings(entry: Target, files: Sequence[LimitedFile]) -> list[ExportWarning]:
    """A warning for each of ``entry``'s ``files`` (or all of them, for a total) over
    one of its limits, in the order of the limits and then of the files."""
    warnings: list[ExportWarning] = []
    for limit in entry.limits:
        warnings.extend(_over(entry, limit, files))
    return warnings


def _over(entry: Target, limit: Limit, files: Sequence[LimitedFile]) -> list[ExportWarning]:
    def warning(path: str, size: int, checked: Sequence[LimitedFile]) -> ExportWarning:
        return ExportWarning(
            format=entry.format,
            tool=limit.tool,
            path=path,
            limit=limit.limit,
            unit=limit.unit,
            size=size,
            cut_from=_crossing(checked, limit.limit, limit.unit),
        )

    if limit.applies_to == "total":
        size = sum(measure(file.content, limit.unit) for file in files)
        if size <= limit.limit:
            return []
        return [warning(entry.rules_dir or entry.main, size, files)]
    checked = [f for f in files if limit.applies_to == "each" or f.path == entry.main]
    return [
        warning(file.path, measure(file.content, limit.unit), [file])
        for file in checked
        if measure(file.content, limit.unit) > limit.limit
    ]

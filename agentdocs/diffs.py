"""Diffs between two texts, built on difflib: unified text plus structured hunks.

The same hunks feed the API and the side-by-side view in the browser.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field


@dataclass
class DiffLine:
    op: str  # " " unchanged, "-" removed, "+" added
    text: str
    old_number: int | None
    new_number: int | None


@dataclass
class Hunk:
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[DiffLine] = field(default_factory=list)


@dataclass
class Diff:
    unified: str
    hunks: list[Hunk]
    added: int
    removed: int

    def as_dict(self) -> dict:
        return {
            "diff": self.unified,
            "hunks": [asdict(h) for h in self.hunks],
            "added": self.added,
            "removed": self.removed,
        }


def diff_texts(
    old: str, new: str, *, old_label: str = "a", new_label: str = "b", context: int = 3
) -> Diff:
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    unified = "\n".join(
        difflib.unified_diff(
            old_lines, new_lines, fromfile=old_label, tofile=new_label, n=context, lineterm=""
        )
    )
    if unified:
        unified += "\n"
    hunks: list[Hunk] = []
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        hunk = Hunk(
            old_start=first[1] + 1,
            old_lines=last[2] - first[1],
            new_start=first[3] + 1,
            new_lines=last[4] - first[3],
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for offset, text in enumerate(old_lines[i1:i2]):
                    hunk.lines.append(DiffLine(" ", text, i1 + offset + 1, j1 + offset + 1))
                continue
            if tag in ("replace", "delete"):
                for offset, text in enumerate(old_lines[i1:i2]):
                    hunk.lines.append(DiffLine("-", text, i1 + offset + 1, None))
                    removed += 1
            if tag in ("replace", "insert"):
                for offset, text in enumerate(new_lines[j1:j2]):
                    hunk.lines.append(DiffLine("+", text, None, j1 + offset + 1))
                    added += 1
        hunks.append(hunk)
    return Diff(unified=unified, hunks=hunks, added=added, removed=removed)

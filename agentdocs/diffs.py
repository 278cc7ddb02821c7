"""Diffs between two texts, built on difflib: unified text plus structured hunks.

The same hunks feed the API and the side-by-side view in the browser.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
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


# Without its junk heuristic, difflib's SequenceMatcher finds the most readable
# alignment: Markdown repeats blank lines and list markers, and each may anchor a
# match. But its cost grows with the pairs of equal lines times the matching
# blocks, so a checklist of 1,200 identical lines took 10 s to diff. Past this many
# equal pairs, difflib's own heuristic is used (lines in more than 1% of a long text
# are "popular" and anchor nothing), and lines repeated just below that threshold
# but still making up most of the pairs are junk.
MAX_EXACT_PAIRS = 20_000
_HEURISTIC_MIN_LINES = 200  # difflib applies its heuristic to texts this long only
_INVERSE = {"insert": "delete", "delete": "insert"}


def equal_pairs(old: Sequence[str], new: Sequence[str]) -> int:
    """How many (old, new) pairs of equal items there are: what an exact match costs."""
    counts = Counter(new)
    return sum(counts[item] for item in old)


def _bounded_matcher(old: Sequence[str], new: Sequence[str]) -> difflib.SequenceMatcher:
    new_counts, old_counts = Counter(new), Counter(old)
    popular = len(new) // 100 + 1
    heavy = {
        item
        for item, count in new_counts.items()
        if count <= popular and count * old_counts[item] > MAX_EXACT_PAIRS // 20
    }
    return difflib.SequenceMatcher(heavy.__contains__ if heavy else None, old, new)


def grouped_opcodes(
    old: Sequence[str], new: Sequence[str], context: int
) -> list[list[tuple[str, int, int, int, int]]]:
    """difflib's grouped opcodes from ``old`` to ``new``, exact while that is affordable."""
    if equal_pairs(old, new) <= MAX_EXACT_PAIRS or max(len(old), len(new)) < _HEURISTIC_MIN_LINES:
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        return list(matcher.get_grouped_opcodes(context))
    if len(new) >= _HEURISTIC_MIN_LINES:
        return list(_bounded_matcher(old, new).get_grouped_opcodes(context))
    # The heuristic looks at the second text only: match the long one against the
    # short one, then read the opcodes backwards.
    groups = _bounded_matcher(new, old).get_grouped_opcodes(context)
    return [
        [(_INVERSE.get(tag, tag), j1, j2, i1, i2) for tag, i1, i2, j1, j2 in group]
        for group in groups
    ]


def _unified_range(start: int, length: int) -> str:
    """A hunk's range as `diff -u` and difflib write it."""
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def diff_texts(
    old: str, new: str, *, old_label: str = "a", new_label: str = "b", context: int = 3
) -> Diff:
    """The unified diff and its hunks, both from one alignment of the lines."""
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    hunks: list[Hunk] = []
    unified = [f"--- {old_label}", f"+++ {new_label}"]
    added = removed = 0
    for group in grouped_opcodes(old_lines, new_lines, context):
        first, last = group[0], group[-1]
        hunk = Hunk(
            old_start=first[1] + 1,
            old_lines=last[2] - first[1],
            new_start=first[3] + 1,
            new_lines=last[4] - first[3],
        )
        unified.append(
            f"@@ -{_unified_range(first[1], hunk.old_lines)} "
            f"+{_unified_range(first[3], hunk.new_lines)} @@"
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
        unified += [line.op + line.text for line in hunk.lines]
        hunks.append(hunk)
    text = "\n".join(unified) + "\n" if hunks else ""
    return Diff(unified=text, hunks=hunks, added=added, removed=removed)

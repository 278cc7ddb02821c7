"""Diffs between two texts, built on difflib: unified text plus structured hunks.

The same alignment feeds the API, the side-by-side view in the browser and the
unified-diff download. What a diff shows is bounded (`MAX_CHANGED_LINES`,
`MAX_SHOWN_BYTES`): two 256 KiB versions that differ on every line would otherwise
make one request build a quarter of a million lines of output. A bounded diff says
so (`truncated`, `shown_changed_lines`); only the download is whole.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal, TypedDict, cast


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


class DiffLineDict(TypedDict):
    op: str
    text: str
    old_number: int | None
    new_number: int | None


class HunkDict(TypedDict):
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[DiffLineDict]


class DiffDict(TypedDict):
    """A diff as the API returns it."""

    diff: str
    hunks: list[HunkDict]
    added: int
    removed: int
    truncated: bool
    shown_changed_lines: int


@dataclass
class Diff:
    unified: str
    hunks: list[Hunk]
    added: int  # in the whole diff, shown or not
    removed: int
    truncated: bool = False  # the hunks and the unified text stop before the end
    shown_changed_lines: int = 0  # of the added + removed lines, those in the hunks

    @property
    def changed_lines(self) -> int:
        return self.added + self.removed

    def as_dict(self) -> DiffDict:
        return {
            "diff": self.unified,
            "hunks": [cast(HunkDict, asdict(h)) for h in self.hunks],
            "added": self.added,
            "removed": self.removed,
            "truncated": self.truncated,
            "shown_changed_lines": self.shown_changed_lines,
        }


# What one diff shows at most, for the API and the pages: the first changed lines in
# document order, with their context. 2,000 changed lines is a thorough rewrite of a
# long document; 128 KiB of line text keeps a page, escaped, well under a megabyte.
MAX_CHANGED_LINES = 2_000
MAX_SHOWN_BYTES = 128 * 1024


# Without its junk heuristic, difflib's SequenceMatcher finds the most readable
# alignment: Markdown repeats blank lines and list markers, and each may anchor a
# match. But its cost grows with the pairs of equal lines times the matching
# blocks, which a writer controls (a checklist of identical lines). Past this many
# equal pairs, difflib's own heuristic is used (lines in more than 1% of a long text
# are "popular" and anchor nothing), and lines repeated just below that threshold
# but still making up most of the pairs are junk. Measurements: bench/README.md.
MAX_EXACT_PAIRS = 20_000
_HEURISTIC_MIN_LINES = 200  # difflib applies its heuristic to texts this long only
# Even so, each search for the longest match scans its ranges again, and a text
# with thousands of short matches (every other line changed) makes thousands of
# searches. The matcher counts the lines it scans and gives up past this many, far
# above what an ordinary edit of a long document scans; the diff is then the common
# beginning and end with one change between them.
MAX_SCANNED_LINES = 1_000_000

OpTag = Literal["replace", "delete", "insert", "equal"]
Opcode = tuple[OpTag, int, int, int, int]
_INVERSE: dict[OpTag, OpTag] = {"insert": "delete", "delete": "insert"}


class _TooMuchWork(Exception):
    pass


class _CountingMatcher(difflib.SequenceMatcher[str]):
    """difflib's matcher, stopping once it has scanned MAX_SCANNED_LINES."""

    def __init__(
        self,
        isjunk: Callable[[str], bool] | None,
        a: Sequence[str],
        b: Sequence[str],
        autojunk: bool = True,
    ) -> None:
        self.scanned = 0
        self._lengths = (len(a), len(b))
        super().__init__(isjunk, a, b, autojunk=autojunk)

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> difflib.Match:
        ahi = self._lengths[0] if ahi is None else ahi
        bhi = self._lengths[1] if bhi is None else bhi
        self.scanned += (ahi - alo) + (bhi - blo)
        if self.scanned > MAX_SCANNED_LINES:
            raise _TooMuchWork
        return super().find_longest_match(alo, ahi, blo, bhi)


class _GivenOpcodes(difflib.SequenceMatcher[str]):
    """Groups opcodes computed elsewhere with difflib's own get_grouped_opcodes."""

    def __init__(self, opcodes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self.opcodes = opcodes


def equal_pairs(old: Sequence[str], new: Sequence[str]) -> int:
    """How many (old, new) pairs of equal items there are: what an exact match costs."""
    counts = Counter(new)
    return sum(counts[item] for item in old)


def _heuristic_matcher(old: Sequence[str], new: Sequence[str]) -> _CountingMatcher:
    new_counts, old_counts = Counter(new), Counter(old)
    popular = len(new) // 100 + 1
    heavy = {
        item
        for item, count in new_counts.items()
        if count <= popular and count * old_counts[item] > MAX_EXACT_PAIRS // 20
    }
    return _CountingMatcher(heavy.__contains__ if heavy else None, old, new)


def _opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    if equal_pairs(old, new) <= MAX_EXACT_PAIRS or max(len(old), len(new)) < _HEURISTIC_MIN_LINES:
        return _CountingMatcher(None, old, new, autojunk=False).get_opcodes()
    if len(new) >= _HEURISTIC_MIN_LINES:
        return _heuristic_matcher(old, new).get_opcodes()
    # The heuristic looks at the second text only: match the long one against the
    # short one, then read the opcodes backwards.
    return [
        (_INVERSE.get(tag, tag), j1, j2, i1, i2)
        for tag, i1, i2, j1, j2 in _heuristic_matcher(new, old).get_opcodes()
    ]


def _coarse_opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    """The common beginning and end, and everything between them as one change."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    old_end, new_end = len(old) - end, len(new) - end
    opcodes: list[Opcode] = [("equal", 0, start, 0, start)] if start else []
    if old_end > start or new_end > start:
        tag: OpTag = (
            "replace"
            if old_end > start and new_end > start
            else ("delete" if old_end > start else "insert")
        )
        opcodes.append((tag, start, old_end, start, new_end))
    if end:
        opcodes.append(("equal", old_end, len(old), new_end, len(new)))
    return opcodes


def line_opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    """difflib's opcodes from ``old`` to ``new``: exact while that is affordable,
    then difflib's heuristic, then (past a fixed amount of work) coarse."""
    try:
        return _opcodes(old, new)
    except _TooMuchWork:
        return _coarse_opcodes(old, new)


def grouped_opcodes(old: Sequence[str], new: Sequence[str], context: int) -> list[list[Opcode]]:
    """The opcodes of `line_opcodes` in hunks with ``context`` unchanged lines around."""
    groups = _GivenOpcodes(line_opcodes(old, new)).get_grouped_opcodes(context)
    return [cast(list[Opcode], group) for group in groups]


def changed_counts(opcodes: Sequence[Opcode]) -> tuple[int, int]:
    """(added, removed): how many lines the whole diff adds and removes."""
    added = removed = 0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def _unified_range(start: int, length: int) -> str:
    """A hunk's range as `diff -u` and difflib write it."""
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


class _Budget:
    """Counts what a bounded diff has shown: changed lines, and bytes of line text."""

    def __init__(self, max_changed_lines: int | None, max_bytes: int | None) -> None:
        self.changed_left = max_changed_lines
        self.bytes_left = max_bytes
        self.changed_shown = 0

    def take(self, text: str, *, changed: bool) -> bool:
        """Whether this line still fits; if so it is counted as shown."""
        if changed and self.changed_left is not None and self.changed_left <= 0:
            return False
        if self.bytes_left is not None:
            size = len(text.encode("utf-8", "surrogatepass"))
            # The first line is always shown: a diff of one huge line still shows it.
            if size > self.bytes_left and self.changed_shown:
                return False
            self.bytes_left -= size
        if changed:
            self.changed_shown += 1
            if self.changed_left is not None:
                self.changed_left -= 1
        return True


def diff_texts(
    old: str,
    new: str,
    *,
    old_label: str = "a",
    new_label: str = "b",
    context: int = 3,
    max_changed_lines: int | None = MAX_CHANGED_LINES,
    max_bytes: int | None = MAX_SHOWN_BYTES,
) -> Diff:
    """The unified diff and its hunks, both from one alignment of the lines.

    Past ``max_changed_lines`` changed lines or ``max_bytes`` of line text (None: no
    bound) the diff stops: the last hunk ends where the budget ran out and its
    header counts the lines it holds, so the unified text is still a valid patch
    of what it shows. ``added`` and ``removed`` always count the whole diff.
    """
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    opcodes = line_opcodes(old_lines, new_lines)
    added, removed = changed_counts(opcodes)
    budget = _Budget(max_changed_lines, max_bytes)
    hunks: list[Hunk] = []
    unified = [f"--- {old_label}", f"+++ {new_label}"]
    truncated = False
    for group in _GivenOpcodes(opcodes).get_grouped_opcodes(context):
        first = group[0]
        hunk = Hunk(old_start=first[1] + 1, old_lines=0, new_start=first[3] + 1, new_lines=0)
        truncated = not _fill_hunk(hunk, cast(list[Opcode], group), old_lines, new_lines, budget)
        while truncated and hunk.lines and hunk.lines[-1].op == " ":
            hunk.lines.pop()  # context leads up to a change; the cut change is not shown
        if not hunk.lines:
            break
        hunk.old_lines = sum(line.op != "+" for line in hunk.lines)
        hunk.new_lines = sum(line.op != "-" for line in hunk.lines)
        unified.append(
            f"@@ -{_unified_range(first[1], hunk.old_lines)} "
            f"+{_unified_range(first[3], hunk.new_lines)} @@"
        )
        unified += [line.op + line.text for line in hunk.lines]
        hunks.append(hunk)
        if truncated:
            break
    text = "\n".join(unified) + "\n" if hunks else ""
    return Diff(
        unified=text,
        hunks=hunks,
        added=added,
        removed=removed,
        truncated=truncated,
        shown_changed_lines=budget.changed_shown,
    )


def _fill_hunk(
    hunk: Hunk,
    group: list[Opcode],
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    budget: _Budget,
) -> bool:
    """Add the group's lines to the hunk while the budget lasts; False if it ran out."""
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            for offset, text in enumerate(old_lines[i1:i2]):
                if not budget.take(text, changed=False):
                    return False
                hunk.lines.append(DiffLine(" ", text, i1 + offset + 1, j1 + offset + 1))
            continue
        if tag in ("replace", "delete"):
            for offset, text in enumerate(old_lines[i1:i2]):
                if not budget.take(text, changed=True):
                    return False
                hunk.lines.append(DiffLine("-", text, i1 + offset + 1, None))
        if tag in ("replace", "insert"):
            for offset, text in enumerate(new_lines[j1:j2]):
                if not budget.take(text, changed=True):
                    return False
                hunk.lines.append(DiffLine("+", text, None, j1 + offset + 1))
    return True


def unified_diff(
    old: str, new: str, *, old_label: str = "a", new_label: str = "b", context: int = 3
) -> str:
    """The whole unified diff, unbounded, as `diff -u` writes it: for the download.

    Written straight from the opcodes, without the hunks' line objects, since a
    whole diff may run to a quarter of a million lines."""
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    out = [f"--- {old_label}", f"+++ {new_label}"]
    groups = grouped_opcodes(old_lines, new_lines, context)
    for group in groups:
        first, last = group[0], group[-1]
        out.append(
            f"@@ -{_unified_range(first[1], last[2] - first[1])} "
            f"+{_unified_range(first[3], last[4] - first[3])} @@"
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + text for text in old_lines[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += ["-" + text for text in old_lines[i1:i2]]
            if tag in ("replace", "insert"):
                out += ["+" + text for text in new_lines[j1:j2]]
    return "\n".join(out) + "\n" if groups else ""


FileStatus = Literal["added", "removed", "modified"]


@dataclass(frozen=True)
class FileDiff:
    """One file of two bundles (a skill's versions) that differs: its path, whether it
    was added, removed or changed, and its diff."""

    path: str
    status: FileStatus
    diff: Diff

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "status": self.status, **self.diff.as_dict()}


def bundle_changes(
    old: Mapping[str, str], new: Mapping[str, str]
) -> list[tuple[str, FileStatus, str, str]]:
    """``(path, status, old text, new text)`` of each file that differs, by path (a file
    one side lacks is empty there)."""
    changes: list[tuple[str, FileStatus, str, str]] = []
    for path in sorted(set(old) | set(new)):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        status: FileStatus = (
            "added" if before is None else "removed" if after is None else "modified"
        )
        changes.append((path, status, before or "", after or ""))
    return changes


def bundle_diffs(
    old: Mapping[str, str],
    new: Mapping[str, str],
    *,
    old_label: str,
    new_label: str,
    max_changed_lines: int | None = MAX_CHANGED_LINES,
    max_bytes: int | None = MAX_SHOWN_BYTES,
) -> list[FileDiff]:
    """The files that differ from ``old`` to ``new`` (bundles: path to text), each
    diffed and bounded as `diff_texts`, labelled ``<label>/<path>``."""
    return [
        FileDiff(
            path,
            status,
            diff_texts(
                before,
                after,
                old_label=f"{old_label}/{path}",
                new_label=f"{new_label}/{path}",
                max_changed_lines=max_changed_lines,
                max_bytes=max_bytes,
            ),
        )
        for path, status, before, after in bundle_changes(old, new)
    ]


def bundle_unified_diff(
    old: Mapping[str, str], new: Mapping[str, str], *, old_label: str, new_label: str
) -> str:
    """The whole unified diff of two bundles, file after file, unbounded: a patch."""
    return "".join(
        unified_diff(
            before, after, old_label=f"{old_label}/{path}", new_label=f"{new_label}/{path}"
        )
        for path, _status, before, after in bundle_changes(old, new)
    )

"""Shapes a diff for the side-by-side view: paired rows, folded unchanged stretches.

Built on `agentdocs.core.diffs.diff_texts`, the same engine the API uses. The output
is plain data (text segments flagged as changed or not); the template escapes
every piece, so a diff of hostile Markdown is shown as text.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from itertools import zip_longest

from agentdocs.core.diffs import MAX_EXACT_PAIRS, DiffLine, diff_texts, equal_pairs

CONTEXT_LINES = 3
# Folding fewer lines than this hides more than it saves.
MIN_FOLDED_LINES = 4
# Intraline highlighting on very long lines costs more than it shows.
MAX_INTRALINE_CHARS = 2000
MIN_SHARED_RATIO = 0.4
# Words, runs of white space, and single punctuation marks.
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass
class Segment:
    text: str
    changed: bool = False


@dataclass
class Side:
    number: int | None
    segments: list[Segment]


@dataclass
class Row:
    kind: str  # "same", "change", "removed", "added"
    old: Side | None
    new: Side | None


@dataclass
class Block:
    rows: list[Row]
    folded: bool = False


@dataclass
class SideBySide:
    blocks: list[Block] = field(default_factory=list)
    added: int = 0
    removed: int = 0

    @property
    def identical(self) -> bool:
        return self.added == 0 and self.removed == 0


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _intraline(old: str, new: str) -> tuple[list[Segment], list[Segment]]:
    """Mark the words that changed between a removed line and the added line it became.

    Lines that share little are shown as wholly changed: scattered fragments of
    two different sentences are harder to read than the two sentences.
    """
    if len(old) + len(new) > MAX_INTRALINE_CHARS:
        return [Segment(old, True)], [Segment(new, True)]
    old_tokens, new_tokens = _tokens(old), _tokens(new)
    if equal_pairs(old_tokens, new_tokens) > MAX_EXACT_PAIRS:
        return [Segment(old, True)], [Segment(new, True)]  # too repetitive to align cheaply
    matcher = difflib.SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    if matcher.ratio() < MIN_SHARED_RATIO:
        return [Segment(old, True)], [Segment(new, True)]
    old_segments: list[Segment] = []
    new_segments: list[Segment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 > i1:
            old_segments.append(Segment("".join(old_tokens[i1:i2]), tag != "equal"))
        if j2 > j1:
            new_segments.append(Segment("".join(new_tokens[j1:j2]), tag != "equal"))
    return old_segments, new_segments


def _same_row(line: DiffLine) -> Row:
    return Row(
        kind="same",
        old=Side(line.old_number, [Segment(line.text)]),
        new=Side(line.new_number, [Segment(line.text)]),
    )


def _changed_rows(removed: list[DiffLine], added: list[DiffLine]) -> list[Row]:
    rows = []
    for old, new in zip_longest(removed, added):
        if old is not None and new is not None:
            old_segments, new_segments = _intraline(old.text, new.text)
            rows.append(
                Row(
                    kind="change",
                    old=Side(old.old_number, old_segments),
                    new=Side(new.new_number, new_segments),
                )
            )
        elif old is not None:
            rows.append(
                Row(kind="removed", old=Side(old.old_number, [Segment(old.text)]), new=None)
            )
        else:
            rows.append(Row(kind="added", old=None, new=Side(new.new_number, [Segment(new.text)])))
    return rows


def _rows(lines: list[DiffLine]) -> list[Row]:
    rows: list[Row] = []
    removed: list[DiffLine] = []
    added: list[DiffLine] = []
    for line in lines:
        if line.op == " ":
            rows.extend(_changed_rows(removed, added))
            removed, added = [], []
            rows.append(_same_row(line))
        elif line.op == "-":
            if added:  # a removal after additions starts a new change
                rows.extend(_changed_rows(removed, added))
                removed, added = [], []
            removed.append(line)
        else:
            added.append(line)
    rows.extend(_changed_rows(removed, added))
    return rows


def _fold(rows: list[Row], context: int) -> list[Block]:
    """Keep `context` unchanged rows around each change; fold longer unchanged stretches."""
    blocks: list[Block] = []
    shown: list[Row] = []
    index = 0
    while index < len(rows):
        if rows[index].kind != "same":
            shown.append(rows[index])
            index += 1
            continue
        end = index
        while end < len(rows) and rows[end].kind == "same":
            end += 1
        stretch = rows[index:end]
        keep_before = 0 if index == 0 else context
        keep_after = 0 if end == len(rows) else context
        if len(stretch) - keep_before - keep_after >= MIN_FOLDED_LINES:
            shown.extend(stretch[:keep_before])
            if shown:
                blocks.append(Block(rows=shown))
            blocks.append(Block(rows=stretch[keep_before : len(stretch) - keep_after], folded=True))
            shown = list(stretch[len(stretch) - keep_after :])
        else:
            shown.extend(stretch)
        index = end
    if shown:
        blocks.append(Block(rows=shown))
    return blocks


def side_by_side(old: str, new: str, *, context: int = CONTEXT_LINES) -> SideBySide:
    # One hunk holding every line: folding is decided here, where it is shown.
    everything = max(len(old.splitlines()), len(new.splitlines()), 1)
    diff = diff_texts(old, new, context=everything)
    lines = [line for hunk in diff.hunks for line in hunk.lines]
    return SideBySide(blocks=_fold(_rows(lines), context), added=diff.added, removed=diff.removed)

"""Shapes a diff for the side-by-side view: paired rows, folded unchanged stretches.

Built on `agentdocs.core.diffs.line_opcodes`, the same alignment the API uses. The
output is plain data (text segments flagged as changed or not); the template
escapes every piece, so a diff of hostile Markdown is shown as text.

Bounded like the API's diff: the view shows the first `MAX_CHANGED_LINES` changed
lines (and `MAX_SHOWN_BYTES` of line text), says what it left out, and carries the
lines of a long unchanged stretch only as their count. It is kept in the cache
under the two texts' hashes: a version never changes, so neither does its diff.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from django.core.cache import cache

from agentdocs.core.diffs import (
    MAX_CHANGED_LINES,
    MAX_EXACT_PAIRS,
    MAX_SHOWN_BYTES,
    bundle_changes,
    changed_counts,
    equal_pairs,
    line_opcodes,
    unified_diff,
)

CONTEXT_LINES = 3
# Folding fewer lines than this hides more than it saves.
MIN_FOLDED_LINES = 4
# A fold up to this long carries its lines, to open in place; a longer one only says
# how many lines it hides (the document page shows every version whole).
MAX_EXPANDABLE_FOLD = 40
# A longer line is shown cut, saying how many characters it hides.
MAX_LINE_CHARS = 5_000
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
    clipped: int = 0  # characters of the line not shown (past MAX_LINE_CHARS)


@dataclass
class Row:
    kind: str  # "same", "change", "removed", "added"
    old: Side | None
    new: Side | None


@dataclass
class Block:
    rows: list[Row]
    folded: bool = False
    omitted: int = 0  # unchanged lines a long fold hides without carrying them

    @property
    def line_count(self) -> int:
        return len(self.rows) + self.omitted


@dataclass
class SideBySide:
    blocks: list[Block] = field(default_factory=list)
    added: int = 0  # in the whole diff, shown or not
    removed: int = 0
    truncated: bool = False  # the view stops before the end of the diff
    shown_changed_lines: int = 0

    @property
    def identical(self) -> bool:
        return self.added == 0 and self.removed == 0

    @property
    def changed_lines(self) -> int:
        return self.added + self.removed


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


def _side(number: int | None, text: str, *, changed: bool = False) -> Side:
    if len(text) > MAX_LINE_CHARS:
        return Side(number, [Segment(text[:MAX_LINE_CHARS], changed)], len(text) - MAX_LINE_CHARS)
    return Side(number, [Segment(text, changed)])


def _same_row(text: str, old_number: int, new_number: int) -> Row:
    return Row(kind="same", old=_side(old_number, text), new=_side(new_number, text))


def _change_row(old: str, old_number: int, new: str, new_number: int) -> Row:
    if max(len(old), len(new)) > MAX_LINE_CHARS:
        return Row(
            kind="change",
            old=_side(old_number, old, changed=True),
            new=_side(new_number, new, changed=True),
        )
    old_segments, new_segments = _intraline(old, new)
    return Row(
        kind="change", old=Side(old_number, old_segments), new=Side(new_number, new_segments)
    )


class _Budget:
    """What the view may still show: changed lines, and bytes of line text."""

    def __init__(self, max_changed_lines: int, max_bytes: int) -> None:
        self.changed_left = max_changed_lines
        self.bytes_left = max_bytes
        self.changed_shown = 0

    def take(self, *texts: str, changed: int = 0) -> bool:
        """Whether a row of these texts, with ``changed`` changed lines, still fits."""
        size = sum(len(text[:MAX_LINE_CHARS].encode("utf-8", "surrogatepass")) for text in texts)
        if changed > self.changed_left:
            return False
        # The first change is always shown: a diff of one huge line still shows it.
        if size > self.bytes_left and self.changed_shown:
            return False
        self.bytes_left -= size
        self.changed_left -= changed
        self.changed_shown += changed
        return True


class _Builder:
    """Rows in blocks: unchanged stretches folded, changes paired, within a budget."""

    def __init__(self, budget: _Budget) -> None:
        self.budget = budget
        self.blocks: list[Block] = []
        self.shown: list[Row] = []
        self.truncated = False

    def same(self, lines: Sequence[str], old_start: int, new_start: int) -> bool:
        for offset, text in enumerate(lines):
            if not self.budget.take(text):
                return False
            self.shown.append(_same_row(text, old_start + offset + 1, new_start + offset + 1))
        return True

    def fold(self, lines: Sequence[str], old_start: int, new_start: int) -> bool:
        if self.shown:
            self.blocks.append(Block(rows=self.shown))
            self.shown = []
        if len(lines) > MAX_EXPANDABLE_FOLD:
            self.blocks.append(Block(rows=[], folded=True, omitted=len(lines)))
            return True
        rows = []
        for offset, text in enumerate(lines):
            if not self.budget.take(text):
                return False
            rows.append(_same_row(text, old_start + offset + 1, new_start + offset + 1))
        self.blocks.append(Block(rows=rows, folded=True))
        return True

    def change(
        self, removed: Sequence[str], old_start: int, added: Sequence[str], new_start: int
    ) -> bool:
        for offset, (old, new) in enumerate(zip_longest(removed, added)):
            if old is not None and new is not None:
                if not self.budget.take(old, new, changed=2):
                    return False
                row = _change_row(old, old_start + offset + 1, new, new_start + offset + 1)
            elif old is not None:
                if not self.budget.take(old, changed=1):
                    return False
                row = Row(kind="removed", old=_side(old_start + offset + 1, old), new=None)
            else:
                if not self.budget.take(new, changed=1):
                    return False
                row = Row(kind="added", old=None, new=_side(new_start + offset + 1, new))
            self.shown.append(row)
        return True

    def finish(self) -> list[Block]:
        if self.truncated:
            while self.shown and self.shown[-1].kind == "same":
                self.shown.pop()  # context leading up to a change that is not shown
        if self.shown:
            self.blocks.append(Block(rows=self.shown))
        return self.blocks


def _build(
    old_lines: list[str],
    new_lines: list[str],
    opcodes: list,
    *,
    context: int,
    max_changed_lines: int,
    max_bytes: int,
) -> tuple[list[Block], bool, int]:
    """Keep `context` unchanged rows around each change; fold longer unchanged stretches."""
    builder = _Builder(_Budget(max_changed_lines, max_bytes))
    last = len(opcodes) - 1
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag != "equal":
            fits = builder.change(old_lines[i1:i2], i1, new_lines[j1:j2], j1)
        else:
            keep_before = 0 if index == 0 else context
            keep_after = 0 if index == last else context
            length = i2 - i1
            if length - keep_before - keep_after < MIN_FOLDED_LINES:
                fits = builder.same(old_lines[i1:i2], i1, j1)
            else:
                fold_end = i2 - keep_after
                fits = (
                    builder.same(old_lines[i1 : i1 + keep_before], i1, j1)
                    and builder.fold(
                        old_lines[i1 + keep_before : fold_end], i1 + keep_before, j1 + keep_before
                    )
                    and builder.same(old_lines[fold_end:i2], fold_end, j2 - keep_after)
                )
        if not fits:
            builder.truncated = True
            break
    return builder.finish(), builder.truncated, builder.budget.changed_shown


# Bump when the shape of SideBySide or what it holds changes: cached diffs are keyed by it.
FORMAT_VERSION = 1
CACHE_SECONDS = 7 * 24 * 3600


def cache_key(old: str, new: str, context: int, max_changed_lines: int, max_bytes: int) -> str:
    old_hash = hashlib.sha256(old.encode("utf-8", "surrogatepass")).hexdigest()
    new_hash = hashlib.sha256(new.encode("utf-8", "surrogatepass")).hexdigest()
    bounds = f"{context}:{max_changed_lines}:{max_bytes}"
    return f"diffview:v{FORMAT_VERSION}:{bounds}:{old_hash}:{new_hash}"


def side_by_side(
    old: str,
    new: str,
    *,
    context: int = CONTEXT_LINES,
    max_changed_lines: int = MAX_CHANGED_LINES,
    max_bytes: int = MAX_SHOWN_BYTES,
) -> SideBySide:
    """The bounded side-by-side view from ``old`` to ``new``, from the cache if there.

    Keyed by the two texts' hashes rather than by (document, from, to): the same
    thing for two versions of a document, since versions never change, and it also
    serves the revert preview (current text against a version) and the edit
    conflict's diff without each caller naming its versions.
    """
    key = cache_key(old, new, context, max_changed_lines, max_bytes)
    diff = cache.get(key)
    if diff is None:
        old_lines, new_lines = old.splitlines(), new.splitlines()
        opcodes = line_opcodes(old_lines, new_lines)
        added, removed = changed_counts(opcodes)
        blocks, truncated, shown = _build(
            old_lines,
            new_lines,
            opcodes,
            context=context,
            max_changed_lines=max_changed_lines,
            max_bytes=max_bytes,
        )
        diff = SideBySide(
            blocks=blocks,
            added=added,
            removed=removed,
            truncated=truncated,
            shown_changed_lines=shown,
        )
        cache.set(key, diff, CACHE_SECONDS)
    return diff


def whole_unified_diff(old: str, new: str, *, old_label: str, new_label: str) -> str:
    """The whole unified diff for the download, kept in the cache like the view."""
    key = f"{cache_key(old, new, CONTEXT_LINES, 0, 0)}:unified:{old_label}:{new_label}"
    text = cache.get(key)
    if text is None:
        text = unified_diff(old, new, old_label=old_label, new_label=new_label)
        cache.set(key, text, CACHE_SECONDS)
    return text


def file_diffs(old: Mapping[str, str], new: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each file that differs between two bundles (a skill's versions, a skill's change
    request and its base), by path, with its status and side-by-side view: what the
    skill diff page and a skill's change request page show."""
    return [
        {"path": path, "status": status, "diff": side_by_side(before, after)}
        for path, status, before, after in bundle_changes(old, new)
    ]

"""Three-way merge of document texts, line by line (with the `merge3` library).

`three_way(base, theirs, yours)` merges two edits of the same base: *theirs* is the
version saved since (the document's current text), *yours* the edit being saved. A
region both sides changed in different ways is a conflict; then no text is merged
and each conflict says where it is in each of the three texts, so a person (or a
client) can choose per conflict. Lines changed identically on both sides, and edits
of one side only, merge cleanly.

Line numbers are 1-based, as an editor shows them; `lines` are the region's lines
without their line ends. An empty region (an insertion on the other side) has
`lines == []` and `start` is the line it would come before.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, NotRequired, TypedDict

import merge3

from agentdocs.core.shapes import Doc


class RegionData(TypedDict):
    """One side of a conflict: where its lines are and what they say."""

    start: Annotated[
        int,
        Doc(
            "The region's first line, 1-based (for an empty region: the line it would come before)"
        ),
    ]
    lines: Annotated[list[str], Doc("Its lines, without line ends")]


class ConflictData(TypedDict):
    """An overlap of a three-way merge, in each of the three texts."""

    base: Annotated[RegionData, Doc("In the version the write was based on")]
    theirs: Annotated[RegionData, Doc("In the current version")]
    yours: Annotated[RegionData, Doc("In the text the write sent")]
    path: NotRequired[
        Annotated[str, Doc("Of a skill's merge (`core.skill_merge`): the file it is in")]
    ]


@dataclass(frozen=True)
class Region:
    start: int
    lines: tuple[str, ...]

    def as_dict(self) -> RegionData:
        return {"start": self.start, "lines": list(self.lines)}


@dataclass(frozen=True)
class Conflict:
    base: Region
    theirs: Region
    yours: Region

    def as_dict(self) -> ConflictData:
        return {
            "base": self.base.as_dict(),
            "theirs": self.theirs.as_dict(),
            "yours": self.yours.as_dict(),
        }


@dataclass(frozen=True)
class Piece:
    """One stretch of the merged outcome: who it came from, and its text.

    `origin` is "both" (unchanged, or changed alike), "theirs", "yours" or "conflict".
    For a conflict, `conflict` holds the three sides and `text` is empty.
    """

    origin: str
    text: str
    conflict: Conflict | None = None


@dataclass(frozen=True)
class MergeResult:
    pieces: tuple[Piece, ...]
    conflicts: tuple[Conflict, ...] = field(default=())

    @property
    def clean(self) -> bool:
        return not self.conflicts

    @property
    def text(self) -> str:
        """The merged text; only meaningful when the merge is clean."""
        return "".join(piece.text for piece in self.pieces)

    def conflicts_data(self) -> list[ConflictData]:
        return [conflict.as_dict() for conflict in self.conflicts]

    def origins(self) -> dict[str, int]:
        """How many lines came from each side: {"theirs": n, "yours": m}."""
        counts = {"theirs": 0, "yours": 0}
        for piece in self.pieces:
            if piece.origin in counts:
                counts[piece.origin] += len(piece.text.splitlines())
        return counts

    def resolve(self, choices: Sequence[str | None]) -> str:
        """The text with conflict i resolved by `choices[i]`.

        A choice is "theirs", "yours", "both" (theirs, then yours) or the literal
        replacement text (any other string). A missing or None choice keeps theirs.
        """
        out: list[str] = []
        index = 0
        for piece in self.pieces:
            if piece.conflict is None:
                out.append(piece.text)
                continue
            choice = choices[index] if index < len(choices) else None
            index += 1
            out.append(_resolved(piece.conflict, choice))
        return "".join(out)

    def discarded(self, choices: Sequence[str | None]) -> list[int]:
        """The conflicts (0-based) whose resolution by `choices` drops their change.

        "theirs", "both" and no choice keep it. "yours" or a replacement text keeps it
        when the text still holds what they changed: every word they wrote into the
        base's lines, in their order (so a hand merge that folds their edit into a
        line of one's own keeps it), and none of the lines they removed outright.
        Only a text that loses their words, or brings back what they deleted, drops
        their change and needs the writer's explicit confirmation.
        """
        dropped: list[int] = []
        for index, conflict in enumerate(self.conflicts):
            choice = choices[index] if index < len(choices) else None
            if choice in (None, "theirs", "both"):
                continue
            assert choice is not None
            text = _joined(conflict.yours.lines) if choice == "yours" else choice
            if not keeps_their_change(conflict, text):
                dropped.append(index)
        return dropped


_WORD = re.compile(r"\w+|[^\w\s]")


def _words(lines: Sequence[str]) -> list[str]:
    return [word for line in lines for word in _WORD.findall(line)]


def _in_order(needed: Sequence[str], words: Sequence[str]) -> bool:
    """Whether ``needed`` occurs in ``words`` as a subsequence."""
    remaining = iter(words)
    return all(any(word == candidate for candidate in remaining) for word in needed)


def keeps_their_change(conflict: Conflict, text: str) -> bool:
    """Whether ``text``, resolving ``conflict``, keeps what their side changed in the
    base: the words they added (in order) and the removal of the lines they deleted."""
    lines = text.splitlines()
    base_words, their_words = _words(conflict.base.lines), _words(conflict.theirs.lines)
    added: list[str] = []
    matcher = difflib.SequenceMatcher(None, base_words, their_words, autojunk=False)
    for tag, _, _, their_start, their_end in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            added.extend(their_words[their_start:their_end])
    if not _in_order(added, _words(lines)):
        return False
    their_lines = {line.strip() for line in conflict.theirs.lines}
    removed = {
        line.strip()
        for line in conflict.base.lines
        if line.strip() and line.strip() not in their_lines
    }
    # A removed line that is back, with none of their words replacing it, undoes them.
    return bool(added) or not removed.intersection(line.strip() for line in lines)


def _joined(lines: Sequence[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _resolved(conflict: Conflict, choice: str | None) -> str:
    if choice in (None, "theirs"):
        return _joined(conflict.theirs.lines)
    if choice == "yours":
        return _joined(conflict.yours.lines)
    if choice == "both":
        return _joined(conflict.theirs.lines) + _joined(conflict.yours.lines)
    assert choice is not None
    return choice if choice.endswith("\n") or not choice else choice + "\n"


def _split(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _region(lines: Sequence[str], start: int, end: int) -> Region:
    return Region(start=start + 1, lines=tuple(line.rstrip("\r\n") for line in lines[start:end]))


def three_way(base: str, theirs: str, yours: str) -> MergeResult:
    """Merge `theirs` and `yours`, both edits of `base`."""
    if theirs == yours:
        return MergeResult(pieces=(Piece("both", theirs),))
    if base == theirs:
        return MergeResult(pieces=(Piece("yours", yours),))
    if base == yours:
        return MergeResult(pieces=(Piece("theirs", theirs),))
    # Whether the text ends with a line end merges like one more line would: the side
    # that changed it wins. The lines themselves are compared with their ends added.
    base_nl, their_nl, your_nl = (t.endswith("\n") or not t for t in (base, theirs, yours))
    ends_with_newline = your_nl if your_nl != base_nl else their_nl
    base_lines, their_lines, your_lines = (
        _split(t if t.endswith("\n") or not t else t + "\n") for t in (base, theirs, yours)
    )
    merger = merge3.Merge3(base_lines, their_lines, your_lines)
    pieces: list[Piece] = []
    conflicts: list[Conflict] = []
    for region in merger.merge_regions():
        kind = region[0]
        if kind == "unchanged":
            pieces.append(Piece("both", "".join(base_lines[region[1] : region[2]])))
        elif kind == "same":
            pieces.append(Piece("both", "".join(their_lines[region[1] : region[2]])))
        elif kind == "a":
            pieces.append(Piece("theirs", "".join(their_lines[region[1] : region[2]])))
        elif kind == "b":
            pieces.append(Piece("yours", "".join(your_lines[region[1] : region[2]])))
        else:  # ("conflict", zstart, zend, astart, aend, bstart, bend)
            zstart, zend, astart, aend, bstart, bend = region[1:7]  # type: ignore[misc]
            conflict = Conflict(
                base=_region(base_lines, zstart, zend),
                theirs=_region(their_lines, astart, aend),
                yours=_region(your_lines, bstart, bend),
            )
            conflicts.append(conflict)
            pieces.append(Piece("conflict", "", conflict))
    if not ends_with_newline and not conflicts and pieces and pieces[-1].text.endswith("\n"):
        last = pieces[-1]
        pieces[-1] = Piece(last.origin, last.text[:-1])
    return MergeResult(pieces=tuple(pieces), conflicts=tuple(conflicts))

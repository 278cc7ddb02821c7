"""Diffs: one alignment of the lines feeds the unified text and the hunks, exact while
that is affordable and bounded when a text repeats lines many times."""

from __future__ import annotations

import difflib

import pytest

from agentdocs.core.diffs import (
    MAX_CHANGED_LINES,
    MAX_EXACT_PAIRS,
    Hunk,
    diff_texts,
    equal_pairs,
    unified_diff,
)


def apply(old: list[str], hunks: list[Hunk]) -> list[str]:
    """Replay the hunks on ``old``, checking every line they say was there."""
    result, position = [], 0
    for hunk in hunks:
        start = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        result += old[position:start]
        position = start
        for line in hunk.lines:
            if line.op in " -":
                assert old[position] == line.text
                position += 1
            if line.op in " +":
                result.append(line.text)
    return result + old[position:]


CHECKLIST = ["- [ ] check"] * 1200
TICKED = [("- [x] check" if i % 3 == 0 else "- [ ] check") for i in range(1200)]
PARAGRAPHS = [line for i in range(300) for line in (f"Paragraph {i}.", "")]
EDITED = [("Edited." if i % 37 == 0 else line) for i, line in enumerate(PARAGRAPHS)]


# Every other line changed: thousands of one-line matches, each a new search.
INTERLEAVED_OLD = [line for n in range(5000) for line in (f"kept {n}", f"old {n}")]
INTERLEAVED_NEW = [line for n in range(5000) for line in (f"kept {n}", f"new {n}")] + ["end"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (PARAGRAPHS[:40], EDITED[:40]),  # exact
        (CHECKLIST, TICKED),  # bounded: every line repeats
        (["x"] * 5000, ["x"] * 100 + ["y"] + ["x"] * 98),  # bounded, long text first
        (["x"] * 100 + ["y"] + ["x"] * 98, ["x"] * 5000),  # bounded, long text second
        (PARAGRAPHS, EDITED),  # blank lines repeat, paragraphs do not
        (INTERLEAVED_OLD, INTERLEAVED_NEW),  # past the scanning budget: coarse
        (["same"] * 3 + INTERLEAVED_OLD, INTERLEAVED_NEW[:-1]),
        ([], ["a", "b"]),
        (["a", "b"], []),
    ],
)
def test_the_hunks_turn_the_old_text_into_the_new_one(old, new):
    diff = diff_texts("\n".join(old), "\n".join(new), max_changed_lines=None, max_bytes=None)
    assert apply(old, diff.hunks) == new
    removed = sum(line.op == "-" for hunk in diff.hunks for line in hunk.lines)
    added = sum(line.op == "+" for hunk in diff.hunks for line in hunk.lines)
    assert (diff.removed, diff.added) == (removed, added)
    body = [line for line in diff.unified.splitlines() if line[:1] in " -+"][2:]
    assert body == [line.op + line.text for hunk in diff.hunks for line in hunk.lines]


def test_repetitive_texts_take_the_bounded_path_and_ordinary_ones_the_exact_one():
    assert equal_pairs(CHECKLIST, TICKED) > MAX_EXACT_PAIRS
    assert equal_pairs(PARAGRAPHS[:200], EDITED[:200]) <= MAX_EXACT_PAIRS
    # An ordinary long document is diffed exactly: one hunk per edited paragraph.
    assert len(diff_texts("\n".join(PARAGRAPHS), "\n".join(EDITED), context=0).hunks) == 17


def test_past_the_scanning_budget_the_diff_keeps_the_common_beginning_and_end():
    old = ["# Title", *INTERLEAVED_OLD, "## End", "bye"]
    new = ["# Title", *INTERLEAVED_NEW, "## End", "bye"]
    diff = diff_texts(
        "\n".join(old), "\n".join(new), context=1, max_changed_lines=None, max_bytes=None
    )
    assert len(diff.hunks) == 1
    first, *changed, last = diff.hunks[0].lines
    assert (first.op, first.text) == (" ", "kept 0")  # the common beginning, as context
    assert (last.op, last.text) == (" ", "## End")  # the common end
    assert {line.op for line in changed} == {"-", "+"}  # one change between them


def test_the_unified_text_is_what_difflib_writes_for_ordinary_documents():
    old = "# Rules\n\n- one\n- two\n\nMore.\n"
    new = "# Rules\n\n- one\n- three\n\nMore.\nAnd this.\n"
    expected = "\n".join(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile="v1", tofile="v2", lineterm=""
        )
    )
    assert diff_texts(old, new, old_label="v1", new_label="v2").unified == expected + "\n"
    assert diff_texts(old, old).unified == "" and diff_texts(old, old).hunks == []
    # A pure insertion and a pure deletion, whose ranges difflib writes specially.
    assert diff_texts("a\nb", "a\nx\nb").unified.splitlines()[2] == "@@ -1,2 +1,3 @@"
    assert diff_texts("", "a").unified.splitlines()[2] == "@@ -0,0 +1 @@"
    assert diff_texts("a", "").unified.splitlines()[2] == "@@ -1 +0,0 @@"


def test_a_diff_past_its_bounds_stops_and_says_how_much_it_shows():
    old, new = "a\nb\n" * 65000, "b\na\n" * 65000
    diff = diff_texts(old, new)
    assert diff.truncated and diff.shown_changed_lines == MAX_CHANGED_LINES
    assert (diff.added, diff.removed) == (130000, 130000)  # the whole diff's counts
    shown = [line for hunk in diff.hunks for line in hunk.lines]
    assert sum(line.op != " " for line in shown) == MAX_CHANGED_LINES
    # Each hunk's header still counts the lines it holds: a valid patch of what it shows.
    for hunk in diff.hunks:
        assert hunk.old_lines == sum(line.op != "+" for line in hunk.lines)
        assert hunk.new_lines == sum(line.op != "-" for line in hunk.lines)
    assert diff.as_dict()["truncated"] is True
    assert len(diff.unified) < 64 * 1024


def test_a_diff_is_bounded_in_bytes_too_but_always_shows_its_first_change():
    old, new = "x" * 300_000, "y" * 300_000
    diff = diff_texts(old, new, max_bytes=1000)
    assert diff.truncated and diff.shown_changed_lines == 1
    assert diff.hunks[0].lines[0].text == old
    small = diff_texts("a\nb\n", "a\nc\n")
    assert not small.truncated and small.shown_changed_lines == 2
    assert small.as_dict()["truncated"] is False


def test_the_whole_unified_diff_is_unbounded_and_what_difflib_writes():
    old = "\n".join(PARAGRAPHS)
    new = "\n".join(EDITED)
    expected = difflib.unified_diff(PARAGRAPHS, EDITED, fromfile="v1", tofile="v2", lineterm="")
    assert unified_diff(old, new, old_label="v1", new_label="v2") == "\n".join(expected) + "\n"
    big_old, big_new = "a\nb\n" * 5000, "b\na\n" * 5000
    whole = diff_texts(big_old, big_new, max_changed_lines=None, max_bytes=None).unified
    assert unified_diff(big_old, big_new) == whole
    assert unified_diff("same\n", "same\n") == ""

"""The three-way merge of document texts (agentdocs.core.merge)."""

from agentdocs.core.merge import three_way

BASE = "# Rules\n\n- one\n- two\n- three\n- four\n"


def test_edits_of_different_lines_merge_and_say_who_wrote_what():
    theirs = BASE.replace("- one", "- ONE")
    yours = BASE.replace("- four", "- FOUR")
    result = three_way(BASE, theirs, yours)
    assert result.clean
    assert result.text == "# Rules\n\n- ONE\n- two\n- three\n- FOUR\n"
    assert result.origins() == {"theirs": 1, "yours": 1}


def test_the_same_edit_on_both_sides_is_not_a_conflict():
    edited = BASE.replace("- two", "- 2")
    result = three_way(BASE, edited, edited)
    assert result.clean and result.text == edited


def test_overlapping_edits_conflict_with_each_side_located():
    result = three_way(BASE, BASE.replace("- two", "- TWO"), BASE.replace("- two", "- deux"))
    assert not result.clean
    assert result.conflicts_data() == [
        {
            "base": {"start": 4, "lines": ["- two"]},
            "theirs": {"start": 4, "lines": ["- TWO"]},
            "yours": {"start": 4, "lines": ["- deux"]},
        }
    ]
    assert result.resolve(["yours"]) == BASE.replace("- two", "- deux")
    assert result.resolve(["theirs"]) == BASE.replace("- two", "- TWO")
    assert result.resolve(["both"]) == BASE.replace("- two", "- TWO\n- deux")
    assert result.resolve(["- zwei"]) == BASE.replace("- two", "- zwei")


def test_a_missing_final_line_end_follows_the_side_that_changed_it():
    assert three_way("a\nb", "a\nb\nc", "x\na\nb").text == "x\na\nb\nc"
    assert three_way("a\nb\n", "a\nb\n", "a\nb").text == "a\nb"
    assert three_way("a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nd").text == "A\nb\nc\nd"


def test_one_sided_changes_return_that_side():
    assert three_way(BASE, BASE, "new\n").text == "new\n"
    assert three_way(BASE, "", BASE).text == ""


def test_a_resolution_that_drops_their_change_is_named():
    result = three_way(BASE, BASE.replace("- two", "- TWO"), BASE.replace("- two", "- deux"))
    assert result.discarded(["theirs"]) == [] and result.discarded(["both"]) == []
    assert result.discarded([None]) == [] and result.discarded([]) == []
    assert result.discarded(["yours"]) == [0]
    assert result.discarded(["- deux"]) == [0]  # their line pasted over
    assert result.discarded(["- TWO, or deux\n- TWO"]) == []


IMAGES = "# Web\n\n- Images go to `src/assets/` as WebP, at most 200 KB each.\n- Wrap at 100.\n"


def test_a_hand_merge_that_folds_their_edit_into_a_line_keeps_their_change():
    theirs = IMAGES.replace("200 KB", "150 KB")
    yours = IMAGES.replace("200 KB", "300 KB")
    result = three_way(IMAGES, theirs, yours)
    folded = "- Images go to `src/assets/` as WebP, at most 150 KB (300 KB for hero images).\n"
    assert result.discarded([folded]) == []
    # Their number gone: their change is dropped, whatever else the line keeps.
    assert result.discarded(["- Images go to `src/assets/` as WebP, at most 300 KB each.\n"]) == [0]


def test_a_hand_merge_keeping_their_lines_among_reflowed_ones_keeps_their_change():
    base = "- one\n- two\n- three\n"
    theirs = "- one\n- TWO\n- three\n"
    yours = "- uno\n- dos\n- three\n"
    result = three_way(base, theirs, yours)
    assert not result.clean
    # Their region spans "- one" too, which they did not change: leaving it out drops nothing.
    assert result.discarded(["- uno\n- TWO\n"]) == []
    assert result.discarded(["- uno\n- dos\n"]) == [0]


def test_bringing_back_the_lines_they_deleted_drops_their_change():
    base = "- one\n- two\n- three\n"
    theirs = "- one\n- three\n"
    yours = "- one\n- 2\n- three\n"
    result = three_way(base, theirs, yours)
    assert not result.clean
    assert result.discarded(["- 2\n"]) == []  # their deletion stands; yours replaces it
    assert result.discarded(["- two\n- 2\n"]) == [0]  # "- two" is back
    assert result.discarded(["theirs"]) == []

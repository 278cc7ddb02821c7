"""What one history entry changed: fields before and after, a recipe's JSON diffed by line."""

from __future__ import annotations

from agentdocs.core.history import FieldChange, field_changes, snapshot_diff


def test_only_the_fields_that_changed_are_listed():
    before = {"value": "terse", "enforced": False}
    after = {"value": "terse", "enforced": True}
    assert field_changes(before, after) == [FieldChange("enforced", "false", "true")]


def test_a_creation_and_a_deletion_list_every_field_from_or_to_nothing():
    snapshot = {"role": "writer"}
    assert field_changes(None, snapshot) == [FieldChange("role", None, "writer")]
    assert field_changes(snapshot, None) == [FieldChange("role", "writer", None)]


def test_json_values_are_shown_with_sorted_keys():
    (change,) = field_changes({"params": {"b": 1, "a": 2}}, {"params": {}})
    assert change.old == '{\n  "a": 2,\n  "b": 1\n}' and change.new == "{}"


def test_a_snapshot_diff_is_a_line_diff_of_the_indented_json():
    diff = snapshot_diff({"params": {"x": 1}}, {"params": {"x": 2}})
    assert (diff.added, diff.removed) == (1, 1)
    assert '-    "x": 1' in diff.unified and '+    "x": 2' in diff.unified
    assert snapshot_diff(None, {"a": 1}).removed == 0

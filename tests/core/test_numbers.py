"""Reading the positive integers requests carry: one rule for versions, ids and pages."""

from __future__ import annotations

import pytest

from agentdocs.core.numbers import MAX_ID, MAX_VERSION, positive_int


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", 1),
        ("007", 7),
        ("00000000001", 1),
        ("0" * 5000 + "7", 7),
        (str(MAX_VERSION), MAX_VERSION),
        (42, 42),
    ],
)
def test_ascii_digits_and_integers_in_range_are_read(value, expected):
    assert positive_int(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "0", "-1", "+1", " 1", "1 ", "1.0", "", "x", "\u00b2", "\u0661", "1" * 5000,
        str(MAX_VERSION + 1), 0, -3, MAX_VERSION + 1, True, 1.0, None, [1],
    ],
)  # fmt: skip
def test_anything_else_is_none(value):
    assert positive_int(value) is None


def test_ids_have_a_wider_range():
    assert positive_int(str(MAX_ID), maximum=MAX_ID) == MAX_ID
    assert positive_int(str(MAX_ID + 1), maximum=MAX_ID) is None

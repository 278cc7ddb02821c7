"""One reader for every `since` and `until`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from agentdocs.core.moments import parse_moment

NINE_UTC = datetime(2026, 1, 31, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-01-31T09:00:00Z", NINE_UTC),
        ("2026-01-31T09:00:00+00:00", NINE_UTC),
        ("2026-01-31T09:00:00", NINE_UTC),  # no offset: UTC
        ("2026-01-31T09:00", NINE_UTC),
        ("2026-01-31 09:00:00Z", NINE_UTC),
        ("2026-01-31T11:00:00+02:00", NINE_UTC),
        ("2026-01-31T11:00:00 02:00", NINE_UTC),  # the "+" a query string lost
        ("2026-01-31T11:00:00.500 0200", NINE_UTC + timedelta(milliseconds=500)),
        ("2026-01-31", datetime(2026, 1, 31, tzinfo=UTC)),  # a date: its midnight, UTC
        ("  2026-01-31  ", datetime(2026, 1, 31, tzinfo=UTC)),
    ],
)
def test_what_reads_as_a_moment(value, expected):
    moment = parse_moment(value)
    assert moment == expected
    assert moment.tzinfo is not None


def test_an_offset_is_kept():
    moment = parse_moment("2026-01-31T11:00:00+02:00")
    assert moment.utcoffset() == timezone(timedelta(hours=2)).utcoffset(None)


@pytest.mark.parametrize(
    "value", ["", "yesterday", "2026-13-01", "2026-01-32", "31/01/2026", "-2026-01-31", "T09:00"]
)
def test_what_does_not(value):
    assert parse_moment(value) is None

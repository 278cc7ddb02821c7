"""Reading the moments requests name (`since`, `until`): one reader for the API, the
pages and the activity feed, so each takes the same forms.

A moment is an ISO 8601 date-time, in UTC unless it names an offset, or a date,
which means its midnight in UTC. A query string written by hand often carries an
offset's "+" unencoded, which arrives as a space (`...T09:00:00 02:00`): that space
is read as the "+" it was. Plain Python, so the command-line client may use it too.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

FORMS = "an ISO 8601 date-time, such as 2026-01-31T09:00:00Z, or a date"

# An offset's "+" that a query string written by hand turned into a space.
_UNENCODED_OFFSET = re.compile(r"(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)\Z")


def parse_moment(value: str) -> datetime | None:
    """``value`` as an aware datetime, or None when it is not a moment (see the module)."""
    value = _UNENCODED_OFFSET.sub(r"\1+\2", value.strip())
    if not value or not value[0].isdigit():
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

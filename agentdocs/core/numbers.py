"""Reading the positive integers requests carry: versions, record ids, page numbers.

`str.isdigit` is true for digits that `int` cannot read ("²"), `int` refuses
strings of over 4,300 digits, and a number past the database column's range fails
in the database, so all three are checked here, once. Plain Python: the
command-line client uses it too.
"""

from __future__ import annotations

# PositiveIntegerField (document versions) and BigAutoField (ids), on every database.
MAX_VERSION = 2**31 - 1
MAX_ID = 2**63 - 1


def positive_int(value: object, *, maximum: int = MAX_VERSION) -> int | None:
    """``value`` as an integer from 1 to ``maximum``: a JSON integer or a string of ASCII
    digits. None for anything else (booleans, other digits, signs, spaces, overflow)."""
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit()):
            return None
        # Longer than any number in range (leading zeros aside), and past 4,300 digits
        # int() refuses it.
        value = value.lstrip("0") or "0"
        if len(value) > len(str(maximum)):
            return None
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 1 <= value <= maximum else None

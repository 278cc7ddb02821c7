"""The rules of a run outcome's wire form: its name, its value, and the command line's
`name=value[:unit]`.

A name is a metric's key, shared by every run of a project that reports it
(`task_success`, `tests_passed`, `cost_usd`): lowercase, a letter first, then letters,
digits, `_`, `.` or `-`, at most `NAME_LENGTH` characters. A value is a yes/no (JSON
`true`/`false`) or a finite number; a yes/no is kept as 1 or 0 with its kind.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from agentdocs.core.errors import InvalidInput

NAME_LENGTH = 64
UNIT_LENGTH = 32
COMMENT_LENGTH = 2000
# How many outcomes one request may report.
MAX_OUTCOMES = 50
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_.-]*\Z")
NAME_RULE = (
    "An outcome's name is lowercase: a letter, then letters, digits, `_`, `.` or `-`, "
    f"at most {NAME_LENGTH} characters (`task_success`, `cost_usd`)."
)


def validate_outcome_name(name: object, *, field: str) -> str:
    """``name`` when it is a metric name, else InvalidInput naming ``field``."""
    if not isinstance(name, str) or not name:
        raise InvalidInput(f"`{field}` is required. {NAME_RULE}", field=field)
    if len(name) > NAME_LENGTH or NAME_PATTERN.match(name) is None:
        raise InvalidInput(f"`{field}` is not a metric name. {NAME_RULE}", field=field)
    return name


@dataclass(frozen=True)
class OutcomeValue:
    """A value as stored: a number, and whether it is a yes/no (then 1.0 or 0.0)."""

    value: float
    is_bool: bool

    def shown(self) -> bool | float | int:
        """The value as the API answers it: true/false, or the number (whole as an int)."""
        if self.is_bool:
            return self.value == 1.0
        if self.value.is_integer() and abs(self.value) < 2**53:
            return int(self.value)
        return self.value


def outcome_value(raw: object, *, field: str) -> OutcomeValue:
    """``raw`` (a decoded JSON value) as a value, else InvalidInput naming ``field``."""
    if isinstance(raw, bool):
        return OutcomeValue(1.0 if raw else 0.0, is_bool=True)
    if isinstance(raw, int | float):
        try:
            number = float(raw)
        except OverflowError:
            number = math.inf
        if math.isfinite(number):
            return OutcomeValue(number, is_bool=False)
        raise InvalidInput(f"`{field}` must be a finite number.", field=field)
    raise InvalidInput(f"`{field}` must be true, false or a number.", field=field)


@dataclass(frozen=True)
class Assignment:
    """One `name=value[:unit]` of the command line."""

    name: str
    value: bool | float | int
    unit: str | None


def parse_assignment(text: str) -> Assignment:
    """`task_success=true`, `tests_passed=0.92`, `cost_usd=0.31:USD` (ValueError with
    the person's sentence otherwise): true/false (any case) are yes/no, the rest
    must be numbers; a unit follows the last `:`."""
    name, equals, rest = text.partition("=")
    if not equals or not name:
        raise ValueError(f"{text!r} is not name=value")
    raw, colon, unit = rest.partition(":")
    lowered = raw.strip().lower()
    value: bool | float | int
    if lowered in ("true", "false"):
        value = lowered == "true"
    else:
        try:
            value = int(raw)
        except ValueError:
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"{text!r}: the value must be true, false or a number") from None
        if not math.isfinite(value):
            raise ValueError(f"{text!r}: the value must be a finite number")
    return Assignment(name=name, value=value, unit=unit if colon else None)


@dataclass(frozen=True)
class OutcomeReport:
    """One outcome of a report as the service takes it; ``field`` is where it was on the
    wire (`outcomes.0`, or "" for a body that is one outcome), to name a refused part."""

    name: str
    value: OutcomeValue
    unit: str = ""
    comment: str = ""
    supersedes: int | None = None
    field: str = ""

    def at(self, part: str) -> str:
        """The wire name of ``part`` of this outcome (`outcomes.0.value`, `value`)."""
        return f"{self.field}.{part}" if self.field else part

"""Small typed readers for settings that come from the environment.

Each one fails loudly on a value it cannot understand, so a typo in a
deployment never silently falls back to a default.
"""

from __future__ import annotations

import os
from typing import overload

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@overload
def env_str(name: str, default: str) -> str: ...
@overload
def env_str(name: str, default: None = None) -> str | None: ...
def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None else value


def env_bool(name: str, default: bool = False) -> bool:
    """An empty value counts as unset, so `SECURE_SSL_REDIRECT=` in an env file keeps the
    safe default instead of quietly meaning false."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), not {value!r}")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None


def _non_negative(text: str) -> float | None:
    """``text`` as a finite number of at least 0, or None (NaN, infinity, negatives, words)."""
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number >= 0 and number != float("inf") else None


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    number = _non_negative(value)
    if number is None:
        raise ImproperlyConfigured(f"{name} must be a number of at least 0, not {value!r}")
    return number


def env_float_list(name: str, default: list[float]) -> list[float]:
    """Comma-separated numbers of at least 0 (`10,60,300`)."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return [float(item) for item in default]
    numbers = [_non_negative(item) for item in value.split(",")]
    if None in numbers:
        raise ImproperlyConfigured(
            f"{name} must be comma-separated numbers of at least 0, not {value!r}"
        )
    return [number for number in numbers if number is not None]


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: set[str]) -> str:
    value = os.environ.get(name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {sorted(choices)}, not {value!r}")
    return value

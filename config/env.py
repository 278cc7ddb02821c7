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

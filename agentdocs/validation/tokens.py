"""The values an API token is made with: its name, scopes and lifetime."""

from __future__ import annotations

from agentdocs.core.errors import InvalidInput
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import Scope

MAX_NAME_LENGTH = 100
MAX_EXPIRES_IN_DAYS = 3650


def validate_scopes(scopes: object, *, field: str = "scopes") -> list[str]:
    """A non-empty list of known scopes, deduplicated, in the scopes' own order."""
    if not isinstance(scopes, list) or not scopes:
        raise InvalidInput(
            f"`{field}` must be a non-empty list of: {', '.join(Scope.values)}.", field=field
        )
    unknown = [scope for scope in scopes if scope not in Scope.values]
    if unknown:
        raise InvalidInput(
            f"Unknown scope {unknown[0]!r}; the scopes are {', '.join(Scope.values)}.",
            field=field,
        )
    return [scope for scope in Scope.values if scope in scopes]


def validate_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("Give the token a name, so you can tell it apart.", field="name")
    name = name.strip()
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidInput(f"The name is longer than {MAX_NAME_LENGTH} characters.", field="name")
    if any(ord(character) < 32 or ord(character) == 127 for character in name):
        raise InvalidInput("The name may not hold control characters.", field="name")
    refuse_hidden_or_secret(name, field="name", what="The name")
    return name


def validate_expires_in_days(days: object) -> int | None:
    if days is None:
        return None
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_EXPIRES_IN_DAYS:
        raise InvalidInput(
            f"`expires_in_days` must be a whole number of days from 1 to {MAX_EXPIRES_IN_DAYS}.",
            field="expires_in_days",
        )
    return days

"""The API's parsers: DRF's, refusing a NUL character anywhere in the body.

No value agentdocs stores can hold a NUL (PostgreSQL text and JSON cannot), so
a body with one gets the JSON error naming the field, before any view reads it.
"""

from __future__ import annotations

from typing import Any

from django.utils.datastructures import MultiValueDict
from rest_framework import parsers

from agentdocs.errors import InvalidInput

NUL = "\x00"


def field_with_nul(value: Any, field: str = "") -> str | None:
    """The dotted name of the first string in ``value`` that holds a NUL, or None."""
    if isinstance(value, str):
        return (field or "body") if NUL in value else None
    if isinstance(value, MultiValueDict):
        items: Any = ((key, item) for key, items in value.lists() for item in items)
    elif isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((str(index), item) for index, item in enumerate(value))
    else:
        return None
    for key, item in items:
        name = f"{field}.{key}" if field else str(key)
        if NUL in name:
            return name.replace(NUL, "")
        found = field_with_nul(item, name)
        if found is not None:
            return found
    return None


class _RefusesNul:
    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        parsed = super().parse(stream, media_type, parser_context)
        field = field_with_nul(getattr(parsed, "data", parsed))
        if field is not None:
            raise InvalidInput(
                f"`{field}` contains a NUL character, which no value here can hold.", field=field
            )
        return parsed


class JSONParser(_RefusesNul, parsers.JSONParser):
    pass


class FormParser(_RefusesNul, parsers.FormParser):
    pass


class MultiPartParser(_RefusesNul, parsers.MultiPartParser):
    pass

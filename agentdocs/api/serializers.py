"""Base classes for the API's nested `InputSerializer`s.

Every operation validates its body with a serializer that refuses what it does
not know: a typo in a field name is an error naming that field, never a silently
ignored value. DRF's own errors become the usual ``{error, detail, field}`` body
in `agentdocs.api.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from agentdocs.core.errors import InvalidInput


class StrictSerializer(serializers.Serializer):
    """A serializer whose input must be a JSON object holding only its declared fields."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise InvalidInput("The request body must be a JSON object.", field=None)
        allowed = {name for name, field in self.fields.items() if not field.read_only}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise InvalidInput(
                f"Unknown field {unknown[0]!r}; this request takes {', '.join(sorted(allowed))}.",
                field=unknown[0],
            )
        return super().to_internal_value(data)


def validated(serializer_class: type[serializers.Serializer], data: Any, **context: Any) -> Any:
    """The validated data of `data` under `serializer_class`, or the first error raised."""
    serializer = serializer_class(data=data, context=context)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data

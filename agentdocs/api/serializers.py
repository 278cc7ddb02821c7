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


class StrictSerializer(serializers.Serializer):
    """A serializer whose input must be a JSON object holding only its declared fields."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise serializers.ValidationError({"non_field_errors": ["This must be a JSON object."]})
        allowed = {name for name, field in self.fields.items() if not field.read_only}
        unknown = sorted(set(data) - allowed)
        if unknown:
            # Raised as DRF's error so a nested serializer's field is named by its
            # dotted path (`memory_block.x`), as every other validation error is.
            raise serializers.ValidationError(
                {
                    unknown[0]: [
                        f"Unknown field {unknown[0]!r}; this takes {', '.join(sorted(allowed))}."
                    ]
                }
            )
        return super().to_internal_value(data)


def validated(serializer_class: type[serializers.Serializer], data: Any, **context: Any) -> Any:
    """The validated data of `data` under `serializer_class`, or the first error raised."""
    serializer = serializer_class(data=data, context=context)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data

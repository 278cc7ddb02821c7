"""Base classes and fields for the API's nested `InputSerializer`s and `OutputSerializer`s.

Every operation validates its body with a serializer that refuses what it does
not know: a typo in a field name is an error naming that field, never a silently
ignored value. The fields take JSON as it was sent: a string field refuses a
number rather than turning it into text, a boolean refuses "yes". DRF's own
errors become the usual ``{error, detail, field}`` body in `agentdocs.api.errors`;
a domain rule the pages share (a path, a process id) is checked by calling the
service's validator, whose error already names its field.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from agentdocs.core.moments import FORMS, parse_moment
from agentdocs.core.numbers import MAX_VERSION, positive_int


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


def optional_body(data: Any) -> Any:
    """The body of a DELETE (or a lock request), where anything but a JSON object
    has always counted as no body at all."""
    return data if isinstance(data, Mapping) else {}


_SURROGATE = re.compile("[\ud800-\udfff]")


class _ProhibitSurrogates(ProhibitSurrogateCharactersValidator):
    """DRF's check with its message, by a regular expression instead of a Python loop
    over every character (a 256 KiB body took milliseconds)."""

    def __call__(self, value: Any) -> None:
        found = _SURROGATE.search(str(value))
        if found is not None:
            super().__call__(found.group())


class TextField(serializers.CharField):
    """A JSON string, kept exactly as sent (blank allowed, nothing trimmed)."""

    default_error_messages = {
        "invalid": "`{name}` must be a string.",
        "required": "`{name}` is required.",
        "null": "`{name}` must be a string.",
    }

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_blank", True)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        self.validators = [
            _ProhibitSurrogates() if type(v) is ProhibitSurrogateCharactersValidator else v
            for v in self.validators
        ]

    def fail(self, key: str, **kwargs: Any) -> Any:
        return super().fail(key, name=self.field_name, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ReasonField(TextField):
    """The optional `reason` a write records in history; null counts as none."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", "")
        kwargs.setdefault("help_text", "Why: kept in the history with the change.")
        super().__init__(**kwargs)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is None:
            return True, ""
        return super().validate_empty_values(data)


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false, and nothing that merely looks like one."""

    default_error_messages = {"invalid": "`{name}` must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", name=self.field_name)
        return data


class JSONIntegerField(serializers.IntegerField):
    """A JSON integer, and not a string of digits, a float or a boolean."""

    default_error_messages = {"invalid": "`{name}` must be an integer."}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid", name=self.field_name)
        return data


class VersionField(serializers.IntegerField):
    """A positive integer up to ``maximum``: a JSON integer, or (``strings``) a string of
    ASCII digits, as the versions in query strings and older clients' bodies come."""

    default_error_messages = {"invalid": "The version must be a positive integer."}

    def __init__(self, *, maximum: int = MAX_VERSION, strings: bool = True, **kwargs: Any) -> None:
        self.maximum = maximum
        self.strings = strings
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", maximum)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, str) and not self.strings:
            self.fail("invalid", name=self.field_name)
        value = positive_int(data, maximum=self.maximum)
        if value is None:
            self.fail("invalid", name=self.field_name)
        return value


@extend_schema_field({"type": "string", "description": f"{FORMS}; UTC unless it names an offset"})
class MomentField(serializers.Field):
    """A `since` or `until`: what `agentdocs.core.moments.parse_moment` reads, as the
    activity feed and the pages read it."""

    default_error_messages = {"invalid": f"Must be {FORMS}."}

    def to_internal_value(self, data: Any) -> datetime:
        moment = parse_moment(data) if isinstance(data, str) else None
        if moment is None:
            self.fail("invalid")
        return moment

    def to_representation(self, value: datetime) -> str:
        return value.isoformat()


class JSONObjectField(serializers.DictField):
    """A JSON object, taken as sent; what it may hold is the service's to check."""

    default_error_messages = {"not_a_dict": "`{name}` must be a JSON object."}

    def fail(self, key: str, **kwargs: Any) -> Any:
        return super().fail(key, name=self.field_name, **kwargs)

    def run_validation(self, data: Any = empty) -> Any:
        value = super().run_validation(data)
        # As sent, not as DictField rebuilds it: a manifest is hashed as it came.
        return data if isinstance(value, dict) else value


@extend_schema_field({"type": "object", "additionalProperties": {"type": "string"}})
class FilesField(JSONObjectField):
    """A skill's whole bundle: each file's path mapped to its text, as a write and a
    change request send it; the service checks them."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("child", serializers.JSONField())
        kwargs.setdefault(
            "help_text",
            "Every file of the skill, its path mapped to its text: `SKILL.md` and files "
            "under `scripts/`, `references/` and `assets/`. Text only (a binary file is "
            "422 `binary_file`).",
        )
        super().__init__(**kwargs)


_shared = threading.local()


def _shared_instance(serializer_class: type[serializers.Serializer]) -> serializers.Serializer:
    """One instance of ``serializer_class`` per thread, reused across requests.

    A new DRF serializer deep-copies its declared fields (nested ones included) the
    first time it is used; on the render path that copy costs more than the render.
    An instance without data or context holds no request state, and validating or
    representing through it changes none, so one per thread serves every request.
    """
    instances: dict[type[serializers.Serializer], serializers.Serializer]
    instances = _shared.__dict__.setdefault("instances", {})
    instance = instances.get(serializer_class)
    if instance is None:
        instance = instances[serializer_class] = serializer_class()
    return instance


def validated(serializer_class: type[serializers.Serializer], data: Any, **context: Any) -> Any:
    """The validated data of `data` under `serializer_class`, or the first error raised
    (as `is_valid(raise_exception=True)` raises it)."""
    if context:
        serializer = serializer_class(data=data, context=context)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data
    return _shared_instance(serializer_class).run_validation(data)


def represented(serializer_class: type[serializers.Serializer], instance: Any) -> Any:
    """``serializer_class(instance).data``, without building a serializer per call."""
    return _shared_instance(serializer_class).to_representation(instance)

"""The API's parsers: DRF's, refusing text that no value here can hold.

PostgreSQL text and JSON cannot hold a NUL character, and a lone surrogate
(`"\\ud800"` in JSON) is not UTF-8 at all; both failed deep in a write with a
500. Such a body now gets the JSON error naming the field before any view reads
it. So does a body nested past any shape the API takes, which would otherwise
exhaust Python's recursion limit.
"""

from __future__ import annotations

from typing import Any

from django.utils.datastructures import MultiValueDict
from rest_framework import parsers

from agentdocs.errors import InvalidInput

NUL = "\x00"
MAX_DEPTH = 64


def _problem(text: str) -> str | None:
    if NUL in text:
        return "contains a NUL character, which no value here can hold"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "is not valid UTF-8 text (it holds a lone surrogate)"
    return None


def _children(value: Any) -> Any:
    if isinstance(value, MultiValueDict):
        return ((key, item) for key, items in value.lists() for item in items)
    if isinstance(value, dict):
        return value.items()
    if isinstance(value, list):
        return ((f"[{index}]", item) for index, item in enumerate(value))
    return ()


def _named(field: str) -> str:
    return f"`{field}`" if field else "The request body"


def refuse_unstorable_text(data: Any) -> None:
    """Raise InvalidInput naming the dotted field of the first string (key or value)
    in ``data`` that cannot be stored, or of a value nested over MAX_DEPTH deep."""
    stack = [("", data, 0)]
    while stack:
        field, value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InvalidInput(
                f"{_named(field)} is nested more than {MAX_DEPTH} levels deep.",
                field=field or None,
            )
        if isinstance(value, str):
            problem = _problem(value)
            if problem:
                raise InvalidInput(f"{_named(field)} {problem}.", field=field or None)
            continue
        children = []
        for key, item in _children(value):
            problem = _problem(str(key))
            if problem:
                where = f"`{field}`" if field else "the request body"
                raise InvalidInput(f"A member name in {where} {problem}.", field=field or None)
            name = f"{field}{key}" if key.startswith("[") else f"{field}.{key}" if field else key
            children.append((name, item, depth + 1))
        stack.extend(reversed(children))  # the first field first, as it was written


class _RefusesUnstorableText:
    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        try:
            parsed = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise InvalidInput(
                f"The request body is nested more than {MAX_DEPTH} levels deep.", field=None
            ) from None
        refuse_unstorable_text(getattr(parsed, "data", parsed))
        return parsed


class JSONParser(_RefusesUnstorableText, parsers.JSONParser):
    pass


class FormParser(_RefusesUnstorableText, parsers.FormParser):
    pass


class MultiPartParser(_RefusesUnstorableText, parsers.MultiPartParser):
    pass

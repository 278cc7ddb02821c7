"""The API's parsers: DRF's, refusing text that no value here can hold.

PostgreSQL text and JSON cannot hold a NUL character, and a lone surrogate
(`"\\ud800"` in JSON) is not UTF-8 at all; both failed deep in a write with a
500. Such a body now gets the JSON error naming the field before any view reads
it. So does a body nested past any shape the API takes, which would otherwise
exhaust Python's recursion limit.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.utils.datastructures import MultiValueDict
from rest_framework import parsers

from agentdocs.core.errors import InvalidInput, TooLarge

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
        return enumerate(value)
    return ()


# A member's place in the body: (parent place, key), the body itself being None.
# Linked, so that a member's place costs one pair however deep it lies.
Place = tuple[Any, str | int] | None


def _dotted(place: Place) -> str | None:
    """A place as the error's field: manifest.context[0].name."""
    parts: list[str | int] = []
    while place is not None:
        place, key = place
        parts.append(key)
    name = ""
    for key in reversed(parts):
        if isinstance(key, int):
            name += f"[{key}]"
        elif key == "":
            name += '[""]'
        elif name:
            name += f".{key}"
        else:
            name = key
    return name or None


def _named(place: Place, *, start: bool = False) -> str:
    field = _dotted(place)
    if field:
        return f"`{field}`"
    return "The request body" if start else "the request body"


def refuse_unstorable_text(data: Any) -> None:
    """Raise InvalidInput naming the dotted field of the first string (key or value)
    in ``data`` that cannot be stored, or of a value nested over MAX_DEPTH deep.

    Depth first with one iterator per open container, so the walk holds no more than
    the current branch; a member's name is put together only for the error."""

    def check(place: Place, value: Any) -> None:
        if isinstance(value, str):
            problem = _problem(value)
            if problem:
                raise InvalidInput(f"{_named(place, start=True)} {problem}.", field=_dotted(place))

    check(None, data)
    stack: list[tuple[Place, Iterator[Any]]] = [(None, iter(_children(data)))]
    while stack:
        place, children = stack[-1]
        for key, item in children:
            problem = _problem(key) if isinstance(key, str) else None
            if problem:
                raise InvalidInput(
                    f"A member name in {_named(place)} {problem}.", field=_dotted(place)
                )
            member = (place, key)
            check(member, item)
            if isinstance(item, dict | list):
                if len(stack) >= MAX_DEPTH:
                    raise InvalidInput(
                        f"{_named(member, start=True)} is nested more than {MAX_DEPTH} "
                        "levels deep.",
                        field=_dotted(member),
                    )
                stack.append((member, iter(_children(item))))
                break
        else:
            stack.pop()


class _RefusesUnstorableText(parsers.BaseParser):
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


class _JSONWithinImportCap(parsers.BaseParser):
    """DRF's JSON parsing under a cap of its own, `AGENTDOCS_IMPORT_MAX_REQUEST_BYTES`.

    DRF reads the body of its own JSONParser (and subclasses) through `HttpRequest.body`,
    which refuses anything over the server-wide DATA_UPLOAD_MAX_MEMORY_SIZE; a parser
    of another class is given the request's stream, read here up to the cap."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        limit = settings.AGENTDOCS_IMPORT_MAX_REQUEST_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        too_large = TooLarge(
            f"The request body is larger than the {limit} bytes an import takes.", field=None
        )
        if declared and declared.isdigit() and int(declared) > limit:
            raise too_large
        body = stream.read(limit + 1)
        if len(body) > limit:
            raise too_large
        return parsers.JSONParser().parse(io.BytesIO(body), media_type, parser_context)


class ImportJSONParser(_RefusesUnstorableText, _JSONWithinImportCap):
    pass

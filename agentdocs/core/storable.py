"""Text that no value here can hold, refused with the field that holds it.

PostgreSQL text and JSON cannot hold a NUL character, and a lone surrogate
(`"\\ud800"` in JSON) is not UTF-8 at all; both failed deep in a write with a 500.
A value nested past any shape the API or a page takes would exhaust Python's
recursion limit. One rule for the API's parsers, the MCP endpoint and the pages'
forms, so a body is refused the same way wherever it arrives.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentdocs.core.errors import InvalidInput

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
    # A dict holding several values per key (a parsed form, Django's MultiValueDict) is
    # walked through every value its `lists()` holds, not only the last one per key.
    lists = getattr(value, "lists", None)
    if isinstance(value, dict) and callable(lists):
        return ((key, item) for key, items in lists() for item in items)
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


def strict_json_storable(body: bytes) -> bool:
    """Whether the value strict JSON in UTF-8 ``body`` holds (as orjson reads it, which
    refuses a raw NUL or control character in a string, invalid UTF-8 and a lone
    surrogate's escape) is sure to pass `refuse_unstorable_text` without walking it:
    with no `\\u` escape no string can hold a NUL, and with fewer brackets than
    MAX_DEPTH nothing can be nested that deep. False says nothing: walk it."""
    return b"\\u" not in body and body.count(b"[") + body.count(b"{") < MAX_DEPTH

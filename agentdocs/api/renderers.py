"""The API's JSON renderer: DRF's, encoding with orjson.

A render of a project with 10,000 `.AGENTS/` documents answers with an account
listing every dropped one (1.3 MB): the standard library's encoder took 10 ms of
the request for it, orjson takes about 1. The output is what DRF's renderer
writes: compact, UTF-8, `U+2028` and `U+2029` escaped, datetimes and everything
else orjson does not know through DRF's own encoder. A pretty-printed answer
(`Accept: application/json; indent=4`, the browsable API) and any value orjson
refuses (an integer wider than 64 bits) are left to DRF's renderer.

`Encoded` is a part of an answer encoded once and written as it is: the account
of a kept context (`memory_block.encoded_context`), which a render of 10,000
context documents would otherwise encode again, 1.3 MB of it, on every turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson
from rest_framework import renderers
from rest_framework.utils.encoders import JSONEncoder

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
# U+2028 and U+2029 in UTF-8, which DRF's renderer escapes (so that the answer is also
# valid JavaScript).
_SEPARATORS = re.compile(rb"\xe2\x80[\xa8\xa9]")
_ESCAPED = {b"\xe2\x80\xa8": b"\\u2028", b"\xe2\x80\xa9": b"\\u2029"}


class Encoded:
    """A value already encoded as JSON (by orjson or this renderer: compact, UTF-8)."""

    __slots__ = ("json",)

    def __init__(self, json: bytes) -> None:
        self.json = json


class _Encoder(JSONEncoder):
    """DRF's encoder, for the answers DRF's renderer writes, reading `Encoded` parts back."""

    def default(self, obj: Any) -> Any:
        if isinstance(obj, Encoded):
            return orjson.loads(obj.json)
        return super().default(obj)


_drf_default = JSONEncoder().default


def _default(obj: Any) -> Any:
    if isinstance(obj, Encoded):
        return orjson.Fragment(obj.json)
    return _drf_default(obj)


def json_bytes(data: Any) -> bytes | None:
    """``data`` as this renderer writes it (compact, `U+2028` and `U+2029` escaped), or
    None where orjson refuses a value (DRF's renderer then writes it)."""
    try:
        encoded = orjson.dumps(data, default=_default, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return None
    # Their lead byte first: a search for one byte is a memchr (14 µs over 1.3 MB, where
    # a search for the three took 0.8 ms), and most answers hold no U+2000 to U+2FFF.
    if b"\xe2" in encoded:
        encoded = _SEPARATORS.sub(lambda found: _ESCAPED[found.group()], encoded)
    return encoded


class JSONRenderer(renderers.JSONRenderer):
    encoder_class = _Encoder

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        if self.get_indent(accepted_media_type or "", renderer_context or {}) is not None:
            return super().render(data, accepted_media_type, renderer_context)
        encoded = json_bytes(data)
        if encoded is None:
            return super().render(data, accepted_media_type, renderer_context)
        return encoded

"""The API's JSON renderer: DRF's, encoding with orjson.

A render of a project with 10,000 `.AGENTS/` documents answers with an account
listing every dropped one (1.3 MB): the standard library's encoder took 10 ms of
the request for it, orjson takes about 1. The output is what DRF's renderer
writes: compact, UTF-8, `U+2028` and `U+2029` escaped, datetimes and everything
else orjson does not know through DRF's own encoder. A pretty-printed answer
(`Accept: application/json; indent=4`, the browsable API) and any value orjson
refuses (an integer wider than 64 bits) are left to DRF's renderer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from rest_framework import renderers
from rest_framework.utils.encoders import JSONEncoder

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
_LINE_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))
_SEPARATOR_LEAD = b"\xe2\x80"  # the UTF-8 bytes both separators start with


class JSONRenderer(renderers.JSONRenderer):
    _default = JSONEncoder().default

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
        try:
            encoded = orjson.dumps(data, default=self._default, option=_OPTIONS)
        except orjson.JSONEncodeError:
            return super().render(data, accepted_media_type, renderer_context)
        if _SEPARATOR_LEAD in encoded:  # one pass over the answer, not one per separator
            for raw, escaped in _LINE_SEPARATORS:
                encoded = encoded.replace(raw, escaped)
        return encoded

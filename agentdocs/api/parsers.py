"""The API's parsers: DRF's, refusing text that no value here can hold.

A body holding a NUL character or a lone surrogate, or nested past any shape the API
takes, gets the JSON error naming the field before any view reads it; the rule is
`agentdocs.core.storable`'s, shared with the pages' forms.
"""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from rest_framework import parsers

from agentdocs.core.errors import InvalidInput, TooLarge
from agentdocs.core.storable import MAX_DEPTH, refuse_unstorable_text


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

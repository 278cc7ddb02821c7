"""Small HTTP helpers shared by the API views: ETags, base versions, paged lists."""

from __future__ import annotations

import re
from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.pagination import Pagination
from agentdocs.core.errors import InvalidInput, VersionRequired
from agentdocs.core.numbers import positive_int
from agentdocs.models import Document

_ETAG = re.compile(r'^(?:W/)?"v(?P<version>[0-9]+)(?:-[0-9a-f]+)?"\Z')


def document_etag(document: Document) -> str:
    return versioned_etag(version=document.version, sha256=document.sha256)


def versioned_etag(*, version: int, sha256: str) -> str:
    """The ETag of a version of something versioned (a document, a skill): its number
    and digest, in the form `base_version` reads back from If-Match."""
    return f'"v{version}-{sha256[:16]}"'


def etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    candidates = [item.strip() for item in header.split(",")]
    return "*" in candidates or etag in candidates or f"W/{etag}" in candidates


def _header_version(header: str) -> int:
    match = _ETAG.match(header.strip())
    version = positive_int(match["version"]) if match else None
    if version is None:
        raise InvalidInput(
            'If-Match must be the document\'s ETag, for example "v3-1a2b3c4d5e6f7a8b".',
            field="If-Match",
        )
    return version


def base_version(request: Request, version: int | None) -> int:
    """The version a write is based on: from `If-Match` (the ETag), or ``version`` (the
    body's validated `version` field, else a `?version=` query parameter).

    Both may be given if they agree. Missing gives 428.
    """
    header = request.headers.get("If-Match")
    from_header = _header_version(header) if header else None
    from_body = version
    if from_body is None and request.query_params.get("version") is not None:
        from_body = positive_int(request.query_params["version"])
        if from_body is None:
            raise InvalidInput("The version must be a positive integer.", field="version")
    if from_header is not None and from_body is not None and from_header != from_body:
        raise InvalidInput(
            f"If-Match names version {from_header} but the version field says {from_body}.",
            field="version",
        )
    version = from_header if from_header is not None else from_body
    if version is None:
        raise VersionRequired(
            "Name the version this change is based on: send the ETag as If-Match, "
            "or a `version` field.",
            field="version",
        )
    return version


class ListView(APIView):
    """An APIView that pages a queryset through its `OutputSerializer`; the schema shows
    the paging."""

    pagination_class = Pagination
    OutputSerializer: type[serializers.Serializer]

    def paginate(self, request: Request, queryset: Any) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)

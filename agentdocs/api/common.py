"""Small HTTP helpers shared by the API views: ETags, base versions, users."""

from __future__ import annotations

import re
from collections.abc import Callable
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
    return f'"v{document.version}-{document.sha256[:16]}"'


def etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    candidates = [item.strip() for item in header.split(",")]
    return "*" in candidates or etag in candidates or f"W/{etag}" in candidates


def _as_version(value: Any, *, field: str) -> int:
    version = positive_int(value)
    if version is None:
        raise InvalidInput("The version must be a positive integer.", field=field)
    return version


def base_version(request: Request, *, required: bool = True) -> int | None:
    """The version a write is based on, from `If-Match` (the ETag) or a `version` field.

    Both may be given if they agree. Missing when required gives 428.
    """
    from_header = None
    header = request.headers.get("If-Match")
    if header:
        match = _ETAG.match(header.strip())
        if not match:
            raise InvalidInput(
                'If-Match must be the document\'s ETag, for example "v3-1a2b3c4d5e6f7a8b".',
                field="If-Match",
            )
        from_header = _as_version(match["version"], field="If-Match")
    data = request.data if isinstance(request.data, dict) else {}
    raw = data.get("version", request.query_params.get("version"))
    from_body = None if raw is None else _as_version(raw, field="version")
    if from_header is not None and from_body is not None and from_header != from_body:
        raise InvalidInput(
            f"If-Match names version {from_header} but the version field says {from_body}.",
            field="version",
        )
    version = from_header if from_header is not None else from_body
    if version is None and required:
        raise VersionRequired(
            "Name the version this change is based on: send the ETag as If-Match, "
            "or a `version` field.",
            field="version",
        )
    return version


def reason_of(data: Any) -> str:
    """The optional `reason` of a write: a string, or nothing (null counts as nothing)."""
    value = data.get("reason") if isinstance(data, dict) else None
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput("`reason` must be a string.", field="reason")
    return value


def username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


def reject_unknown_fields(data: Any, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InvalidInput("The request body must be a JSON object.", field=None)
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InvalidInput(
            f"Unknown field {unknown[0]!r}; this request takes {', '.join(sorted(allowed))}.",
            field=unknown[0],
        )
    return data


class ErrorSerializer(serializers.Serializer):
    """The shape of every API error."""

    error = serializers.CharField()
    detail = serializers.CharField()
    field = serializers.CharField(allow_null=True)


class ListView(APIView):
    """An APIView that pages a queryset and shapes each row; the schema shows the paging."""

    pagination_class = Pagination

    def paginate(self, request: Request, queryset: Any, shape: Callable[[Any], dict]) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response([shape(item) for item in page])

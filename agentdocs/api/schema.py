"""The pieces of the OpenAPI description the API views share: the error answers per
status, the conditional-request headers and the response headers, and the statuses
answered beneath every view (`AutoSchema`).

Only documentation lives here. What a status means is decided by the domain
errors (`agentdocs.core.errors`) and `agentdocs.api.errors`; the sentences below
describe them so that `/api/docs/` says the same thing in every operation.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from agentdocs.api.common import ErrorSerializer

JSON = "application/json"
TEXT = "text/plain"
ZIP = "application/zip"


class ForbiddenErrorSerializer(ErrorSerializer):
    """A 403: the role does not reach the operation, or the token's scopes do not."""

    class Meta:
        ref_name = "ForbiddenError"

    required_scope = serializers.CharField(
        required=False, help_text="With `insufficient_scope`: the scope this request needs."
    )


class VersionConflictErrorSerializer(ErrorSerializer):
    """A 412: the write was based on a version that is no longer current."""

    class Meta:
        ref_name = "VersionConflictError"

    current_version = serializers.IntegerField(
        allow_null=True, help_text="The document's version now; null when it was deleted."
    )


class HiddenCharacterSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    column = serializers.IntegerField()
    code_point = serializers.CharField(help_text="U+202E")
    name = serializers.CharField(help_text="RIGHT-TO-LEFT OVERRIDE")


class UnprocessableErrorSerializer(ErrorSerializer):
    """A 422: a detected secret (with the line it is on), or a request that is
    well-formed but not possible."""

    class Meta:
        ref_name = "UnprocessableError"

    line = serializers.IntegerField(
        required=False,
        help_text="With `secret_detected`: the line the secret is on; with "
        "`hidden_characters`: the line of the first hidden character.",
    )
    column = serializers.IntegerField(
        required=False, help_text="With `hidden_characters`: the first one's column."
    )
    count = serializers.IntegerField(
        required=False, help_text="With `hidden_characters`: how many the text holds."
    )
    characters = HiddenCharacterSerializer(
        many=True,
        required=False,
        help_text="With `hidden_characters`: each one (the first 50), where and which.",
    )
    # The wire name; DRF's metaclass takes it off the class, so it does not shadow
    # `Field.source`, but mypy sees only the class attribute.
    source = serializers.CharField(  # type: ignore[assignment]
        required=False, help_text="On an import: the repository file the secret is in."
    )


class LockedErrorSerializer(ErrorSerializer):
    """A 423: another user holds the document's lock."""

    class Meta:
        ref_name = "LockedError"

    lock = serializers.DictField(help_text="The lock: its `holder` and `expires_at`.")


class RateLimitedErrorSerializer(ErrorSerializer):
    """A 429: too many requests of one kind from one caller."""

    class Meta:
        ref_name = "RateLimitedError"

    retry_after = serializers.IntegerField(
        help_text="Seconds to wait; also the Retry-After header."
    )


def _example(status: int, code: str, detail: str, field: str | None = None, **extra: object):
    return OpenApiExample(
        code,
        value={"error": code, "detail": detail, "field": field, **extra},
        response_only=True,
        status_codes=[status],
    )


ERROR_RESPONSES: dict[int, OpenApiResponse] = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="`invalid`: the body, a query parameter or a path segment is not "
        "acceptable (on every operation: one holding a NUL character); `field` names the "
        "first offending field (dotted for nested ones).",
        examples=[_example(400, "invalid", "`body` is required.", "body")],
    ),
    401: OpenApiResponse(
        ErrorSerializer,
        description="`not_authenticated` or `authentication_failed`: no session and no "
        "valid API token (`Authorization: Bearer adt_…`), or the token is revoked or expired.",
        examples=[
            _example(401, "not_authenticated", "Authentication credentials were not provided.")
        ],
    ),
    403: OpenApiResponse(
        ForbiddenErrorSerializer,
        description="`forbidden`: your role does not allow this (writers write, tenant admins "
        "administer); `insufficient_scope`: the API token's scopes do not include the one "
        "this request needs (`required_scope`), or a token it would create is broader than "
        "itself (`field`: `scopes`, `tenant` or `expires_in_days`).",
        examples=[
            _example(
                403,
                "insufficient_scope",
                "This token's scopes (read) do not include 'write', which this request needs.",
                required_scope="write",
            )
        ],
    ),
    404: OpenApiResponse(
        ErrorSerializer,
        description="`not_found`: no such tenant, project or object, or it is not visible "
        "to you (outsiders get 404, never 403), or no such page of a list.",
        examples=[_example(404, "not_found", "No such tenant.", "tenant")],
    ),
    409: OpenApiResponse(
        ErrorSerializer,
        description="`already_exists`, `enforced` (the tenant enforces this setting) or "
        "`invitation_decided`: the request conflicts with the current state; "
        "`review_required` (with `propose_url`): the path is protected by `review.required`, "
        "propose a change instead; on change requests `own_change`, `change_closed`, "
        "`not_approved` and `merge_conflict` (with `conflicts`). "
        "`too_many_tokens`: you hold the most active API tokens one person may.",
        examples=[_example(409, "already_exists", "A document already exists at 'agent.md'.")],
    ),
    412: OpenApiResponse(
        VersionConflictErrorSerializer,
        description="`version_conflict`: the document changed since the version the write "
        "names (If-Match or `version`). Nothing was written; `current_version` says where "
        "it is now.",
        examples=[
            _example(
                412,
                "version_conflict",
                "The document changed since version 3; it is now at version 4. Nothing was "
                "written: fetch the current version and apply your change to it.",
                "version",
                current_version=4,
            )
        ],
    ),
    406: OpenApiResponse(
        ErrorSerializer,
        description="`not_acceptable`: the Accept header names no media type this "
        "operation answers in (JSON, or where documented text or a zip).",
    ),
    413: OpenApiResponse(
        ErrorSerializer,
        description="`too_large`: the request body, or what it would store, is larger than "
        "this server takes. Nothing was stored.",
    ),
    415: OpenApiResponse(
        ErrorSerializer,
        description="`unsupported_media_type`: the body is not JSON (`application/json`) "
        "or a form. Nothing was stored.",
    ),
    422: OpenApiResponse(
        UnprocessableErrorSerializer,
        description="`secret_detected`: the text holds what looks like a secret (send "
        "`acknowledge_secret` with a `reason` to save it anyway, where the tenant allows); "
        "`hidden_characters`: the text holds characters a reader cannot see (bidi "
        "controls, zero-width or tag characters), named by line, column and code point "
        '(send `"acknowledge_hidden": "intended"` with a `reason` to save it anyway); '
        "`unprocessable`: well-formed but not possible (such as removing the last admin).",
        examples=[
            _example(422, "secret_detected", "The body looks like it holds a secret.", "body")
        ],
    ),
    423: OpenApiResponse(
        LockedErrorSerializer,
        description="`locked`: another user holds the document's lock; wait for it to "
        "expire or ask them (a tenant admin may break it with `force`).",
    ),
    428: OpenApiResponse(
        ErrorSerializer,
        description="`version_required`: name the version the change is based on, as "
        "If-Match (the ETag) or a `version` field.",
    ),
    429: OpenApiResponse(
        RateLimitedErrorSerializer,
        description="`rate_limited`: too many requests of this kind from this caller; the "
        "Retry-After header (and `retry_after`) says how many seconds to wait.",
    ),
}


# Three-way merge: the 409 of a stale write sent with `merge` whose edits overlap.
class MergeRegionSerializer(serializers.Serializer):
    start = serializers.IntegerField(
        help_text="The region's first line, 1-based (for an empty region: the line it "
        "would come before)"
    )
    lines = serializers.ListField(
        child=serializers.CharField(allow_blank=True), help_text="Its lines, without line ends"
    )


class MergeConflictRegionsSerializer(serializers.Serializer):
    base = MergeRegionSerializer(help_text="In the version the write was based on")
    theirs = MergeRegionSerializer(help_text="In the current version")
    yours = MergeRegionSerializer(help_text="In the text the write sent")


class MergeConflictErrorSerializer(ErrorSerializer):
    """A 409 `merge_conflict`: both sides changed the same lines; nothing was written."""

    class Meta:
        ref_name = "MergeConflictError"

    conflicts = MergeConflictRegionsSerializer(many=True)
    base_version = serializers.IntegerField(help_text="The version the write was based on.")
    current_version = serializers.IntegerField(help_text="The version it could not merge onto.")


MERGE_CONFLICT = OpenApiResponse(
    MergeConflictErrorSerializer,
    description="`merge_conflict`: the write asked to be merged (`merge`), but it and the "
    "current version change the same lines. Nothing was written; `conflicts` locates each "
    "overlap in the base, the current version (`theirs`) and the request (`yours`).",
    examples=[
        _example(
            409,
            "merge_conflict",
            "Your change (based on version 3) and version 4 change the same lines in 1 place. "
            "Nothing was written: resolve each conflict and save again based on version 4.",
            "body",
            conflicts=[
                {
                    "base": {"start": 3, "lines": ["- Use tabs."]},
                    "theirs": {"start": 3, "lines": ["- Use tabs, width 4."]},
                    "yours": {"start": 3, "lines": ["- Use spaces."]},
                }
            ],
            base_version=3,
            current_version=4,
        )
    ],
)


# What every operation may answer before its view decides anything: a NUL in the URL
# (`RejectNulMiddleware`), no session or token, a token's scopes, an Accept header that
# names nothing the operation answers in (DRF's content negotiation).
EVERY_OPERATION = (400, 401, 403, 406)
# What an operation with a request body may answer from reading it (DRF's parsers and
# the server's request cap).
WITH_A_BODY = (400, 413, 415)


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """The error answers of an operation, for `extend_schema(responses=...)`.

    Those of `EVERY_OPERATION` are always included (`AutoSchema` adds those of
    `WITH_A_BODY` to an operation that takes a body).
    """
    return {status: ERROR_RESPONSES[status] for status in sorted({*EVERY_OPERATION, *statuses})}


def json_errors(*statuses: int) -> dict[tuple[int, str], OpenApiResponse]:
    """`errors` for an operation that also answers in another media type (text/plain,
    a zip): its errors are JSON whatever the request accepted, so they are documented
    as `application/json` only."""
    return {(status, JSON): response for status, response in errors(*statuses).items()}


IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description='The document\'s ETag (`"v3-1a2b3c4d5e6f7a8b"`) as you read it: the change is '
    "based on that version. Instead, a `version` field may name it; if both are given they "
    "must agree. A stale one gives 412, none at all 428.",
)

IF_MATCH_OPTIONAL = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="Optional: the document's ETag as you read it; the revert is refused with 412 "
    "if the document has moved on since. Same as the `base_version` field.",
)

IF_NONE_MATCH = OpenApiParameter(
    "If-None-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="An ETag from an earlier answer: 304 with no body if it still matches.",
)


def etag_header(*statuses: int) -> OpenApiParameter:
    """The ETag response header on the given statuses."""
    return OpenApiParameter(
        "ETag",
        OpenApiTypes.STR,
        OpenApiParameter.HEADER,
        description="The version and content of what was answered; send it back as "
        "If-Match (to write) or If-None-Match (to read only when changed).",
        response=list(statuses),
    )


RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    OpenApiTypes.INT,
    OpenApiParameter.HEADER,
    description="Seconds to wait before the next request of this kind.",
    response=[429],
)


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's, documenting on every operation the statuses answered beneath
    its view (`EVERY_OPERATION`, and `WITH_A_BODY` where it takes a body), so that no
    operation's `errors(...)` can forget one.

    Added to the response bodies the operation documents (`_get_response_bodies`, which
    `extend_schema(responses=...)` feeds), not to its serializers: `extend_schema`
    overrides `get_response_serializers` in a subclass of its own."""

    def _get_response_bodies(self, direction: Any = "response") -> Any:
        responses = super()._get_response_bodies(direction)
        statuses = set(EVERY_OPERATION)
        if self.method in ("PUT", "PATCH", "POST") and self.get_request_serializer() is not None:
            statuses.update(WITH_A_BODY)
        for status in sorted(statuses - {int(code) for code in responses}):
            responses[str(status)] = self._get_response_for_code(
                ERROR_RESPONSES[status], str(status), [JSON], direction
            )
        return dict(sorted(responses.items()))

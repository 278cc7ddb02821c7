"""The pieces of the OpenAPI description the API views share: the error answers per
status, the conditional-request headers and the response headers, and the statuses
answered beneath every view (`AutoSchema`).

Only documentation lives here. What a status means is decided by the domain
errors (`agentdocs.core.errors`) and `agentdocs.api.errors`; the sentences below
describe them so that `/api/docs/` says the same thing in every operation.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, NotRequired, Required

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse

from agentdocs.core.errors import ErrorBody, HiddenCharacterData
from agentdocs.core.memory_block import LayerAccount
from agentdocs.core.merge import ConflictData, RegionData
from agentdocs.core.shapes import Doc

JSON = "application/json"
TEXT = "text/plain"
ZIP = "application/zip"


# Answers documented by the TypedDict that builds them (one declaration per shape, no
# serializer beside it). `AutoSchema` turns a `Shape` given as a response into a schema
# component: each field's type from its annotation, its description from its `Doc`,
# each nested TypedDict a component of its own (named as below, or by its class name).


@dataclass(frozen=True)
class Shape:
    """A response body: ``typed_dict`` as the component ``name``.

    ``keys`` keeps only these of its optional keys (None: all of them); ``required``
    names the optional keys this answer always carries."""

    typed_dict: type
    name: str
    description: str | None = None
    keys: tuple[str, ...] | None = None
    required: tuple[str, ...] = ()


COMPONENT_NAMES: dict[type, str] = {
    LayerAccount: "Layer",
    HiddenCharacterData: "HiddenCharacter",
    ConflictData: "MergeConflictRegions",
    RegionData: "MergeRegion",
}

_BASIC: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number", "format": "double"},
    bool: {"type": "boolean"},
}


def _unwrapped(hint: Any) -> tuple[Any, Doc, bool | None]:
    """The type under `Annotated`/`NotRequired`/`Required`, its `Doc`, and whether the
    key is required (None: as the TypedDict's totality says).

    Read from the hint, not from `__required_keys__`: under `from __future__ import
    annotations`, Python 3.11 takes every key of a TypedDict for required."""
    doc, required = Doc(), None
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            doc = next((m for m in hint.__metadata__ if isinstance(m, Doc)), doc)
            hint = hint.__origin__
        elif origin in (NotRequired, Required):
            required = origin is Required
            hint = typing.get_args(hint)[0]
        else:
            return hint, doc, required


def _described(schema: dict[str, Any], doc: Doc) -> dict[str, Any]:
    if doc.choices:
        schema = {**schema, "enum": list(doc.choices)}
    if doc.text:
        # Beside a `$ref`, OpenAPI 3.0 ignores every other key: wrap it.
        schema = {"allOf": [schema]} if "$ref" in schema else schema
        schema = {**schema, "description": doc.text}
    return schema


class ShapeSchema:
    """Builds the schema of `Shape`s and TypedDicts into one generator's registry."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry

    def component(self, shape: Shape) -> dict[str, Any]:
        """Registers ``shape`` (and every TypedDict it holds); its `$ref`."""
        hints = typing.get_type_hints(shape.typed_dict, include_extras=True)
        total: bool = shape.typed_dict.__total__  # type: ignore[attr-defined]
        properties: dict[str, Any] = {}
        required: list[str] = []
        for key, hint in hints.items():
            hint, doc, required_key = _unwrapped(hint)
            always = (total if required_key is None else required_key) or key in shape.required
            if not always and shape.keys is not None and key not in shape.keys:
                continue
            properties[key] = _described(self.type_schema(hint), doc)
            if always:
                required.append(key)
        schema: dict[str, Any] = {"type": "object"}
        description = shape.description or shape.typed_dict.__doc__
        if description:
            schema["description"] = " ".join(description.split())
        schema["properties"] = properties
        if required:
            schema["required"] = sorted(required)
        component = ResolvedComponent(
            name=shape.name, type=ResolvedComponent.SCHEMA, schema=schema, object=shape
        )
        self.registry.register_on_missing(component)
        return component.ref

    def type_schema(self, hint: Any) -> dict[str, Any]:
        hint, doc, _ = _unwrapped(hint)
        if hint in _BASIC:
            return _described(dict(_BASIC[hint]), doc)
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin in (typing.Union, types.UnionType):
            kinds = [self.type_schema(arg) for arg in args if arg is not type(None)]
            schema = kinds[0] if len(kinds) == 1 else {"oneOf": kinds}
            if type(None) in args:
                schema = {"allOf": [schema]} if "$ref" in schema else dict(schema)
                schema["nullable"] = True
            return _described(schema, doc)
        if origin is typing.Literal:
            return _described({"enum": list(args)}, doc)
        if origin in (list, tuple) or hint in (list, tuple):
            items = self.type_schema(args[0]) if args else {}
            return _described({"type": "array", "items": items}, doc)
        if origin is dict or hint is dict:
            values = self.type_schema(args[1]) if len(args) == 2 else {}
            return _described({"type": "object", "additionalProperties": values}, doc)
        if typing.is_typeddict(hint):
            name = COMPONENT_NAMES.get(hint, hint.__name__)
            return _described(self.component(Shape(hint, name)), doc)
        # `Any`, `object`: any JSON value.
        return _described({}, doc)


# The error bodies, each status's component a selection of `ErrorBody`'s optional keys.
ERROR = Shape(ErrorBody, "Error", "The shape of every API error.", keys=())
INVALID_ERROR = Shape(
    ErrorBody,
    "InvalidError",
    "A 400: the input is not acceptable; `field` names the first offending field.",
    keys=("characters",),
)
FORBIDDEN_ERROR = Shape(
    ErrorBody,
    "ForbiddenError",
    "A 403: the role does not reach the operation, or the token's scopes do not.",
    keys=("required_scope",),
)
NOT_FOUND_ERROR = Shape(
    ErrorBody,
    "NotFoundError",
    "A 404: no such object, or not visible to you.",
    keys=("current_version",),
)
CONFLICT_ERROR = Shape(
    ErrorBody,
    "ConflictError",
    "A 409: the request conflicts with the current state.",
    keys=(
        "current_version",
        "propose_url",
        "state",
        "approvals",
        "approvals_required",
        "limit",
    ),
)
VERSION_CONFLICT_ERROR = Shape(
    ErrorBody,
    "VersionConflictError",
    "A 412: the write was based on a version that is no longer current.",
    keys=("current_version",),
    required=("current_version",),
)
TOO_LARGE_ERROR = Shape(
    ErrorBody,
    "TooLargeError",
    "A 413: the request, or what it would store, is over a size cap.",
    keys=("limit", "size", "bytes"),
)
UNPROCESSABLE_ERROR = Shape(
    ErrorBody,
    "UnprocessableError",
    "A 422: a detected secret (with the line it is on), hidden characters, or a request "
    "that is well-formed but not possible.",
    keys=("line", "column", "count", "characters", "source"),
)
LOCKED_ERROR = Shape(
    ErrorBody,
    "LockedError",
    "A 423: another user holds the document's lock.",
    keys=("lock",),
    required=("lock",),
)
RATE_LIMITED_ERROR = Shape(
    ErrorBody,
    "RateLimitedError",
    "A 429: too many requests of one kind from one caller.",
    keys=("retry_after",),
    required=("retry_after",),
)
MERGE_CONFLICT_ERROR = Shape(
    ErrorBody,
    "MergeConflictError",
    "A 409 `merge_conflict`: both sides changed the same lines; nothing was written.",
    keys=("conflicts", "base_version", "current_version"),
    required=("conflicts", "base_version", "current_version"),
)


def _example(status: int, code: str, detail: str, field: str | None = None, **extra: object):
    return OpenApiExample(
        code,
        value={"error": code, "detail": detail, "field": field, **extra},
        response_only=True,
        status_codes=[status],
    )


CHANGE_MERGE_ERROR = Shape(
    ErrorBody,
    "ChangeMergeError",
    "A 409 of merging a change request: `merge_conflict` (with the overlaps), "
    "`not_approved` (with the approvals), `change_closed` (with the state), "
    "`too_many_labels` (with the limit), `evals_missing` or `evals_regressed` (with the "
    "regression and the most allowed).",
    keys=(
        "conflicts",
        "base_version",
        "current_version",
        "approvals",
        "approvals_required",
        "state",
        "limit",
        "regression",
        "max_regression",
    ),
)


ERROR_RESPONSES: dict[int, OpenApiResponse] = {
    400: OpenApiResponse(
        INVALID_ERROR,
        description="`invalid`: the body, a query parameter or a path segment is not "
        "acceptable (on every operation: one holding a NUL character); `field` names the "
        "first offending field (dotted for nested ones).",
        examples=[_example(400, "invalid", "`body` is required.", "body")],
    ),
    401: OpenApiResponse(
        ERROR,
        description="`not_authenticated` or `authentication_failed`: no session and no "
        "valid API token (`Authorization: Bearer adt_…`), or the token is revoked or expired.",
        examples=[
            _example(401, "not_authenticated", "Authentication credentials were not provided.")
        ],
    ),
    403: OpenApiResponse(
        FORBIDDEN_ERROR,
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
        NOT_FOUND_ERROR,
        description="`not_found`: no such tenant, project or object, or it is not visible "
        "to you (outsiders get 404, never 403), or no such page of a list.",
        examples=[_example(404, "not_found", "No such tenant.", "tenant")],
    ),
    409: OpenApiResponse(
        CONFLICT_ERROR,
        description="`already_exists`, `enforced` (the tenant enforces this setting) or "
        "`invitation_decided`: the request conflicts with the current state; "
        "`review_required` (with `propose_url`): the path is protected by `review.required`, "
        "propose a change instead; on change requests `own_change`, `change_closed`, "
        "`not_approved` and `merge_conflict` (with `conflicts`). "
        "`too_many_tokens`: you hold the most active API tokens one person may.",
        examples=[_example(409, "already_exists", "A document already exists at 'agent.md'.")],
    ),
    412: OpenApiResponse(
        VERSION_CONFLICT_ERROR,
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
        ERROR,
        description="`not_acceptable`: the Accept header names no media type this "
        "operation answers in (JSON, or where documented text or a zip).",
    ),
    413: OpenApiResponse(
        TOO_LARGE_ERROR,
        description="`too_large`: the request body, or what it would store, is larger than "
        "this server takes. Nothing was stored.",
    ),
    415: OpenApiResponse(
        ERROR,
        description="`unsupported_media_type`: the body is not JSON (`application/json`) "
        "or a form. Nothing was stored.",
    ),
    422: OpenApiResponse(
        UNPROCESSABLE_ERROR,
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
        LOCKED_ERROR,
        description="`locked`: another user holds the document's lock; wait for it to "
        "expire or ask them (a tenant admin may break it with `force`).",
    ),
    428: OpenApiResponse(
        ERROR,
        description="`version_required`: name the version the change is based on, as "
        "If-Match (the ETag) or a `version` field.",
    ),
    429: OpenApiResponse(
        RATE_LIMITED_ERROR,
        description="`rate_limited`: too many requests of this kind from this caller; the "
        "Retry-After header (and `retry_after`) says how many seconds to wait.",
    ),
}


MERGE_CONFLICT = OpenApiResponse(
    MERGE_CONFLICT_ERROR,
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
# What an operation whose request carries text may answer: every string it would store
# (a reason, a name, a value, a comment ...) is checked for secrets and hidden characters
# before anything is stored (`core.stored_text`), whatever the method.
WITH_TEXT = (422,)


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
    its view (`EVERY_OPERATION`, `WITH_A_BODY` where it takes a body, `WITH_TEXT` where
    its request carries anything), so that no operation's `errors(...)` can forget one.

    Added to the response bodies the operation documents (`_get_response_bodies`, which
    `extend_schema(responses=...)` feeds), not to its serializers: `extend_schema`
    overrides `get_response_serializers` in a subclass of its own."""

    def _get_response_for_code(
        self,
        serializer: Any,
        status_code: Any,
        media_types: Any = None,
        direction: Any = "response",
    ) -> Any:
        # A `Shape` (alone or in an `OpenApiResponse`) is documented as its component.
        response = serializer.response if isinstance(serializer, OpenApiResponse) else serializer
        if isinstance(response, Shape):
            ref = ShapeSchema(self.registry).component(response)
            if isinstance(serializer, OpenApiResponse):
                serializer = OpenApiResponse(ref, serializer.description, serializer.examples)
            else:
                serializer = ref
        return super()._get_response_for_code(serializer, status_code, media_types, direction)

    def _get_response_bodies(self, direction: Any = "response") -> Any:
        responses = super()._get_response_bodies(direction)
        statuses = set(EVERY_OPERATION)
        if self._takes_a_request():
            statuses.update(WITH_TEXT)
            if self.method in ("PUT", "PATCH", "POST"):
                statuses.update(WITH_A_BODY)
        for status in sorted(statuses - {int(code) for code in responses}):
            responses[str(status)] = self._get_response_for_code(
                ERROR_RESPONSES[status], str(status), [JSON], direction
            )
        return dict(sorted(responses.items()))

    def _takes_a_request(self) -> bool:
        # A GET never takes a body (asking drf-spectacular for one would make it guess,
        # and warn, on every view without a serializer); a DELETE may (its reason).
        return self.method != "GET" and self.get_request_serializer() is not None

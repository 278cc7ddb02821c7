"""The Memory Block: render one turn (POST) or preview (GET) what an agent receives.

JSON by default; `Accept: text/plain` returns the block text alone. Errors are
always the JSON error shape, whatever was accepted.
"""

from __future__ import annotations

import hashlib
import json
import re
import weakref
from typing import Annotated, Any, TypeVar

import orjson
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, HttpResponseBase
from django.utils.cache import patch_vary_headers
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import ratelimit
from agentdocs.api.access import caller, request_project_access
from agentdocs.api.common import etag_matches
from agentdocs.api.renderers import Encoded, JSONRenderer, json_bytes
from agentdocs.api.schema import (
    IF_NONE_MATCH,
    JSON,
    RETRY_AFTER,
    TEXT,
    Shape,
    etag_header,
    json_errors,
)
from agentdocs.api.serializers import (
    StrictBooleanField,
    StrictSerializer,
    TextField,
    validated,
)
from agentdocs.core.context import ContextAccount, LoadedContext
from agentdocs.core.errors import AgentdocsError, InvalidInput
from agentdocs.core.labels import validate_label_name
from agentdocs.core.memory_block import ClientDocument, MemoryBlock, MemoryBlockAccount
from agentdocs.core.shapes import Doc
from agentdocs.core.storable import NUL
from agentdocs.models import Scope
from agentdocs.permissions import ProjectAccess
from agentdocs.services import memory_block as memory_block_service
from agentdocs.services.signing import memory_block_sign
from agentdocs.validation import memory_block as memory_block_checks


class PlainTextRenderer(BaseRenderer):
    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        if data is None:
            return b""
        if isinstance(data, str):
            return data.encode("utf-8")
        return json.dumps(data).encode("utf-8")


ResponseT = TypeVar("ResponseT", bound=HttpResponseBase)
SIGNATURE_HEADER = "Agentdocs-Signature"
SIGNATURE = OpenApiParameter(
    SIGNATURE_HEADER,
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="The server's Ed25519 signature of the block text: base64url of the signed "
    "claim {kind, tenant, project, process, sha256, rendered_at, key_id}, a dot, base64url of "
    "the signature. Verify with `agentdocs verify BLOCK_FILE --signature SIG` against "
    "/.well-known/agentdocs/keys.json (docs/evidence.md).",
    response=[200],
)


def _signed(response: ResponseT, signature: str) -> ResponseT:
    """The server's signature of the block, in the header whatever the representation
    (docs/evidence.md: `agentdocs verify BLOCK_FILE --signature SIG`)."""
    response[SIGNATURE_HEADER] = signature
    return response


def _wants_text(request: Request) -> bool:
    return isinstance(getattr(request, "accepted_renderer", None), PlainTextRenderer)


class ClientDocumentSerializer(StrictSerializer):
    """A file from the client's working folder, read into the prompt when the profile
    opts in; as a stored document's, its body is at most 256 KiB of UTF-8."""

    # The shape is checked here; the rule is `memory_block_checks.validate_client_document`.

    class Meta:
        ref_name = "ClientDocument"

    NAME_RULE = (
        "The client document's name must be one line of 1 to "
        f"{memory_block_checks.MAX_CLIENT_NAME_LENGTH} characters, such as CLAUDE.md."
    )
    BODY_RULE = "The client document's body must be a string."

    name = TextField(
        help_text="The client's file name, such as CLAUDE.md.",
        error_messages={"required": NAME_RULE, "invalid": NAME_RULE, "null": NAME_RULE},
    )
    body = TextField(
        help_text="At most 256 KiB of UTF-8.",
        error_messages={"required": BODY_RULE, "invalid": BODY_RULE, "null": BODY_RULE},
    )

    def validate(self, attrs: dict[str, str]) -> ClientDocument:
        # The rule is `agentdocs.validation`'s, as the pages apply it; its error names the member.
        try:
            return memory_block_checks.validate_client_document(
                name=attrs["name"], body=attrs["body"]
            )
        except InvalidInput as error:
            member = (error.field or "body").rsplit(".", 1)[-1]
            raise serializers.ValidationError({member: [error.detail]}) from None


PROCESS_REQUIRED = "`process` is required: the id of the agent process this block is for."


def process_field(required: str = PROCESS_REQUIRED, **kwargs: Any) -> TextField:
    """The agent process id; what makes one valid is `validate_process`, shared with the pages."""
    return TextField(error_messages={"required": required, "null": required}, **kwargs)


def name_field(**kwargs: Any) -> TextField:
    """A recipe or profile name; empty or null means none."""
    return TextField(required=False, allow_null=True, default=None, **kwargs)


@extend_schema_field(
    {"type": "array", "items": {"type": "string"}, "maxItems": 1000, "nullable": True}
)
class PathsField(serializers.Field):
    """The files the task touches; scoped `.AGENTS/` documents apply when one matches.
    What makes them valid is `validate_paths`, shared with the pages."""

    def to_internal_value(self, data: Any) -> tuple[str, ...]:
        try:
            return memory_block_checks.validate_paths(data)
        except InvalidInput as error:
            # A DRF error, so that a nested field is named by its dotted path.
            raise serializers.ValidationError(error.detail) from None

    def to_representation(self, value: Any) -> list[str]:
        return list(value)


class LabelField(TextField):
    """The label the render reads each document by (its latest where it has none);
    overrides the recipe's `params.label`. What makes one valid is `core.labels`."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("default", None)
        kwargs.setdefault(
            "help_text",
            "Read each document at its version under this label (`production`, `canary`, "
            "...), or at its latest where it has none; overrides the recipe's `params.label` "
            "(`latest`: every document's latest).",
        )
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        """The label, or "" for none (then the recipe's); `latest` overrides the recipe's."""
        value = super().to_internal_value(data)
        if value == "":
            return ""
        try:
            return validate_label_name(value)
        except InvalidInput as error:
            raise serializers.ValidationError(error.detail) from None


def paths_field() -> PathsField:
    return PathsField(
        required=False,
        allow_null=True,
        default=(),
        help_text="Relative paths of the files the task touches (at most 1,000): a scoped "
        ".AGENTS/ document is included when one matches its globs.",
    )


# The render's input on its hot path, without a DRF serializer (`plain_input`).

_POST_FIELDS = frozenset(
    {"process", "recipe", "profile", "client_document", "reset", "paths", "label"}
)
_CLIENT_DOCUMENT_FIELDS = frozenset({"name", "body"})
_SURROGATE = re.compile("[\ud800-\udfff]")


def _plain_text(value: object) -> bool:
    """A string `TextField` and the parsers keep as it is: no NUL, no lone surrogate."""
    return type(value) is str and NUL not in value and _SURROGATE.search(value) is None


def _plain_name(value: object) -> bool:
    return value is None or _plain_text(value)


def plain_input(payload: Any) -> dict[str, Any] | None:
    """The validated input of a render request that `PostInputSerializer` accepts as it
    is, the same values it gives; None for anything else, which the serializer (and, on
    the REST API, the parsers before it) then judges, refusals included. A serializer
    per render cost a sixth of a render's CPU (bench/README.md, issue 40's third pass);
    this never refuses, so every refusal keeps its code, sentence, field and order."""
    if type(payload) is not dict or not payload.keys() <= _POST_FIELDS:
        return None
    process = payload.get("process")
    recipe = payload.get("recipe")
    profile = payload.get("profile")
    reset = payload.get("reset", False)
    label = payload.get("label")
    if not (_plain_text(process) and _plain_name(recipe) and _plain_name(profile)):
        return None
    if type(reset) is not bool or not _plain_name(label):
        return None
    client = payload.get("client_document")
    paths: Any = payload.get("paths", ())
    if type(paths) is list:
        if not all(_plain_text(path) for path in paths):
            return None
    elif paths is not None and "paths" in payload:
        return None
    if client is not None:
        if type(client) is not dict or client.keys() != _CLIENT_DOCUMENT_FIELDS:
            return None
        if not (_plain_text(client["name"]) and _plain_text(client["body"])):
            return None
    try:
        if type(paths) is list:
            paths = memory_block_checks.validate_paths(paths)
        if client is not None:
            client = memory_block_checks.validate_client_document(
                name=client["name"], body=client["body"]
            )
        if label:
            label = validate_label_name(label)
        process = memory_block_checks.validate_process(process)
    except AgentdocsError:  # any refusal (a secret, hidden characters ...) is judged
        return None  # after the access check, by the serializer, as before
    return {
        "process": process,
        "recipe": recipe,
        "profile": profile,
        "client_document": client,
        "reset": reset,
        "paths": paths,
        "label": label,
    }


def _json_body(request: Request) -> Any:
    """The body of a request sent as `application/json`, parsed by orjson; None for any
    other, or for what orjson refuses (DRF's parsers then read it, refusals included)."""
    if request.META.get("CONTENT_TYPE") != "application/json":
        return None
    try:
        return orjson.loads(request._request.body)
    except (orjson.JSONDecodeError, RequestDataTooBig):
        return None


class MemoryBlockAnswer(MemoryBlockAccount):
    """A rendered block (`MemoryBlock.as_dict()`) and the names it was rendered with.

    The answer of both operations, built as a dict on the render's fast path (a
    serializer's representation cost a tenth of a render); the schema is generated
    from this declaration (`MEMORY_BLOCK`)."""

    process: Annotated[str | None, Doc("The agent process rendered for; null for a preview.")]
    recipe: Annotated[str | None, Doc("The recipe rendered with, or null.")]
    profile: Annotated[str | None, Doc("The recipe's profile rendered with, or null.")]
    label: Annotated[
        str | None,
        Doc("The label the documents were read by (the request's, else the recipe's), or null."),
    ]
    signature: Annotated[
        str,
        Doc(
            "The server's Ed25519 signature of the block (as in the Agentdocs-Signature "
            "header): base64url of the signed claim, a dot, base64url of the signature; "
            "verify with `agentdocs verify`."
        ),
    ]


MEMORY_BLOCK = Shape(MemoryBlockAnswer, "MemoryBlock")


# A context whose account lists at least this many files is answered with the account
# encoded once, for as long as this process keeps the context (`render_cache.Rows.memo`
# keeps it while the tenant's documents are unchanged).
ENCODED_CONTEXT_ENTRIES = 100
_encoded_contexts: dict[int, bytes] = {}


def encoded_context(loaded: LoadedContext) -> ContextAccount | Encoded:
    """``loaded``'s account for a render's answer: as it is, or, for a long one, encoded
    once per context object (a project with 10,000 `.AGENTS/` documents lists 1.3 MB of
    dropped files on every turn, by contract)."""
    if len(loaded.sources) + len(loaded.dropped) + len(loaded.skipped_by_scope) < (
        ENCODED_CONTEXT_ENTRIES
    ):
        return loaded.as_dict()
    key = id(loaded)
    encoded = _encoded_contexts.get(key)
    if encoded is None:
        encoded = orjson.dumps(loaded.as_dict())
        _encoded_contexts[key] = encoded
        # Forgotten with the context, before its id can be another object's.
        weakref.finalize(loaded, _encoded_contexts.pop, key, None)
    return Encoded(encoded)


class MemoryBlockView(APIView):
    # Rendering and binding are what an agent's run does: a `render` token may.
    required_scopes = {"POST": Scope.RENDER}

    renderer_classes = [JSONRenderer, PlainTextRenderer, BrowsableAPIRenderer]

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # An agent's usual Accept, without weighing it against three renderers: what
        # DRF's negotiation chooses for it.
        if (
            request.META.get("HTTP_ACCEPT") == JSONRenderer.media_type
            and not request.META.get("QUERY_STRING")
            and self.format_kwarg is None
        ):
            return JSONRenderer(), JSONRenderer.media_type
        return super().perform_content_negotiation(request, force)

    def finalize_response(self, request: Request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code >= 400 and isinstance(
            getattr(response, "accepted_renderer", None), PlainTextRenderer
        ):
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response

    class PostInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "MemoryBlockInput"

        process = process_field(help_text="The agent process id: whose read state to use.")
        recipe = name_field()
        profile = name_field()
        client_document = ClientDocumentSerializer(required=False, allow_null=True, default=None)
        reset = StrictBooleanField(
            required=False, default=False, help_text="Forget the process's read state first."
        )
        paths = paths_field()
        label = LabelField()  # type: ignore[assignment]  # the wire name; shadows Field.label

        def validate_process(self, process: str) -> str:
            return memory_block_checks.validate_process(process)

    class GetQuerySerializer(serializers.Serializer):
        recipe = serializers.CharField(required=False, allow_blank=True, default="")
        profile = serializers.CharField(required=False, allow_blank=True, default="")
        label = LabelField()  # type: ignore[assignment]  # the wire name; shadows Field.label

    def _output(self, block: MemoryBlock, **names: str | None) -> dict[str, Any]:
        # `MemoryBlockAnswer` but its `signature`, which is added last (the preview's
        # ETag is taken without it).
        return {**block.as_dict(), **names, "label": block.label}

    @classmethod
    def render_turn(
        cls,
        request: Request,
        tenant: str,
        project: str,
        payload: Any,
        *,
        plain: dict[str, Any] | None = None,
    ) -> tuple[MemoryBlock, dict[str, Any], ProjectAccess]:
        """A turn's render as POST makes it, from the caller's ``payload``: access, the
        input's rules, the rate limits; the block, the validated input and the access. Also how
        `/mcp/` serves the `get_memory_block` tool call (`agentdocs.api.mcp_backend`),
        whose token scope the caller checks. ``plain``: ``payload``'s `plain_input`,
        when the caller has it already."""
        data = plain if plain is not None else plain_input(payload)
        access = request_project_access(request, tenant, project)
        if data is None:
            data = validated(cls.PostInputSerializer, payload)
        render_caller = caller(request)
        block = memory_block_service.render_memory_block(
            project=access.project,
            process=data["process"],
            caller=render_caller,
            recipe_name=data["recipe"] or None,
            profile_name=data["profile"] or None,
            client_document=data["client_document"],
            reset=data["reset"],
            paths=data["paths"] or (),
            label=data["label"] or None,
            # Counted in the render's own cache round trip, before it reads anything:
            # per token, and per person across all their tokens and their session.
            rate_limit=ratelimit.windows(
                ("render", render_caller), ("render_user", ratelimit.user_key(access.user.pk))
            ),
        )
        return block, data, access

    @extend_schema(
        tags=["memory-block"],
        summary="Render the Memory Block for one turn of an agent process",
        description="Renders the block for `process` and records what it read, so the "
        "next turn of the same process gets only what changed (`reset` forgets that "
        "first). Readers may render; an API token needs the `render` scope. JSON by "
        "default; `Accept: text/plain` answers with the block text alone (errors stay "
        "JSON). 404 for an unknown recipe or profile; 429 with Retry-After when the "
        "token, or the person across all their tokens, renders too often.",
        request=PostInputSerializer,
        responses={
            (200, JSON): MEMORY_BLOCK,
            (200, TEXT): OpenApiResponse(
                OpenApiTypes.STR, description="With `Accept: text/plain`: the block text."
            ),
            **json_errors(400, 404, 413, 429),
        },
        parameters=[RETRY_AFTER, SIGNATURE],
    )
    def post(self, request: Request, tenant: str, project: str) -> HttpResponseBase:
        # A plain body's input is known before any parser runs; any other body goes
        # through DRF's parsers and the serializer, which answer its refusals.
        body = _json_body(request)
        plain = plain_input(body) if body is not None else None
        payload = body if plain is not None else request.data
        block, data, access = self.render_turn(request, tenant, project, payload, plain=plain)
        recipe, profile = data["recipe"] or None, data["profile"] or None
        signature = memory_block_sign(
            tenant=access.tenant.slug,
            project=access.project.slug,
            process=data["process"],
            text=block.text,
            sha256=block.sha256,
        )
        if _wants_text(request):
            return _signed(Response(block.text), signature)
        output = self._output(block, process=data["process"], recipe=recipe, profile=profile)
        body = {**output, "context": encoded_context(block.context), "signature": signature}
        # JSON as it is accepted (no `indent`): written here, without DRF's rendering.
        encoded = (
            json_bytes(body) if request.accepted_media_type == JSONRenderer.media_type else None
        )
        if encoded is None:
            return _signed(Response(body), signature)
        return _signed(HttpResponse(encoded, content_type=JSONRenderer.media_type), signature)

    @extend_schema(
        tags=["memory-block"],
        summary="Preview the Memory Block",
        description="The full block as a new process would get it, touching no read "
        "state. JSON by default; `Accept: text/plain` answers with the block text alone. "
        "Each answer has an ETag (per representation): with If-None-Match naming it, 304 "
        "and no body. 404 for an unknown recipe or profile; 429 with Retry-After when the "
        "person previews too often.",
        responses={
            (200, JSON): MEMORY_BLOCK,
            (200, TEXT): OpenApiResponse(
                OpenApiTypes.STR, description="With `Accept: text/plain`: the block text."
            ),
            304: OpenApiResponse(description="Not modified: the If-None-Match ETag is current."),
            **json_errors(404, 429),
        },
        parameters=[
            GetQuerySerializer,
            IF_NONE_MATCH,
            etag_header(200, 304),
            RETRY_AFTER,
            SIGNATURE,
        ],
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        """A preview: the full block, no read state touched."""
        access = request_project_access(request, tenant, project)
        query = validated(self.GetQuerySerializer, request.query_params)
        recipe, profile = query["recipe"] or None, query["profile"] or None
        wants_text = _wants_text(request)
        if_none_match = request.headers.get("If-None-Match")
        validator = None
        if if_none_match:
            # A conditional preview is answered from the ETag last rendered for these
            # inputs while the tenant's render inputs are unchanged: no render at all.
            validator = memory_block_service.preview_validator(
                project=access.project,
                recipe_name=recipe,
                profile_name=profile,
                representation="text" if wants_text else "json",
                label=query["label"] or None,
            )
            if validator.etag is not None and etag_matches(if_none_match, validator.etag):
                return self._preview_response(None, validator.etag)
        block = memory_block_service.render_memory_block(
            project=access.project,
            recipe_name=recipe,
            profile_name=profile,
            preview=True,
            label=query["label"] or None,
            rate_limit=ratelimit.windows(("preview_user", ratelimit.user_key(access.user.pk))),
        )
        if wants_text:
            body: Any = block.text
            etag = f'"mb-{block.sha256[:32]}-text"'
        else:
            body = self._output(block, process=None, recipe=recipe, profile=profile)
            canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
            etag = f'"mb-{hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]}"'
        if validator is not None:
            validator.store(etag)
        if etag_matches(if_none_match, etag):
            return self._preview_response(None, etag)
        # Signed after the ETag is taken: the signing time is not part of the content.
        signature = memory_block_sign(
            tenant=access.tenant.slug,
            project=access.project.slug,
            process=None,
            text=block.text,
            sha256=block.sha256,
        )
        if not wants_text:
            body = {**body, "signature": signature}
        return _signed(self._preview_response(body, etag), signature)

    def _preview_response(self, body: Any, etag: str) -> Response:
        """200 with ``body``, or 304 when it is None; the ETag either way."""
        not_modified = body is None
        response = Response(status=status.HTTP_304_NOT_MODIFIED) if not_modified else Response(body)
        response["ETag"] = etag
        patch_vary_headers(response, ["Accept"])
        response["Cache-Control"] = "private, no-cache"
        return response

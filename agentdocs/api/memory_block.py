"""The Memory Block: render one turn (POST) or preview (GET) what an agent receives.

JSON by default; `Accept: text/plain` returns the block text alone. Errors are
always the JSON error shape, whatever was accepted.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.utils.cache import patch_vary_headers
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import serializers, status
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import prefetched_access
from agentdocs.api.common import ErrorSerializer, etag_matches, reject_unknown_fields
from agentdocs.core.errors import InvalidInput
from agentdocs.core.memory_block import MemoryBlock
from agentdocs.models import Scope
from agentdocs.services import memory_block as memory_block_service

POST_FIELDS = {"process", "recipe", "profile", "client_document", "reset"}


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


def _name(value: object, field: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"`{field}` must be a string.", field=field)
    return value


def _wants_text(request: Request) -> bool:
    return isinstance(getattr(request, "accepted_renderer", None), PlainTextRenderer)


def _payload(block: MemoryBlock, **names: str | None) -> dict[str, Any]:
    return {**block.as_dict(), **names}


class ClientDocumentSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The client's file name, such as CLAUDE.md.")
    body = serializers.CharField(allow_blank=True, help_text="At most 256 KiB of UTF-8.")


class LayerSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(["policy", "agent_notes", "client_notes", "context"])
    heading = serializers.CharField(allow_null=True)
    level = serializers.CharField(allow_null=True)
    project = serializers.CharField(allow_null=True)
    path = serializers.CharField(allow_null=True)
    version = serializers.IntegerField(allow_null=True)
    sha256 = serializers.CharField(allow_null=True)
    bytes = serializers.IntegerField()
    state = serializers.ChoiceField(
        ["full", "unchanged", "empty", "off", "absent", "ignored", "truncated"]
    )
    detail = serializers.CharField()
    text_sha256 = serializers.CharField(allow_null=True)


class MemoryBlockSerializer(serializers.Serializer):
    text = serializers.CharField()
    sha256 = serializers.CharField()
    layers = LayerSerializer(many=True)
    context = serializers.DictField()
    options = serializers.DictField()


class MemoryBlockInputSerializer(serializers.Serializer):
    process = serializers.CharField(help_text="The agent process id: whose read state to use.")
    recipe = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    profile = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    client_document = ClientDocumentSerializer(required=False, allow_null=True)
    reset = serializers.BooleanField(
        required=False, default=False, help_text="Forget the process's read state first."
    )


class MemoryBlockView(APIView):
    # Rendering and binding are what an agent's run does: a `render` token may.
    required_scopes = {"POST": Scope.RENDER}

    renderer_classes = [JSONRenderer, PlainTextRenderer, BrowsableAPIRenderer]

    def finalize_response(self, request: Request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code >= 400 and isinstance(
            getattr(response, "accepted_renderer", None), PlainTextRenderer
        ):
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response

    @extend_schema(
        request=MemoryBlockInputSerializer,
        responses={200: MemoryBlockSerializer, 400: ErrorSerializer, 404: ErrorSerializer},
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        data = reject_unknown_fields(request.data, POST_FIELDS)
        recipe = _name(data.get("recipe"), "recipe")
        profile = _name(data.get("profile"), "profile")
        block = memory_block_service.render_memory_block(
            project=access.project,
            process=data.get("process"),
            recipe_name=recipe,
            profile_name=profile,
            client_document=data.get("client_document"),
            reset=data.get("reset", False),
        )
        if _wants_text(request):
            return Response(block.text)
        return Response(_payload(block, process=data["process"], recipe=recipe, profile=profile))

    @extend_schema(
        responses={200: MemoryBlockSerializer, 304: None, 404: ErrorSerializer},
        parameters=[
            OpenApiParameter("recipe", OpenApiTypes.STR),
            OpenApiParameter("profile", OpenApiTypes.STR),
        ],
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        """A preview: the full block, no read state touched."""
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        recipe = _name(request.query_params.get("recipe"), "recipe")
        profile = _name(request.query_params.get("profile"), "profile")
        block = memory_block_service.render_memory_block(
            project=access.project, recipe_name=recipe, profile_name=profile, preview=True
        )
        if _wants_text(request):
            body: Any = block.text
            etag = f'"mb-{block.sha256[:32]}-text"'
        else:
            body = _payload(block, process=None, recipe=recipe, profile=profile)
            canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
            etag = f'"mb-{hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]}"'
        if etag_matches(request.headers.get("If-None-Match"), etag):
            response = Response(status=status.HTTP_304_NOT_MODIFIED)
        else:
            response = Response(body)
        response["ETag"] = etag
        patch_vary_headers(response, ["Accept"])
        response["Cache-Control"] = "private, no-cache"
        return response

"""`POST .../mcp-sessions/`: the start of an MCP session, its instructions and their record.

What `agentdocs mcp` asks before it serves (so a wrong token or project fails the
command, not the first tool call) and what `/mcp/` asks at each `initialize` and
`server/discover`: the project's house rules as the server's instructions, bound like a
render (`agentdocs.services.mcp_sessions`).
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import ratelimit
from agentdocs.api.access import caller, request_project_access
from agentdocs.api.memory_block import name_field
from agentdocs.api.schema import RETRY_AFTER, errors
from agentdocs.api.serializers import StrictSerializer, validated
from agentdocs.models import Scope
from agentdocs.services import mcp_sessions as mcp_session_service


class McpSessionCreate(APIView):
    # The start is bound like a render: what a `render` token may do.
    required_scopes = {"POST": Scope.RENDER}

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "McpSessionInput"

        # Optional, as a recipe's name is; what makes one valid is `validate_process`.
        session = name_field(
            help_text="The client's session id, which names the process; else one is made."
        )
        label = name_field(  # type: ignore[assignment]  # Field.label, to the type checker
            help_text="Read each document at its version under this label (production, "
            "canary, ...), or its latest where it has none; else the latest."
        )

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "McpSession"

        process = serializers.CharField(help_text="The process the session is bound as.")
        instructions = serializers.CharField(help_text="The server's instructions, exactly.")
        record = serializers.IntegerField(help_text="The binding record of the session's start.")

    @extend_schema(
        tags=["bindings"],
        summary="Start an MCP session: its instructions, bound",
        description="The project's house rules (the Memory Block's policy, agent notes and "
        "always-applied context, cut to AGENTDOCS_MCP_INSTRUCTIONS_BYTES) and the sentence "
        "about get_memory_block, as an MCP server's `instructions`, and the binding record "
        "of them (reconstructable). Readers may; an API token needs the `render` scope. "
        "429 with Retry-After as binding.",
        request=InputSerializer,
        responses={201: OutputSerializer, **errors(400, 404, 413, 429)},
        parameters=[RETRY_AFTER],
    )
    def post(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        data = validated(self.InputSerializer, request.data)
        ratelimit.check("bind", caller(request), ("bind_user", ratelimit.user_key(access.user.pk)))
        started = mcp_session_service.mcp_session_start(
            tenant=access.tenant,
            project=access.project,
            user=access.user,
            session=data["session"],
            label=data["label"],
        )
        response = Response(
            self.OutputSerializer(
                {
                    "process": started.process,
                    "instructions": started.instructions,
                    "record": started.record.pk,
                }
            ).data,
            status=status.HTTP_201_CREATED,
        )
        response["Location"] = reverse(
            "api-binding",
            kwargs={"tenant": tenant, "project": project, "record": started.record.pk},
        )
        return response

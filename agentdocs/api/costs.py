"""The cost of a project's documents: the Memory Block per turn for each recipe, full
and as stubs, and the tokens delivered per document over the last days
(`agentdocs.services.costs`)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.access import request_project_access
from agentdocs.api.schema import JSON, Shape, json_errors
from agentdocs.api.serializers import validated
from agentdocs.services import costs as cost_service

DAYS_RULE = (
    f"`days` is a whole number of days from {cost_service.MIN_DAYS} to {cost_service.MAX_DAYS}."
)

PROJECT_COSTS = Shape(cost_service.ProjectCosts, "ProjectCosts")


class ProjectCostList(APIView):
    class QuerySerializer(serializers.Serializer):
        days = serializers.IntegerField(
            required=False,
            default=cost_service.DEFAULT_DAYS,
            min_value=cost_service.MIN_DAYS,
            max_value=cost_service.MAX_DAYS,
            help_text=f"The last this many days (default {cost_service.DEFAULT_DAYS}, "
            f"{cost_service.MIN_DAYS} to {cost_service.MAX_DAYS})",
            error_messages={
                key: DAYS_RULE for key in ("invalid", "min_value", "max_value", "max_string_length")
            },
        )

    @extend_schema(
        tags=["costs"],
        summary="What the project's documents cost",
        description="For each recipe (none first, then the tenant's by name): the bytes and "
        "tokens of the Memory Block on a process's first turn (`full`: every layer in full) "
        "and on a later one (`stub`: every layer a stub), and each document's part. Over "
        "the last `days` days (default 30): every render for a process (REST, MCP, a "
        "session hook's; counted per day) and the turns a hook served from its cache, "
        "their tokens per document, and what the per-process "
        "dedup saved against sending the full block on every turn (`tokens_if_full` less "
        "`tokens_delivered`). Tokens are counted with `tokenizer`. Members read. 400 naming "
        "`days` when it is not a whole number from 1 to 365.",
        parameters=[QuerySerializer],
        responses={(200, JSON): PROJECT_COSTS, **json_errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = request_project_access(request, tenant, project)
        days = validated(self.QuerySerializer, request.query_params)["days"]
        return Response(cost_service.project_costs(project=access.project, days=days))

"""`GET .../explain?tool=T&path=P[&label=L]`: what tool T loads for the file P, from
the project's current export (`agentdocs.core.explain`)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import prefetched_access
from agentdocs.api.memory_block import LabelField
from agentdocs.api.schema import errors
from agentdocs.api.serializers import represented, validated
from agentdocs.core.errors import InvalidInput
from agentdocs.core.explain import validate_path, validate_tool
from agentdocs.core.numbers import MAX_ID, positive_int
from agentdocs.core.targets import TOOLS_BY_SLUG
from agentdocs.selectors import explain as explain_selectors


class ExplainView(APIView):
    class QuerySerializer(serializers.Serializer):
        tool = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            help_text="the tool's registry id (`export/formats` lists them as `id`): "
            + ", ".join(TOOLS_BY_SLUG),
        )
        path = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            help_text="a file relative to the repository's root (`src/api/handlers.py`), or "
            "a folder ending in `/`",
        )
        label = LabelField()  # type: ignore[assignment]  # the wire name; shadows Field.label
        repository = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            help_text="a repository's id (`repositories/`): only the files its last report "
            "holds, each with its state there",
        )

        def validate_repository(self, value: str) -> int | None:
            if not value:
                return None
            repository_id = positive_int(value, maximum=MAX_ID)
            if repository_id is None:
                raise InvalidInput("A repository id is a positive integer.", field="repository")
            return repository_id

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Explanation"

        class LoadedSerializer(serializers.Serializer):
            class AppliedSerializer(serializers.Serializer):
                document = serializers.CharField()
                globs = serializers.ListField(child=serializers.CharField())
                matched = serializers.CharField(
                    allow_null=True, help_text="the glob that matched the path"
                )
                why = serializers.CharField()

            path = serializers.CharField()
            bytes = serializers.IntegerField()
            characters = serializers.IntegerField()
            why = serializers.CharField(help_text="why the tool loads it for the path")
            cut_at = serializers.IntegerField(
                allow_null=True,
                help_text="the byte the tool's limits stop reading it at (null: read whole)",
            )
            documents = AppliedSerializer(
                many=True, help_text="the `.AGENTS/` documents it holds, and why each applies"
            )
            state = serializers.CharField(
                allow_null=True,
                help_text="with `?repository=`: the file's state in its last report",
            )

        class SkippedSerializer(serializers.Serializer):
            path = serializers.CharField()
            why = serializers.CharField()

        class ShadowedSerializer(serializers.Serializer):
            path = serializers.CharField()
            by = serializers.CharField()
            why = serializers.CharField()

        tool = serializers.CharField()
        format = serializers.CharField()
        path = serializers.CharField()
        folder = serializers.CharField(help_text="the working folder (empty: the root)")
        files = LoadedSerializer(many=True, help_text="in the tool's load order")
        not_loaded = SkippedSerializer(many=True, help_text="its rule files it does not load")
        shadowed = ShadowedSerializer(
            many=True, help_text="what another document or file takes the place of"
        )
        warnings = serializers.ListField(
            child=serializers.CharField(), help_text="what the tool's limits cut or warn of"
        )

    @extend_schema(
        tags=["export"],
        summary="Explain what a tool loads for a file",
        description="The files `?tool=` loads for `?path=` from the project's current "
        "export of its format, in its load order: each with its size, where its limits "
        "cut it, the scoped documents it holds and why they apply (the glob that "
        "matched); the rule files it does not load; what is shadowed (an agent.md of "
        "another level, a per-folder file above the closest). 400 naming `tool` for an "
        "unknown tool, naming `path` for an absolute path or one with `..`; with "
        "`?repository=`, only the files that repository's last report holds (404 naming "
        "`repository` for none of the project's).",
        parameters=[QuerySerializer],
        responses={200: OutputSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, project: str) -> Response:
        access = permissions.project_access(
            request.user, tenant, project, prefetched=prefetched_access(request)
        )
        query = validated(self.QuerySerializer, request.query_params)
        tool = validate_tool(query["tool"])
        path = validate_path(query["path"])
        explanation = explain_selectors.export_explain(
            project=access.project,
            tool=tool,
            path=path,
            label=query["label"] or None,
            repository_id=query["repository"],
        )
        return Response(represented(self.OutputSerializer, explanation.as_dict()))

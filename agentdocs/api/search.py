"""Search: the current documents of a tenant whose body or path match the words."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs import permissions
from agentdocs.api.access import request_project_access, request_tenant_access
from agentdocs.api.pagination import Pagination
from agentdocs.api.schema import errors
from agentdocs.api.serializers import validated
from agentdocs.selectors import search as search_selectors
from agentdocs.selectors.search import MAX_QUERY_LENGTH, SearchHit


class SearchHitSerializer(serializers.Serializer):
    class Meta:
        ref_name = "SearchHit"

    project = serializers.CharField(help_text="The project's slug")
    path = serializers.CharField()
    version = serializers.IntegerField(help_text="The current version, which was searched")
    snippet = serializers.CharField(
        help_text="Plain text around the matches (not HTML: escape it before showing it in "
        "a page); the start of the body when only the path matched"
    )
    highlights = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="The matches in `snippet`, as `[start, end)` character offsets",
    )
    rank = serializers.FloatField(help_text="Higher is better; the list is ordered by it")
    url = serializers.SerializerMethodField(help_text="The document's page on this site")
    api_url = serializers.SerializerMethodField(help_text="The document in this API")

    def _address(self, hit: SearchHit) -> dict[str, str]:
        return {"tenant": self.context["tenant"], "project": hit.project, "path": hit.path}

    def get_url(self, hit: SearchHit) -> str:
        return reverse("document", kwargs=self._address(hit))

    def get_api_url(self, hit: SearchHit) -> str:
        return reverse("api-document", kwargs=self._address(hit))


class Search(APIView):
    pagination_class = Pagination  # the schema shows the answer as the page it is

    class QuerySerializer(serializers.Serializer):
        q = serializers.CharField(
            required=False,
            default="",
            allow_blank=True,
            trim_whitespace=False,
            help_text=f"The words to find (at most {MAX_QUERY_LENGTH} characters)",
        )
        project = serializers.CharField(
            required=False,
            default="",
            allow_blank=True,
            help_text="Only this project (its slug)",
        )

    OutputSerializer = SearchHitSerializer

    @extend_schema(
        tags=["search"],
        summary="Search the tenant's documents",
        description="The current documents (not deleted ones, not earlier versions) of "
        "every project of the tenant, or of `?project=` only, whose body or path match "
        "`?q=`; best first, paged. Readers and above. On PostgreSQL a full-text search "
        '(English stemming; `"quoted phrases"`, `or` and `-word` as in web search '
        "engines), ranked, with the matching words of the body in `highlights`; a word "
        "of the path finds the document too. On SQLite, `q` is one case-insensitive "
        "substring of the path or the body, its first match in the body highlighted. "
        "400 naming `q` when it is empty or too long; 404 for an unknown project.",
        responses={200: OutputSerializer(many=True), **errors(400, 404)},
        parameters=[QuerySerializer],
    )
    def get(self, request: Request, tenant: str) -> Response:
        query = validated(self.QuerySerializer, request.query_params)
        access: permissions.Access
        if query["project"]:
            access = request_project_access(request, tenant, query["project"])
            project = access.project
        else:
            access = request_tenant_access(request, tenant)
            project = None
        q = search_selectors.validate_search_query(query["q"])
        rows = search_selectors.document_search(tenant=access.tenant, q=q, project=project)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        hits = search_selectors.search_hits(page or [], q=q)
        data = self.OutputSerializer(hits, many=True, context={"tenant": access.tenant.slug}).data
        return paginator.get_paginated_response(data)

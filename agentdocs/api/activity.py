"""The tenant's activity feed: every change in the tenant, newest first (the history
of each setting, recipe, membership and provider map entry is `history`'s)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agentdocs import links
from agentdocs.api.access import request_tenant_access
from agentdocs.api.common import ListView
from agentdocs.api.schema import errors
from agentdocs.models import Event
from agentdocs.models.events import KINDS
from agentdocs.paging import LateRows
from agentdocs.selectors import activity as activity_selectors


class ActivitySerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The event id (`evt_…`), as webhooks deliver it.")
    type = serializers.CharField(help_text="The event type, such as `document.updated`.")
    at = serializers.DateTimeField(source="created_at")
    actor = serializers.CharField(source="actor_name", allow_blank=True)
    kind = serializers.ChoiceField(choices=KINDS)
    action = serializers.CharField(help_text="created, updated, deleted, restored, ...")
    target = serializers.CharField(
        help_text="What changed: a document path, a setting key, a recipe name, a username, "
        "a provider name, a binding record's id."
    )
    project = serializers.CharField(source="project.slug", allow_null=True, default=None)
    reason = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField(allow_null=True, help_text="A document's new version.")
    url = serializers.SerializerMethodField(help_text="The page that shows the change.")

    def get_url(self, event: Event) -> str | None:
        return links.event_page(event)


def _filter(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.STR, OpenApiParameter.QUERY, description=description)


class ActivityList(ListView):
    OutputSerializer = ActivitySerializer

    @extend_schema(
        tags=["activity"],
        summary="List the tenant's activity",
        description="Every change in the tenant, newest first, paged: documents, settings, "
        "recipes, the provider map, binding records, change requests, and (for tenant "
        "admins only) memberships and webhooks. 400 naming the filter for an unknown "
        "`kind` or `project`, or a `since`/`until` that is not ISO 8601.",
        parameters=[
            _filter("project", "A project's slug: only its changes."),
            _filter("actor", "A username: only the changes they made."),
            _filter("kind", f"Only changes of this kind: {', '.join(KINDS)}."),
            _filter(
                "since", "ISO 8601 date-time (UTC unless an offset is given) or date; inclusive."
            ),
            _filter("until", "ISO 8601 date-time or date; changes before it."),
        ],
        responses={200: OutputSerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        filters = activity_selectors.activity_filter(request.query_params)
        events = activity_selectors.activity_list(
            tenant=access.tenant, admin=access.is_admin, filters=filters
        )
        return self.paginate(request, LateRows(events))

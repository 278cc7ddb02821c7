"""The provider map: members read it, tenant admins write it."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.access import request_tenant_access
from agentdocs.api.common import ListView
from agentdocs.api.schema import errors
from agentdocs.api.serializers import ReasonField, StrictSerializer, TextField, optional_body
from agentdocs.selectors import policy as policy_selectors
from agentdocs.services import providers as provider_service


class ProviderSerializer(serializers.Serializer):
    name = serializers.CharField()
    project = serializers.CharField(source="project.slug")
    path = serializers.CharField()
    updated_at = serializers.DateTimeField()
    updated_by = serializers.CharField(source="updated_by.username", allow_null=True)


class ProviderList(ListView):
    OutputSerializer = ProviderSerializer

    @extend_schema(
        tags=["providers"],
        summary="List the tenant's provider map",
        description="Each name and the project document it points at, paged; members read.",
        responses={200: OutputSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, tenant: str) -> Response:
        access = request_tenant_access(request, tenant)
        return self.paginate(request, policy_selectors.provider_list(tenant=access.tenant))


class ProviderDetail(APIView):
    class PutInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "ProviderInput"

        project = TextField(source="project_slug", help_text="The slug of a project of the tenant")
        path = TextField()
        reason = ReasonField()

    class DeleteInputSerializer(StrictSerializer):
        class Meta:
            ref_name = "ProviderDelete"

        reason = ReasonField()

    OutputSerializer = ProviderSerializer

    @extend_schema(
        tags=["providers"],
        summary="Read a provider",
        description="400 for a name that cannot be one, 404 if the map has no such name.",
        responses={200: OutputSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, tenant: str, name: str) -> Response:
        access = request_tenant_access(request, tenant)
        mapping = policy_selectors.provider_get(tenant=access.tenant, name=name)
        return Response(self.OutputSerializer(mapping).data)

    @extend_schema(
        tags=["providers"],
        summary="Set a provider",
        description="Points `name` at a document path of a project of the tenant (201 when "
        "new, 200 when changed). Tenant admins (403 otherwise); 400 for an unknown project "
        "or a bad name or path; 409 when a concurrent write took the name.",
        request=PutInputSerializer,
        responses={200: OutputSerializer, 201: OutputSerializer, **errors(400, 404, 409, 413)},
    )
    def put(self, request: Request, tenant: str, name: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        serializer = self.PutInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        mapping, created = provider_service.provider_set(
            tenant=access.tenant, name=name, user=access.user, **serializer.validated_data
        )
        return Response(
            self.OutputSerializer(mapping).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        tags=["providers"],
        summary="Remove a provider",
        description="Tenant admins (403 otherwise); 404 if the map has no such name.",
        request=DeleteInputSerializer,
        responses={204: None, **errors(400, 404)},
    )
    def delete(self, request: Request, tenant: str, name: str) -> Response:
        access = request_tenant_access(request, tenant)
        access.require_admin()
        serializer = self.DeleteInputSerializer(data=optional_body(request.data))
        serializer.is_valid(raise_exception=True)
        provider_service.provider_delete(
            tenant=access.tenant, name=name, user=access.user, **serializer.validated_data
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

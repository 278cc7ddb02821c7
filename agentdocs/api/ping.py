"""Ping: an authenticated client checks that it reaches the API."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agentdocs.api.schema import errors


class Ping(APIView):
    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Ping"

        ok = serializers.BooleanField()

    @extend_schema(
        tags=["ping"],
        summary="Check that the API is reachable and you are signed in",
        description='`{"ok": true}` for any signed-in caller or valid API token; 401 '
        "otherwise. Any scope will do.",
        responses={200: OutputSerializer, **errors()},
    )
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer({"ok": True}).data)

"""Ping: an authenticated client checks that it reaches the API."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class Ping(APIView):
    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Ping"

        ok = serializers.BooleanField()

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer({"ok": True}).data)

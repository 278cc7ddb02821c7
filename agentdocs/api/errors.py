"""Every API error is JSON of one shape, `agentdocs.core.errors.ErrorBody`:
``{"error": "<code>", "detail": "<human sentence>", "field": "<field or null>"}`` and
the further facts some errors carry; the schema's error components are generated
from that declaration (`agentdocs.api.schema`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from agentdocs import links
from agentdocs.core.errors import AgentdocsError, ErrorBody, RateLimited, ReviewRequired


def error_body(code: str, detail: str, field: str | None = None) -> ErrorBody:
    """The body of an error no domain error raised (DRF's, Django's): no further facts."""
    return {"error": code, "detail": detail, "field": field}


def _first_validation_error(detail: Any, prefix: str = "") -> tuple[str | None, str]:
    """Walk DRF's nested error structure to the first message and its dotted field."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "" if key == "non_field_errors" else str(key)
            field = f"{prefix}.{name}" if prefix and name else (name or prefix)
            return _first_validation_error(value, field)
    if isinstance(detail, list) and detail:
        first = detail[0]
        if isinstance(first, (dict, list)):
            return _first_validation_error(first, prefix)
        return (prefix or None), str(first)
    return (prefix or None), str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RateLimited):
        return Response(
            exc.as_dict(), status=exc.status, headers={"Retry-After": str(exc.retry_after)}
        )
    if isinstance(exc, ReviewRequired):
        propose_url = links.propose_url(tenant=exc.tenant, project=exc.project)
        return Response({**exc.as_dict(), "propose_url": propose_url}, status=exc.status)
    if isinstance(exc, AgentdocsError):
        return Response(exc.as_dict(), status=exc.status)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        detail = f"The request body is larger than the {limit} bytes this server reads."
        return Response(error_body("too_large", detail, None), status=413)
    if isinstance(exc, exceptions.ValidationError):
        field, message = _first_validation_error(exc.detail)
        return Response(error_body("invalid", message, field), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = getattr(exc, "default_code", "error")
    if isinstance(exc, exceptions.APIException):
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    else:
        detail = str(exc)
    response.data = error_body(code, str(detail), None)
    return response


@csrf_exempt
def json_not_found(request, exception=None) -> JsonResponse:
    """The answer to every method on a path under `/api/` that names no endpoint.

    Exempt from CSRF because it changes nothing: without the exemption a POST
    from a token client (which sends no CSRF cookie) met Django's HTML 403
    page before this view could say the path does not exist.
    """
    return JsonResponse(
        error_body("not_found", f"No API endpoint at {request.path}.", None), status=404
    )

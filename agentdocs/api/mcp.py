"""`/mcp/`: the MCP server of `agentdocs.mcp`, served by the web app over Streamable HTTP.

    POST /mcp/?tenant=T&project=P          (or /mcp/T/P/, or the headers
    Authorization: Bearer <API token>       X-Agentdocs-Tenant / X-Agentdocs-Project)

The same server as the stdio command (`agentdocs.mcp.server.build_server`: the tools,
their arguments, results and errors, the resources and the prompt), with its own
backend: `agentdocs.api.mcp_backend.ServiceProjectApi`, which calls the services and
selectors behind the same access checks, scopes and rate limits as the REST views and
answers the same errors. A tenant or project the token's user may not see is the REST
API's 404 before any protocol work.

The transport is stateless and answers JSON, which is what a synchronous WSGI worker
can serve: each POST carries one JSON-RPC message and gets its answer (or 202)
back, with no session to keep between requests; GET (the server-to-client event
stream) and DELETE (ending a session) answer 405, as the specification provides
for a server without them, and a request of a method not served here (the
`subscriptions/listen` stream above all) is -32601 at once. A plain stateless
`tools/call` (the `get_memory_block` every task starts with) is answered from the
table directly (`agentdocs.mcp.tools.call_tool`); any other message goes through the
SDK's stateless session manager, on an event loop of its own (`async_to_sync`), whose
backend calls come back to the request's thread, where Django's database connection
is. Building a server costs more than serving a call, so each process keeps one per
project (`_server_for`), whose backend is the current request's (`RequestProjectApi`).

Only API tokens sign in here, never the session cookie: no browser page can make
these requests for a signed-in user, so the view needs no CSRF token. A missing,
invalid, revoked or expired token is 401 with `WWW-Authenticate: Bearer`; any token
with the `read` scope may connect, and each tool needs what its REST operation needs.

The body is judged here before the SDK sees it (`_message_of`), so that no body can
make it fail (`json.loads` of 1,000 nested arrays raised RecursionError, a 500): what
is not JSON in UTF-8 is a 400 with the JSON-RPC error -32700; what is nested deeper
than the REST API takes (`parsers.MAX_DEPTH`), holds a string no value here can hold,
or is not one JSON-RPC 2.0 message (a batch, a number) is a 400 with -32600; a body
over the server's request cap is a 413 and another media type a 415, both -32600.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from contextvars import ContextVar
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import orjson
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.utils.cache import patch_vary_headers
from drf_spectacular.utils import extend_schema
from mcp.server.streamable_http import check_accept_headers
from mcp.types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    CallToolResult,
    JSONRPCMessage,
    TextContent,
)
from mcp.types import methods as protocol_methods
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import TypeAdapter, ValidationError
from rest_framework import exceptions
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from agentdocs.api.access import TokenScopePermission, request_project_access, token_allows
from agentdocs.api.authentication import TokenAccessAuthentication
from agentdocs.api.errors import error_body
from agentdocs.api.mcp_backend import ServiceProjectApi
from agentdocs.api.parsers import MAX_DEPTH, refuse_unstorable_text
from agentdocs.api.renderers import JSONRenderer
from agentdocs.core.errors import InvalidInput
from agentdocs.core.labels import validate_label_name
from agentdocs.core.storable import strict_json_storable
from agentdocs.mcp.api import ProjectApi, Refusal
from agentdocs.mcp.server import build_server
from agentdocs.mcp.skills_extension import (
    SKILLS_METHODS,
    UnknownSkill,
    process_of,
    skills_get,
    skills_list,
)
from agentdocs.mcp.tools import BY_NAME, ERROR_META_KEY, call_tool
from agentdocs.models import Scope

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

TENANT_HEADER = "X-Agentdocs-Tenant"
PROJECT_HEADER = "X-Agentdocs-Project"
# The label this client's renders and instructions read by unless a call names one
# (`/mcp/T/P/?label=canary`, or this header): a canary client's whole session.
LABEL_HEADER = "X-Agentdocs-Label"
# The recipe (process type) whose `params.skills` chooses the skills `skills/list`
# offers (`/mcp/T/P/?recipe=reviewer`, or this header); none: every skill offered.
RECIPE_HEADER = "X-Agentdocs-Recipe"
HEADERS_NOT_PASSED_ON = {"content-length", "transfer-encoding", "connection"}
# Servers kept per process: one per (site, tenant, project) in use.
SERVERS_KEPT = 64
# What a browser client may send and read (CORS): the headers MCP uses.
CORS_REQUEST_HEADERS = (
    "authorization",
    "content-type",
    "mcp-protocol-version",
    "mcp-session-id",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    TENANT_HEADER.lower(),
    PROJECT_HEADER.lower(),
    RECIPE_HEADER.lower(),
)
CORS_EXPOSED_HEADERS = ("mcp-session-id", "mcp-protocol-version", "www-authenticate")
CORS_MAX_AGE_SECONDS = 600
PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"
SERVED_METHODS = "POST, OPTIONS"

_request_api: ContextVar[ProjectApi] = ContextVar("agentdocs_mcp_request_api")
_JSON_RPC_MESSAGE: TypeAdapter[Any] = TypeAdapter(JSONRPCMessage)


class BearerTokenAuthentication(TokenAccessAuthentication):
    """API tokens only; a refusal names the Bearer scheme, as MCP clients expect."""

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="agentdocs"'


class SdkJudgesAccept(BaseContentNegotiation):
    """The SDK judges the Accept header (its 406 is a JSON-RPC error); what DRF answers
    itself here (401, 405) is JSON whatever the client accepts."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


class JsonRpcRefusal(Exception):
    """A body the endpoint refuses before the SDK reads it: the HTTP status, the
    JSON-RPC error code, a sentence, and the field it is about (as the REST error's)."""

    def __init__(
        self, status: int, code: int, message: str, *, field: str | None = None, id: Any = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.id = id

    def response(self) -> JsonResponse:
        error = {"code": self.code, "message": self.message, "data": {"field": self.field}}
        return JsonResponse({"jsonrpc": "2.0", "id": self.id, "error": error}, status=self.status)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _id_of(message: Any) -> Any:
    """The request's id, when the message has a usable one (for the error's `id`)."""
    if isinstance(message, dict):
        given = message.get("id")
        if isinstance(given, str) or (isinstance(given, int) and not isinstance(given, bool)):
            return given
    return None


def _python_json(body: bytes) -> Any:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise JsonRpcRefusal(
            400, PARSE_ERROR, f"Parse error: the body is not UTF-8 ({error.reason})."
        ) from None
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise JsonRpcRefusal(
            400, INVALID_REQUEST, f"The request body is nested more than {MAX_DEPTH} levels deep."
        ) from None
    except ValueError as error:  # JSONDecodeError, and an integer of over 4,300 digits
        raise JsonRpcRefusal(400, PARSE_ERROR, f"Parse error: {error}") from None


def _message_of(request: Request) -> dict[str, Any]:
    """The one JSON-RPC message in the request's body, or JsonRpcRefusal."""
    # DRF's `content_type` is the whole header, parameters (`; charset=utf-8`) included.
    if request.content_type.split(";")[0].strip().lower() != "application/json":
        raise JsonRpcRefusal(
            415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"
        )
    try:
        body = request.body
    except RequestDataTooBig:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raise JsonRpcRefusal(
            413,
            INVALID_REQUEST,
            f"The request body is larger than the {limit} bytes this server reads.",
        ) from None
    try:
        # What orjson reads (strict JSON in UTF-8) the standard library reads alike; what
        # it refuses is read (and refused) as before.
        message = orjson.loads(body)
        storable = strict_json_storable(body)
    except orjson.JSONDecodeError:
        message = _python_json(body)
        storable = False
    try:
        if not storable:
            refuse_unstorable_text(message)
    except InvalidInput as error:
        raise JsonRpcRefusal(
            400, INVALID_REQUEST, error.detail, field=error.field, id=_id_of(message)
        ) from None
    if not isinstance(message, dict):
        raise JsonRpcRefusal(
            400,
            INVALID_REQUEST,
            "Invalid request: the body is one JSON-RPC 2.0 message, an "
            "object (batches are not supported).",
        )
    not_a_message = JsonRpcRefusal(
        400,
        INVALID_REQUEST,
        "Invalid request: not a JSON-RPC 2.0 request, notification or response "
        '(`"jsonrpc": "2.0"`, a `method` or a `result` or `error`, an `id` that is a string '
        "or an integer).",
        id=_id_of(message),
    )
    # The SDK would read a message with an id of another type (`true`) as a notification.
    if message.get("id") is not None and _id_of(message) is None:
        raise not_a_message
    try:
        _JSON_RPC_MESSAGE.validate_python(message)
    except ValidationError:
        raise not_a_message from None
    return message


# The requests this endpoint serves. Any other request (`subscriptions/listen`, whose
# answer is a stream a worker would hold for as long as the client waits; completions;
# logging) is answered at once with the JSON-RPC error -32601; notifications are
# acknowledged (202).
SERVED_REQUESTS = frozenset(
    {
        "initialize",
        "server/discover",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        # MCP's Skills extension (`agentdocs.mcp.skills_extension`), answered here.
        *SKILLS_METHODS,
    }
)


def _unserved(message: dict[str, Any]) -> JsonResponse | None:
    """The JSON-RPC error for a request of a method not served here, else None."""
    method = message.get("method")
    if "id" not in message or not isinstance(method, str) or method in SERVED_REQUESTS:
        return None
    error = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}", "data": method}
    return JsonResponse({"jsonrpc": "2.0", "id": message["id"], "error": error})


async def in_request_thread(function: Any, *args: Any) -> Any:
    """Run a tool's REST call in the thread serving the `/mcp/` request (its database
    connection, and no running event loop, which Django's ORM refuses)."""
    return await sync_to_async(function, thread_sensitive=True)(*args)


def _header(request: Request, name: str) -> str | None:
    """A request header, read from the WSGI environ (as `request.headers` reads it,
    without building every header's entry on each request)."""
    value = request.META.get("HTTP_" + name.upper().replace("-", "_"))
    return None if value is None else str(value)


def _query(request: Request, name: str) -> str | None:
    """A query parameter; no query string is parsed when there is none."""
    return request.query_params.get(name) if request.META.get("QUERY_STRING") else None


def _where(request: Request, tenant: str | None, project: str | None) -> tuple[str, str]:
    """The tenant and project: from the path, else the query, else the headers."""
    found: dict[str, str] = {}
    for name, given, header in (
        ("tenant", tenant, TENANT_HEADER),
        ("project", project, PROJECT_HEADER),
    ):
        value = given or _query(request, name) or _header(request, header)
        if not value:
            raise exceptions.ValidationError(
                {
                    name: f"Name the {name}: /mcp/?tenant=T&project=P, /mcp/T/P/ or the "
                    f"{header} header."
                }
            )
        found[name] = value
    return found["tenant"], found["project"]


def _label(request: Request) -> str | None:
    """The client's label: the query's `label`, else the X-Agentdocs-Label header."""
    value = _query(request, "label") or _header(request, LABEL_HEADER)
    return validate_label_name(value, field="label") if value else None


def _recipe(request: Request) -> str | None:
    """The client's recipe: the query's `recipe`, else the X-Agentdocs-Recipe header."""
    return _query(request, "recipe") or _header(request, RECIPE_HEADER) or None


class RequestProjectApi:
    """What a kept server's tools see as their `ProjectApi`: its project, and every
    operation sent through the `ProjectApi` of the request being served (its token)."""

    def __init__(self, *, server_url: str, tenant: str, project: str) -> None:
        self.server_url = server_url
        self.tenant = tenant
        self.project = project

    def __getattr__(self, name: str) -> Any:
        return getattr(_request_api.get(), name)


@lru_cache(maxsize=SERVERS_KEPT)
def _server_for(server_url: str, tenant: str, project: str) -> Server[Any]:
    backend = RequestProjectApi(server_url=server_url, tenant=tenant, project=project)
    return build_server(cast(ProjectApi, backend), call=in_request_thread, per_session=True)


def _asgi_scope(request: Request) -> dict[str, Any]:
    meta = request.META
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "query_string": str(meta.get("QUERY_STRING", "")).encode("latin-1"),
        "root_path": "",
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
        ],
        "client": (str(meta.get("REMOTE_ADDR", "")), 0),
    }


async def _serve(
    api: ServiceProjectApi, scope: dict[str, Any], body: bytes
) -> tuple[int, list[Any], bytes]:
    """One HTTP request through a stateless session manager of the SDK for ``api``'s
    project: the answer's status, headers and body."""
    import anyio
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    _request_api.set(api)  # in this task's context, which the server's tasks inherit
    server = _server_for(api.server_url, api.tenant, api.project)
    # A session manager runs once; the server serves any number.
    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        stateless=True,
        # Django has checked the Host (ALLOWED_HOSTS) and the Origin (`origin_refusal`).
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=max(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0, 1),
    )
    delivered = False
    answer: dict[str, Any] = {"status": 500, "headers": []}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.update(status=message["status"], headers=message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return int(answer["status"]), list(answer["headers"]), b"".join(chunks)


def _origin_refusal(origin: str) -> JsonResponse:
    detail = (
        f"The origin {origin} may not call this MCP endpoint: a browser page may only when "
        "its origin is in AGENTDOCS_MCP_ALLOWED_ORIGINS."
    )
    return JsonResponse(error_body("origin_not_allowed", detail, "Origin"), status=403)


def _no_stream(method: str) -> JsonResponse:
    """GET (the server-to-client event stream) and DELETE (ending a session): neither is
    served by a stateless server, and the specification's answer is 405 whatever the
    request accepts (a 406 leaves some clients in an error state)."""
    detail = (
        f"{method} is not served here: this MCP endpoint is stateless, with no event stream "
        "and no session to end; POST one JSON-RPC message."
    )
    response = JsonResponse(error_body("method_not_allowed", detail), status=405)
    response["Allow"] = SERVED_METHODS
    return response


def _preflight() -> HttpResponse:
    response = HttpResponse(status=204)
    response["Access-Control-Allow-Methods"] = SERVED_METHODS
    response["Access-Control-Allow-Headers"] = ", ".join(CORS_REQUEST_HEADERS)
    response["Access-Control-Max-Age"] = str(CORS_MAX_AGE_SECONDS)
    return response


def _with_cors(response: HttpResponseBase, origin: str) -> HttpResponseBase:
    """What lets the page at ``origin`` (allowed) read the answer. No credentials: only a
    token in `Authorization` signs in here, never a cookie."""
    response["Access-Control-Allow-Origin"] = origin
    response["Access-Control-Expose-Headers"] = ", ".join(CORS_EXPOSED_HEADERS)
    patch_vary_headers(response, ("Origin",))
    return response


class _AcceptOnly:
    """What the SDK's `check_accept_headers` reads of a request: its Accept header."""

    def __init__(self, accept: str | None) -> None:
        self.headers = {"accept": accept} if accept is not None else {}


def _is_plain_call(request: Request, message: dict[str, Any]) -> bool:
    """A handshake-era, stateless JSON `tools/call` of one of the tools, with nothing
    else asked: answered here from the table (`agentdocs.mcp.tools.call_tool`), without
    the SDK's session machinery (an event loop, a session manager, its streams)."""
    version = _header(request, PROTOCOL_VERSION_HEADER)
    # The SDK's own reading of Accept (its `headers.get("accept")` is all it asks).
    accepts_json, _ = check_accept_headers(cast(Any, _AcceptOnly(_header(request, "Accept"))))
    params = message.get("params")
    return (
        message.get("method") == "tools/call"
        and "id" in message
        and isinstance(params, dict)
        and params.get("name") in BY_NAME
        and set(params) <= {"name", "arguments"}
        and (version is None or version in HANDSHAKE_PROTOCOL_VERSIONS)
        # The SDK's JSON mode refuses (406) a request that does not accept JSON.
        and accepts_json
    )


def _tool_and_arguments(message: dict[str, Any]) -> tuple[str, Any]:
    params = message["params"]
    return str(params["name"]), params.get("arguments")


def _answer(request: Request, message_id: Any, result: CallToolResult) -> HttpResponse:
    """The JSON-RPC response, the result shaped for the request's protocol version as
    the SDK's own serializer shapes it (as its server does): `shaped_result`."""
    version = _header(request, PROTOCOL_VERSION_HEADER) or DEFAULT_NEGOTIATED_VERSION
    body = {"jsonrpc": "2.0", "id": message_id, "result": shaped_result(result, version)}
    return HttpResponse(JSONRenderer().render(body), content_type="application/json")


def shaped_result(result: CallToolResult, version: str) -> dict[str, Any]:
    """``result`` as the SDK's serializer shapes it for ``version``
    (`serialize_server_result` of its `model_dump`). The two shapes every call of a
    tool here answers (one text, with the result beside it or the error's fields in
    `_meta`) are written directly, in the serializer's order, for a handshake-era
    version whose shape of them is known (`tests/api/test_mcp_http.py` holds each to
    the serializer's bytes); anything else is the SDK's serializer's."""
    text = _one_plain_text(result)
    if text is not None and version in HANDSHAKE_PROTOCOL_VERSIONS:
        structured, meta = result.structured_content, result.meta
        if not result.is_error and meta is None and _text_result(structured):
            return {
                "content": [{"text": text, "type": "text"}],
                "isError": False,
                "structuredContent": {"result": cast(dict[str, str], structured)["result"]},
            }
        if result.is_error and structured is None and _error_meta(meta):
            return {
                "_meta": meta,
                "content": [{"text": text, "type": "text"}],
                "isError": True,
            }
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return protocol_methods.serialize_server_result("tools/call", version, dumped)


def _one_plain_text(result: CallToolResult) -> str | None:
    """The text of ``result``'s one content item, when it is a bare text."""
    if len(result.content) != 1:
        return None
    item = result.content[0]
    if type(item) is not TextContent or item.annotations is not None or item.meta is not None:
        return None
    return item.text


def _text_result(structured: dict[str, Any] | None) -> bool:
    return (
        structured is not None
        and structured.keys() == {"result"}
        and type(structured["result"]) is str
    )


def _error_meta(meta: dict[str, Any] | None) -> bool:
    return meta is not None and meta.keys() == {ERROR_META_KEY} and _plain(meta)


def _plain(value: Any) -> bool:
    """Plain JSON data, which the serializer dumps as it is."""
    if value is None or type(value) in (str, int, bool):
        return True
    if type(value) is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    if type(value) is list:
        return all(_plain(item) for item in value)
    return False


def _reading_process(request: Request, params: Any) -> str | None:
    """The process a `skills/get` is recorded for: the one its `_meta` names, else the
    session's (`Mcp-Session-Id`) when the token may bind (a reader's get of a session is
    served unrecorded; one that names its process is refused as binding would be)."""
    named = process_of(params)
    if named is not None:
        return named
    session = request.headers.get("Mcp-Session-Id")
    return session if session and token_allows(request, Scope.RENDER.value) else None


def _skills_answer(api: ServiceProjectApi, message: dict[str, Any]) -> JsonResponse:
    """`skills/list` or `skills/get` (MCP's Skills extension), answered from the
    backend: a skill not served here, or a URI that names none, is -32602."""
    try:
        if message["method"] == "skills/list":
            result = skills_list(api)
        else:
            params = message.get("params")
            result = skills_get(api, params, process=_reading_process(api.request, params))
    except UnknownSkill as unknown:
        error = {"code": INVALID_PARAMS, "message": str(unknown), "data": {"field": "uri"}}
    except Refusal as refused:
        # The request's fault (a 4xx: not there, invalid, not allowed, too many): -32602.
        code = INVALID_PARAMS if 400 <= refused.status < 500 else INTERNAL_ERROR
        error = {"code": code, "message": str(refused), "data": refused.as_dict()}
    else:
        return JsonResponse({"jsonrpc": "2.0", "id": message["id"], "result": result})
    return JsonResponse({"jsonrpc": "2.0", "id": message["id"], "error": error})


@extend_schema(exclude=True)  # JSON-RPC, not REST: described in docs/mcp.md
class McpView(APIView):
    authentication_classes = [BearerTokenAuthentication]
    permission_classes = [IsAuthenticated, TokenScopePermission]
    required_scopes = {"POST": Scope.READ}
    renderer_classes = [JSONRenderer]
    content_negotiation_class = SdkJudgesAccept

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        """The transport's rules, before authentication: a browser page's `Origin` must be
        allowed (else 403), a CORS preflight is answered, GET and DELETE are 405."""
        origin = request.META.get("HTTP_ORIGIN")
        if origin is not None and origin not in settings.AGENTDOCS_MCP_ALLOWED_ORIGINS:
            return _origin_refusal(origin)
        if request.method == "OPTIONS":
            response: HttpResponseBase = _preflight()
        elif request.method in ("GET", "DELETE", "HEAD"):
            response = _no_stream(str(request.method))
        else:
            response = super().dispatch(request, *args, **kwargs)
        return _with_cors(response, origin) if origin is not None else response

    def post(
        self, request: Request, tenant: str | None = None, project: str | None = None
    ) -> HttpResponse:
        tenant, project = _where(request, tenant, project)
        # Before any protocol work: a tenant or project the token's user is not in is
        # the REST API's 404, as for any request of it. The access row read with the
        # token stays for the tool's own check: nothing is written before it.
        request_project_access(request, tenant, project, keep_prefetched=True)
        try:
            message = _message_of(request)
        except JsonRpcRefusal as refusal:
            return refusal.response()
        unserved = _unserved(message)
        if unserved is not None:
            return unserved
        label = _label(request)
        api = ServiceProjectApi(
            request,
            tenant=tenant,
            project=project,
            label=label,
            recipe=_recipe(request),
        )
        if message.get("method") in SKILLS_METHODS and "id" in message:
            return _skills_answer(api, message)
        if _is_plain_call(request, message):
            return _answer(request, message["id"], call_tool(api, *_tool_and_arguments(message)))
        status, headers, body = async_to_sync(_serve)(api, _asgi_scope(request), request.body)
        response = HttpResponse(body, status=status)
        for name, value in headers:
            if name.decode("latin-1").lower() not in HEADERS_NOT_PASSED_ON:
                response[name.decode("latin-1")] = value.decode("latin-1")
        return response

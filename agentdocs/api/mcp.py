"""`/mcp/`: the MCP tools of `agentdocs mcp`, served by the web app over Streamable HTTP.

    POST /mcp/?tenant=T&project=P          (or /mcp/T/P/, or the headers
    Authorization: Bearer <API token>       X-Agentdocs-Tenant / X-Agentdocs-Project)

The same server as the stdio command (`agentdocs.cli.mcp.build_server`: the tools,
their arguments, results and errors, the resources and the prompt), with one
difference of plumbing: its `ProjectApi` sends its REST requests to this
application in-process (`agentdocs.api.in_process`) with the caller's token, so
every tool call is checked exactly as the same REST request would be (access,
scopes, a token bound to another tenant, rate limits) and answers the same errors:
a tenant the token's user is not in is a tool error `not_found`, as over stdio.

The transport is stateless and answers JSON, which is what a synchronous WSGI worker
can serve: each POST carries one JSON-RPC message and gets its answer (or 202)
back, with no session to keep between requests; GET (the server-to-client event
stream) and DELETE (ending a session) answer 405, as the specification provides
for a server without them. The MCP SDK handles the protocol: each request runs its
stateless session manager on an event loop of its own (`async_to_sync`), and the
tools' REST calls come back to the request's thread, where Django's database
connection is. Building a server (the tools' schemas) costs more than serving a call,
so each process keeps one per project (`_server_for`), whose backend is the current
request's `ProjectApi` (`RequestProjectApi`).

Only API tokens sign in here, never the session cookie: no browser page can make
these requests for a signed-in user, so the view needs no CSRF token. A missing,
invalid, revoked or expired token is 401 with `WWW-Authenticate: Bearer`; any token
with the `read` scope may connect, and each tool needs what its REST operation needs.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from contextvars import ContextVar
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

from asgiref.sync import async_to_sync, sync_to_async
from django.http import HttpResponse
from django.urls import get_script_prefix
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions
from rest_framework.authentication import get_authorization_header
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from agentdocs.api.access import TokenScopePermission
from agentdocs.api.authentication import TokenAccessAuthentication
from agentdocs.api.in_process import InProcessAdapter
from agentdocs.api.renderers import JSONRenderer
from agentdocs.cli.base import ServerClient
from agentdocs.cli.mcp import ProjectApi, build_server
from agentdocs.models import Scope

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP

TENANT_HEADER = "X-Agentdocs-Tenant"
PROJECT_HEADER = "X-Agentdocs-Project"
HEADERS_NOT_PASSED_ON = {"content-length", "transfer-encoding", "connection"}
# Servers kept per process: one per (site, tenant, project) in use.
SERVERS_KEPT = 64

_request_api: ContextVar[ProjectApi] = ContextVar("agentdocs_mcp_request_api")


class BearerTokenAuthentication(TokenAccessAuthentication):
    """API tokens only; a refusal names the Bearer scheme, as MCP clients expect."""

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="agentdocs"'


async def in_request_thread(function: Any, *args: Any) -> Any:
    """Run a tool's REST call in the thread serving the `/mcp/` request (its database
    connection, and no running event loop, which Django's ORM refuses)."""
    return await sync_to_async(function, thread_sensitive=True)(*args)


def _where(request: Request, tenant: str | None, project: str | None) -> tuple[str, str]:
    """The tenant and project: from the path, else the query, else the headers."""
    found: dict[str, str] = {}
    for name, given, header in (
        ("tenant", tenant, TENANT_HEADER),
        ("project", project, PROJECT_HEADER),
    ):
        value = given or request.query_params.get(name) or request.headers.get(header)
        if not value:
            raise exceptions.ValidationError(
                {
                    name: f"Name the {name}: /mcp/?tenant=T&project=P, /mcp/T/P/ or the "
                    f"{header} header."
                }
            )
        found[name] = value
    return found["tenant"], found["project"]


def _project_api(request: Request, tenant: str, project: str) -> ProjectApi:
    """The stdio server's backend, sending its requests here, with the caller's token."""
    _, key = get_authorization_header(request).split()
    server_url = request.build_absolute_uri(get_script_prefix()).rstrip("/")
    client = ServerClient(server_url, key.decode("ascii"))
    adapter = InProcessAdapter(request._request)
    client.session.mount("http://", adapter)
    client.session.mount("https://", adapter)
    return ProjectApi(client=client, server_url=server_url, tenant=tenant, project=project)


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
def _server_for(server_url: str, tenant: str, project: str) -> FastMCP:
    from mcp.server.transport_security import TransportSecuritySettings

    backend = RequestProjectApi(server_url=server_url, tenant=tenant, project=project)
    return build_server(
        cast(ProjectApi, backend),
        call=in_request_thread,
        stateless_http=True,
        json_response=True,
        # Django has checked the Host (ALLOWED_HOSTS); no cookie signs in here.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


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
    api: ProjectApi, scope: dict[str, Any], body: bytes
) -> tuple[int, list[Any], bytes]:
    """One HTTP request through a stateless session manager of the SDK for ``api``'s
    project: the answer's status, headers and body."""
    import anyio
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    _request_api.set(api)  # in this task's context, which the server's tasks inherit
    server = _server_for(api.server_url, api.tenant, api.project)
    # A session manager runs once; the server (FastMCP's lowlevel one) serves any number.
    manager = StreamableHTTPSessionManager(
        app=server._mcp_server,
        json_response=True,
        stateless=True,
        security_settings=server.settings.transport_security,
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


@extend_schema(exclude=True)  # JSON-RPC, not REST: described in the README's MCP section
class McpView(APIView):
    authentication_classes = [BearerTokenAuthentication]
    permission_classes = [IsAuthenticated, TokenScopePermission]
    required_scopes = {"POST": Scope.READ}
    renderer_classes = [JSONRenderer]

    def post(
        self, request: Request, tenant: str | None = None, project: str | None = None
    ) -> HttpResponse:
        tenant, project = _where(request, tenant, project)
        api = _project_api(request, tenant, project)
        status, headers, body = async_to_sync(_serve)(api, _asgi_scope(request), request.body)
        response = HttpResponse(body, status=status)
        for name, value in headers:
            if name.decode("latin-1").lower() not in HEADERS_NOT_PASSED_ON:
                response[name.decode("latin-1")] = value.decode("latin-1")
        return response

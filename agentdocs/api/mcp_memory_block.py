"""`/mcp/`'s fast path: a stateless `tools/call` of `get_memory_block`, answered as the
MCP SDK would answer it, at the cost of the REST render.

Agents call `get_memory_block` at the start of every task, so it is the tool call that
counts. Through the SDK it costs an event loop, a session manager, the JSON-RPC pipeline
and an in-process REST request per call (0.19x ping's throughput); here the one JSON-RPC
message is read, the arguments are validated by the tool's own schema (the SDK's), the
token's scope is checked as the REST view checks it, and the REST render itself runs
(`MemoryBlockView.render_turn`: access, the input's rules, the rate limits). A refusal
is the tool error the SDK path gives (`agentdocs.cli.mcp.tool_error_result`) with the
REST error's code, sentence and field, as that path gets them from the API.

Anything else (another method or tool, a 2026-07-28 envelope or any `_meta`, arguments
the tool's schema refuses, an `Accept` the SDK would refuse) is left to the SDK: `None`.
"""

from __future__ import annotations

from typing import Any, cast

from django.http import HttpResponse
from mcp.server.streamable_http import check_accept_headers
from mcp.types import DEFAULT_NEGOTIATED_VERSION, CallToolResult, TextContent
from mcp.types import methods as protocol_methods
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from rest_framework.request import Request

from agentdocs.api.access import TokenScopePermission
from agentdocs.api.errors import exception_handler
from agentdocs.api.memory_block import MemoryBlockView
from agentdocs.api.renderers import JSONRenderer
from agentdocs.cli.mcp import ApiError, memory_block_payload, tool_error_result

TOOL = "get_memory_block"
PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"
_SCOPE_CHECK = TokenScopePermission()


def _is_plain_call(request: Request, message: dict[str, Any]) -> bool:
    """A handshake-era, stateless JSON `tools/call` of the tool with nothing else asked."""
    version = request.headers.get(PROTOCOL_VERSION_HEADER)
    # The SDK's own reading of Accept (its `headers.get("accept")` is all it asks).
    accepts_json, _ = check_accept_headers(cast(Any, request))
    params = message.get("params")
    return (
        message.get("method") == "tools/call"
        and "id" in message
        and isinstance(params, dict)
        and params.get("name") == TOOL
        and set(params) <= {"name", "arguments"}
        and (version is None or version in HANDSHAKE_PROTOCOL_VERSIONS)
        # The SDK's JSON mode refuses (406) a request that does not accept JSON.
        and accepts_json
    )


def _answer(request: Request, message_id: Any, result: CallToolResult) -> HttpResponse:
    """The JSON-RPC response, the result shaped for the request's protocol version by the
    SDK's own serializer (as its server does)."""
    version = request.headers.get(PROTOCOL_VERSION_HEADER) or DEFAULT_NEGOTIATED_VERSION
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    shaped = protocol_methods.serialize_server_result("tools/call", version, dumped)
    body = {"jsonrpc": "2.0", "id": message_id, "result": shaped}
    return HttpResponse(JSONRenderer().render(body), content_type="application/json")


def memory_block_call(
    request: Request,
    message: dict[str, Any],
    *,
    tenant: str,
    project: str,
    server: Any,
    label: str | None = None,
) -> HttpResponse | None:
    """The answer to ``message`` when it is a plain `get_memory_block` call, else None.
    ``server`` is the project's MCP server (`agentdocs.api.mcp._server_for`), whose tool
    schema the arguments must pass; ``label`` is the client's (its URL's), read unless
    the call names one."""
    if not _is_plain_call(request, message):
        return None
    tool = server._tool_manager.get_tool(TOOL)
    arguments = message["params"].get("arguments") or {}
    if tool is None or not isinstance(arguments, dict):
        return None
    try:
        validated = tool.fn_metadata.validate_arguments(arguments)
    except ValidationError:
        return None  # the SDK's own error text
    payload = memory_block_payload(**validated)
    if label and "label" not in payload:
        payload["label"] = label
    try:
        # What the REST view's permission would refuse (a token without `render`).
        _SCOPE_CHECK.has_permission(request, MemoryBlockView)
        block, _, _ = MemoryBlockView.render_turn(request, tenant, project, payload)
    except Exception as error:
        refusal = exception_handler(error, {"request": request})
        if refusal is None or not isinstance(refusal.data, dict):
            raise
        data = refusal.data
        refused = ApiError(
            str(data.get("error", "error")),
            str(data.get("detail", "")),
            field=data.get("field"),
            status=refusal.status_code,
        )
        return _answer(request, message["id"], tool_error_result(refused))
    text = TextContent(type="text", text=block.text)
    result = CallToolResult(
        content=[text], structured_content={"result": block.text}, is_error=False
    )
    return _answer(request, message["id"], result)

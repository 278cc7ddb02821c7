"""The MCP server of one project: the SDK's low-level server with handlers from the
table (`agentdocs.mcp.tools`), the project's resources and the `house-rules` prompt.

`agentdocs mcp` runs it over stdio; the web app's `/mcp/` serves it through the SDK's
stateless Streamable HTTP transport. Either gives its own ``api`` (the `ProjectApi`
backend) and its own ``call`` (how a blocking backend call runs from the event loop).
No subscriptions are offered: the server sends no change notifications.

Errors: bad arguments and refusals of a tool call are tool errors (`call_tool`); an
unknown tool or prompt is the JSON-RPC error -32602 (invalid params); a resource that
is not there -32002 (resource not found, as the MCP specification names it), one whose
URI could leave the project -32602 naming `invalid_path`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    Prompt,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
)

from agentdocs.core.mcp_instructions import compose_instructions
from agentdocs.mcp.api import ProjectApi, Refusal, SessionStart
from agentdocs.mcp.paths import InvalidPath, resource_document_path
from agentdocs.mcp.skills_extension import SKILLS_EXTENSION, parse_skill_uri
from agentdocs.mcp.tools import TOOLS, UnknownTool, call_tool

# The MCP specification's error for a resource that is not there.
RESOURCE_NOT_FOUND = -32002
PROMPT = Prompt(
    name="house-rules", title="House rules", description="The project's Memory Block (preview)"
)
SESSION_STARTS = frozenset({"initialize", "server/discover"})
SESSION_HEADER = "mcp-session-id"

# How a handler runs a blocking call of the backend (``call(function, *args)``).
BlockingCall = Callable[..., Awaitable[Any]]


async def in_worker_thread(function: Callable[..., Any], *args: Any) -> Any:
    """The stdio server's way: a worker thread, so the event loop keeps serving."""
    import anyio

    return await anyio.to_thread.run_sync(function, *args)


def agentdocs_version() -> str:
    """This installation's version, as `serverInfo.version` names it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentdocs")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def build_server(
    api: ProjectApi,
    *,
    call: BlockingCall = in_worker_thread,
    instructions: str | None = None,
    per_session: bool = False,
) -> Server[Any]:
    """The MCP server of ``api``'s project. ``instructions`` are the session's
    (`ProjectApi.session_start`, which `agentdocs mcp` asks once before it serves); with
    ``per_session`` each `initialize` and `server/discover` starts a session of its own
    and answers its instructions (the web app's server, which serves every session)."""
    prefix = f"agentdocs://{api.tenant}/{api.project}/"
    memory_block_uri = prefix + "memory-block"
    documents_prefix = prefix + "documents/"

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=[tool.listing for tool in TOOLS])

    async def run_tool(ctx: Any, params: Any) -> CallToolResult:
        try:
            result: CallToolResult = await call(call_tool, api, params.name, params.arguments)
        except UnknownTool as unknown:
            raise MCPError(INVALID_PARAMS, str(unknown), {"name": params.name}) from None
        return result

    async def list_resources(ctx: Any, params: Any) -> ListResourcesResult:
        try:
            documents = await call(api.documents)
        except Refusal as refused:
            raise MCPError(INTERNAL_ERROR, str(refused), refused.as_dict()) from None
        block = Resource(
            uri=memory_block_uri,
            name="memory-block",
            title="Memory Block",
            description=f"The Memory Block of {api.tenant}/{api.project} (preview: the full "
            "block, no read state touched)",
            mime_type="text/markdown",
        )
        return ListResourcesResult(
            resources=[
                block,
                *(
                    Resource(
                        uri=documents_prefix + quote(document["path"], safe="/"),
                        name=document["path"],
                        description=f"version {document['version']}, updated {document['updated']}",
                        mime_type="text/markdown",
                        size=document["size"],
                    )
                    for document in documents
                ),
            ]
        )

    async def list_templates(ctx: Any, params: Any) -> ListResourceTemplatesResult:
        template = ResourceTemplate(
            uri_template=documents_prefix + "{path}",
            name="document",
            title="Document",
            description=f"A document of {api.tenant}/{api.project}, current version",
            mime_type="text/markdown",
        )
        return ListResourceTemplatesResult(resource_templates=[template])

    async def _skill_file(in_skill: tuple[str, str], address: str) -> tuple[str, str]:
        """A file of an offered skill (`skill://<name>/<path>`, MCP's Skills extension)."""
        name, path = in_skill
        skill = await call(api.skill, name)
        for file in skill["files"]:
            if file["path"] == path:
                return file["content"], "text/markdown" if path.endswith(".md") else "text/plain"
        detail = f"Resource not found: {address} (the skill {name!r} has no file {path!r})"
        raise MCPError(RESOURCE_NOT_FOUND, detail, {"uri": address})

    async def read_resource(ctx: Any, params: Any) -> ReadResourceResult:
        address = str(params.uri)
        mime_type = "text/markdown"
        not_found = (
            f"Resource not found: {address} (this server serves {memory_block_uri} and "
            f"{documents_prefix}{{path}})"
        )
        try:
            if address == memory_block_uri:
                text = await call(api.memory_block_preview)
            elif (path := resource_document_path(address, documents_prefix)) is not None:
                text = (await call(api.document, path))["body"]
            elif (in_skill := parse_skill_uri(address)) is not None:
                text, mime_type = await _skill_file(in_skill, address)
            else:
                raise MCPError(RESOURCE_NOT_FOUND, not_found, {"uri": address})
        except InvalidPath as refused:
            detail = f"{refused.detail} ({refused.code}, field {refused.field})"
            raise MCPError(INVALID_PARAMS, detail, {"uri": address}) from None
        except Refusal as refused:
            if refused.error == "not_found":
                data = {"uri": address, **refused.as_dict()}
                raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {refused}", data) from None
            raise MCPError(INTERNAL_ERROR, str(refused), refused.as_dict()) from None
        contents = TextResourceContents(uri=address, text=text, mime_type=mime_type)
        return ReadResourceResult(contents=[contents])

    async def list_prompts(ctx: Any, params: Any) -> ListPromptsResult:
        return ListPromptsResult(prompts=[PROMPT])

    async def get_prompt(ctx: Any, params: Any) -> GetPromptResult:
        if params.name != PROMPT.name:
            detail = f"Unknown prompt: {params.name} (this server has {PROMPT.name})"
            raise MCPError(INVALID_PARAMS, detail, {"name": params.name})
        try:
            text = await call(api.memory_block_preview)
        except Refusal as refused:
            raise MCPError(INTERNAL_ERROR, str(refused), refused.as_dict()) from None
        message = PromptMessage(role="user", content=TextContent(type="text", text=text))
        return GetPromptResult(description=PROMPT.description, messages=[message])

    server: Server[Any] = Server(
        "agentdocs",
        title="agentdocs",
        version=agentdocs_version(),
        instructions=instructions
        or compose_instructions(
            tenant=api.tenant, project=api.project, process=None, house_rules=""
        ),
        on_list_tools=list_tools,
        on_call_tool=run_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    if per_session:
        server.middleware.append(_session_start_middleware(api, call))
    return server


def _session_start_middleware(api: ProjectApi, call: BlockingCall) -> Any:
    """What gives each session that starts (`initialize`, `server/discover`) its own
    instructions, bound as the client's session (its `Mcp-Session-Id`) or a new process."""

    async def session_start(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method not in SESSION_STARTS or not isinstance(result, dict):
            return result
        # The web app's server answers the Skills extension's methods (`/mcp/`'s view).
        capabilities = result.get("capabilities")
        if isinstance(capabilities, dict):
            capabilities.setdefault("extensions", {})[SKILLS_EXTENSION] = {}
        headers = getattr(ctx.request, "headers", None) or {}
        session = headers.get(SESSION_HEADER) or None
        try:
            started: SessionStart = await call(api.session_start, session)
            result["instructions"] = started["instructions"]
        except Refusal as error:
            # The session goes on (every tool call will meet the same refusal as a tool
            # error); its instructions say what was refused.
            result["instructions"] = compose_instructions(
                tenant=api.tenant,
                project=api.project,
                process=None,
                house_rules="",
                note=f"agentdocs refused this session's start: {error}",
            )
        return result

    return session_start


def run_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on stdin/stdout until the client closes them."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)

"""`agentdocs mcp`: the house rules of one project as a Model Context Protocol server.

    agentdocs mcp --tenant T --project P [--url URL | --server URL] [--token TOKEN]

An agent client (Claude Code, Codex, Cursor, Gemini CLI, anything built on an MCP
SDK) starts this command and talks MCP to it over stdin/stdout; the command talks to
the agentdocs server through the REST API with an API token, as the other commands
do. It serves

- tools: `get_memory_block`, `list_documents`, `read_document`, `search_documents`,
  `propose_change` (a change request for a writer of the project to review) and
  `bind_run`;
- resources: `agentdocs://T/P/memory-block` (the preview) and
  `agentdocs://T/P/documents/{path}`, one listed per document of the project;
- the prompt `house-rules`: the Memory Block (preview) as a prompt message.

`get_memory_block` never blocks the agent: when the server cannot be reached, times
out (`--timeout`, default 5 s) or answers 5xx, it answers with the last good block
kept on disk and logs one warning line on stderr (`agentdocs.client`, docs/cli.md).

A refusal of the server comes back as an MCP tool error whose text is our error
code and detail (the REST error `{error, detail, field}`) and whose structured
content is that error; nothing a tool meets stops the server.

The MCP SDK is imported when the command runs, not when the CLI starts: it costs
about 0.4 s, which every other subcommand would pay. No Django here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import requests

# pydantic, which the SDK builds tool schemas with, needs this TypedDict before Python 3.12.
from typing_extensions import TypedDict

from agentdocs.cli.base import (
    EXIT_OK,
    EXIT_USAGE,
    ServerClient,
    add_server_arguments,
    command,
    require,
)
from agentdocs.cli.memory_block import add_offline_arguments, resilient_blocks
from agentdocs.client.blocks import DEFAULT_TIMEOUT_SECONDS, NoCachedBlock, ResilientBlocks
from agentdocs.core.mcp_instructions import compose_instructions
from agentdocs.mcp.paths import InvalidPath, document_path, resource_document_path

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.types import CallToolResult

# A project's listing is followed for at most this many pages of PAGE_SIZE documents.
PAGE_SIZE = 200
MAX_LIST_PAGES = 25
# What one search answers at most: one page of the server's search.
MAX_SEARCH_MATCHES = 50


class ApiError(Exception):
    """A refusal of the agentdocs server (its JSON error), or no answer at all."""

    def __init__(self, error: str, detail: str, *, field: str | None = None, status: int) -> None:
        super().__init__(detail)
        self.error = error
        self.detail = detail
        self.field = field
        self.status = status

    def as_dict(self) -> dict[str, object]:
        return {"error": self.error, "detail": self.detail, "field": self.field}

    def __str__(self) -> str:
        where = f", field {self.field}" if self.field else ""
        http = f"; HTTP {self.status}" if self.status else ""
        return f"{self.detail} ({self.error}{where}{http})"

    @classmethod
    def from_response(cls, response: requests.Response) -> ApiError:
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and "detail" in body:
            return cls(
                str(body.get("error", "error")),
                str(body["detail"]),
                field=body.get("field"),
                status=response.status_code,
            )
        return cls(
            "http_error",
            f"the server answered HTTP {response.status_code} {response.reason}",
            status=response.status_code,
        )


class DocumentSummary(TypedDict):
    path: str
    version: int
    size: int
    updated: str


class DocumentText(TypedDict):
    path: str
    body: str
    version: int
    sha256: str


class SearchMatch(TypedDict):
    path: str
    version: int
    snippet: str


class SearchResult(TypedDict):
    matches: list[SearchMatch]
    documents_searched: int
    complete: bool


class ProposedChange(TypedDict):
    id: int
    state: str
    path: str
    base_version: int
    url: str


class SessionStart(TypedDict):
    process: str | None
    instructions: str
    record: int | None


class BoundRun(TypedDict):
    id: int
    problem_count: int
    url: str
    problems: list[dict[str, Any]]


def memory_block_payload(
    *,
    process: str,
    recipe: str | None,
    profile: str | None,
    paths: list[str] | None,
    reset: bool,
    label: str | None = None,
) -> dict[str, object]:
    """The REST render's input for a `get_memory_block` call's arguments."""
    payload: dict[str, object] = {"process": process, "reset": reset}
    if recipe:
        payload["recipe"] = recipe
    if profile:
        payload["profile"] = profile
    if paths:
        payload["paths"] = paths
    if label:
        payload["label"] = label
    return payload


@dataclass(frozen=True)
class ProjectApi:
    """The REST operations the MCP server needs, for one project, with our errors."""

    client: ServerClient
    server_url: str
    tenant: str
    project: str
    # `agentdocs mcp`'s renders: the cached block when the server is down (None: none).
    blocks: ResilientBlocks | None = None
    # `agentdocs mcp --label`: the label renders read by unless a call names one.
    label: str | None = None

    def _url(self, rest: str) -> str:
        return self.client.base + self.client.project_path(self.tenant, self.project, rest)

    def _send(
        self,
        method: str,
        url: str,
        *,
        json: object = None,
        params: dict[str, str] | None = None,
        accept: str = "application/json",
        ok: tuple[int, ...] = (200,),
    ) -> requests.Response:
        try:
            response = self.client.session.request(
                method,
                url,
                json=json,
                params=params,
                headers={"Accept": accept},
                timeout=self.client.timeout,
            )
        except requests.RequestException as error:
            raise ApiError("unreachable", f"cannot reach {url}: {error}", status=0) from None
        if response.status_code not in ok:
            raise ApiError.from_response(response)
        return response

    def _json(self, response: requests.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            raise ApiError(
                "not_json",
                f"the server answered {response.status_code} with something that is not JSON",
                status=response.status_code,
            ) from None

    def memory_block(
        self,
        *,
        process: str,
        recipe: str | None,
        profile: str | None,
        paths: list[str] | None,
        reset: bool,
        label: str | None = None,
    ) -> str:
        label = label or self.label
        payload = memory_block_payload(
            process=process, recipe=recipe, profile=profile, paths=paths, reset=reset
        )
        if self.blocks is not None:
            try:
                turn = self.blocks.turn(
                    payload=payload, recipe=recipe, profile=profile, label=label, as_text=True
                )
            except NoCachedBlock as missing:
                raise ApiError("unavailable", str(missing), status=0) from None
            return turn.text
        if label:
            payload["label"] = label
        response = self._send("POST", self._url("memory-block/"), json=payload, accept="text/plain")
        return response.content.decode("utf-8")

    def memory_block_preview(self) -> str:
        response = self._send("GET", self._url("memory-block/"), accept="text/plain")
        return response.content.decode("utf-8")

    def documents(self, prefix: str = "") -> list[DocumentSummary]:
        """Every document under ``prefix``, page after page, up to MAX_LIST_PAGES pages."""
        url: str | None = self._url("documents/")
        params: dict[str, str] | None = {"prefix": prefix, "page_size": str(PAGE_SIZE)}
        found: list[DocumentSummary] = []
        for _ in range(MAX_LIST_PAGES):
            if url is None:
                break
            page = self._json(self._send("GET", url, params=params))
            found.extend(
                DocumentSummary(
                    path=item["path"],
                    version=item["version"],
                    size=item["size"],
                    updated=item["updated_at"],
                )
                for item in page["results"]
            )
            # `next` carries the query already.
            url, params = page.get("next"), None
        return found

    def document(self, path: str, version: int | None = None) -> DocumentText:
        quoted = quote(path, safe="/")
        if version is None:
            data = self._json(self._send("GET", self._url(f"documents/{quoted}")))
        else:
            data = self._json(
                self._send("GET", self._url(f"history/{quoted}"), params={"version": str(version)})
            )
        return DocumentText(
            path=data["path"], body=data["body"], version=data["version"], sha256=data["sha256"]
        )

    def search(self, query: str) -> SearchResult:
        """The server's search (`GET .../search/?project=`, its index on PostgreSQL), one
        page of at most MAX_SEARCH_MATCHES matches: no document body is fetched."""
        tenant_path = f"tenants/{quote(self.tenant, safe='')}/"
        found = self._json(
            self._send(
                "GET",
                self.client.base + tenant_path + "search/",
                params={
                    "q": query,
                    "project": self.project,
                    "page_size": str(MAX_SEARCH_MATCHES),
                },
            )
        )
        listing = self._json(self._send("GET", self._url("documents/"), params={"page_size": "1"}))
        matches = [
            SearchMatch(
                path=hit["path"],
                version=hit["version"],
                snippet=" ".join(str(hit["snippet"]).split()),
            )
            for hit in found["results"]
        ]
        complete = found.get("next") is None and found.get("count_exact", True)
        return SearchResult(
            matches=matches, documents_searched=listing["count"], complete=bool(complete)
        )

    def propose(
        self, path: str, body: str, reason: str, base_version: int | None
    ) -> ProposedChange:
        """A change request for ``path``; based on the current version unless told."""
        if base_version is None:
            base_version = self.document(path)["version"]
        change = self._json(
            self._send(
                "POST",
                self._url("changes/"),
                json={"path": path, "body": body, "base_version": base_version, "reason": reason},
                ok=(201,),
            )
        )
        return ProposedChange(
            id=change["id"],
            state=change["state"],
            path=change["path"],
            base_version=change["base_version"],
            url=change["url"],
        )

    def session_start(self, session: str | None = None) -> SessionStart:
        """The instructions of a new session, bound (`POST .../mcp-sessions/`); ApiError
        when the token or the project is refused. A token that may read but not render
        (no `render` scope) gets the instructions without the house rules, which it could
        not render either, and no record."""
        payload = {"session": session} if session else {}
        if self.label:
            payload["label"] = self.label
        try:
            started = self._json(
                self._send("POST", self._url("mcp-sessions/"), json=payload, ok=(201,))
            )
        except ApiError as error:
            if error.error != "insufficient_scope":
                raise
            # The token and the project all the same, as any tool would meet them.
            self._send("GET", self._url("documents/"), params={"page_size": "1"})
            note = (
                "This session's token may read but not render (it has no `render` scope), "
                "so the house rules are not included here and get_memory_block is refused."
            )
            text = compose_instructions(
                tenant=self.tenant, project=self.project, process=None, house_rules="", note=note
            )
            return SessionStart(process=None, instructions=text, record=None)
        return SessionStart(
            process=started["process"],
            instructions=started["instructions"],
            record=started["record"],
        )

    def bind(self, process: str, manifest: dict[str, Any] | None) -> BoundRun:
        payload: dict[str, object] = {"process": process}
        if manifest is not None:
            payload["manifest"] = manifest
        record = self._json(self._send("POST", self._url("bindings/"), json=payload, ok=(201, 422)))
        page = (
            f"{self.server_url.rstrip('/')}/t/{quote(self.tenant, safe='')}/"
            f"{quote(self.project, safe='')}/bindings/{record['id']}/"
        )
        return BoundRun(
            id=record["id"],
            problem_count=record["problem_count"],
            url=page,
            problems=record.get("problems", []),
        )


def checked_path(path: str, *, field: str = "path") -> str:
    """``path`` when it is a document path of the project (`agentdocs.mcp.paths`), else
    the `invalid_path` ApiError, before any request is made."""
    try:
        return document_path(path, field=field)
    except InvalidPath as refused:
        raise ApiError(refused.code, refused.detail, field=refused.field, status=0) from None


# The key of `_meta` under which a refused tool call carries the REST error's fields.
ERROR_META_KEY = "agentdocs/error"


def agentdocs_version() -> str:
    """This installation's version, as `serverInfo.version` names it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentdocs")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def tool_error_result(error: ApiError) -> CallToolResult:
    """A refused tool call as every client shows it: `isError` with the error's sentence,
    code and field as text. No `structuredContent`: it would have to validate against
    the tool's `outputSchema` (the result's shape), which an error does not have, and
    clients that check it (the TypeScript SDK, MCP Inspector) would show a schema error
    instead of the sentence. The REST error's fields ride in `_meta`, for programs."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=str(error))],
        is_error=True,
        _meta={ERROR_META_KEY: error.as_dict()},
    )


# How a tool runs a blocking call of the REST API (``call(function, *args)``).
BlockingCall = Callable[..., Awaitable[Any]]


async def in_worker_thread(function: Callable[..., Any], *args: Any) -> Any:
    """The stdio server's way: a worker thread, so the event loop keeps serving."""
    import anyio

    return await anyio.to_thread.run_sync(function, *args)


def build_server(
    api: ProjectApi,
    *,
    call: BlockingCall = in_worker_thread,
    instructions: str | None = None,
    per_session: bool = False,
) -> MCPServer:
    """The MCP server of ``api``'s project: its tools, resources and prompt.

    ``api`` is the backend every tool goes through: over HTTP for `agentdocs mcp`,
    in-process for the web app's `/mcp/` (`agentdocs.api.mcp`), which also passes
    its own ``call``. ``instructions`` are the session's (`ProjectApi.session_start`,
    which `agentdocs mcp` asks once before it serves); with ``per_session`` each
    `initialize` and `server/discover` starts a session of its own and answers its
    instructions (the web app's server, which serves every session of the project).
    """
    from mcp.server.lowlevel.helper_types import ReadResourceContents
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp.types import (
        InputRequiredResult,
        Resource,
        ResourceTemplate,
        ToolAnnotations,
    )

    def reads(title: str, *, idempotent: bool = True) -> dict[str, Any]:
        """A tool that changes nothing a person wrote."""
        hints = ToolAnnotations(
            title=title,
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=idempotent,
            open_world_hint=False,
        )
        return {"title": title, "annotations": hints}

    def adds(title: str) -> dict[str, Any]:
        """A tool that adds a record (never changes or removes one); each call adds another."""
        hints = ToolAnnotations(
            title=title,
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        )
        return {"title": title, "annotations": hints}

    prefix = f"agentdocs://{api.tenant}/{api.project}/"
    memory_block_uri = prefix + "memory-block"
    documents_prefix = prefix + "documents/"

    class AgentdocsMCP(MCPServer):
        """MCPServer with the project's documents as the resource list, and our
        errors as tool errors every client shows as text (`tool_error_result`)."""

        async def call_tool(
            self, name: str, arguments: dict[str, Any], context: Context | None = None
        ) -> CallToolResult | InputRequiredResult:
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as error:
                cause = error.__cause__
                if not isinstance(cause, ApiError):
                    raise
                return tool_error_result(cause)

        async def list_resources(self) -> list[Resource]:
            try:
                documents = await call(api.documents)
            except ApiError as error:
                raise ResourceError(str(error)) from None
            return [
                Resource(
                    uri=memory_block_uri,
                    name="memory-block",
                    title="Memory Block",
                    description=f"The Memory Block of {api.tenant}/{api.project} (preview: "
                    "the full block, no read state touched)",
                    mime_type="text/markdown",
                ),
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

        async def list_resource_templates(self) -> list[ResourceTemplate]:
            return [
                ResourceTemplate(
                    uri_template=documents_prefix + "{path}",
                    name="document",
                    title="Document",
                    description=f"A document of {api.tenant}/{api.project}, current version",
                    mime_type="text/markdown",
                )
            ]

        async def read_resource(  # type: ignore[override]
            self, uri: str, context: Context | None = None
        ) -> list[ReadResourceContents]:
            address = str(uri)
            try:
                if address == memory_block_uri:
                    text = await call(api.memory_block_preview)
                elif (path := resource_document_path(address, documents_prefix)) is not None:
                    text = (await call(api.document, path))["body"]
                else:
                    raise ResourceError(
                        f"unknown resource {address}: this server serves {memory_block_uri} "
                        f"and {documents_prefix}{{path}}"
                    )
            except InvalidPath as refused:
                raise ResourceError(
                    f"{refused.detail} ({refused.code}, field {refused.field})"
                ) from None
            except ApiError as error:
                raise ResourceError(str(error)) from None
            return [ReadResourceContents(content=text, mime_type="text/markdown")]

    server = AgentdocsMCP(
        "agentdocs",
        title="agentdocs",
        instructions=instructions
        or compose_instructions(
            tenant=api.tenant, project=api.project, process=None, house_rules=""
        ),
        version=agentdocs_version(),
        log_level="WARNING",
        # No `subscriptions/listen`: the server sends no change notifications, and a
        # listen stream would hold a web worker for as long as the client waits.
        subscriptions=False,
    )
    if per_session:
        server.middleware.append(_session_start_middleware(api, call))

    async def run(function: Any, *args: Any) -> Any:
        return await call(function, *args)

    @server.tool(**reads("Get the Memory Block", idempotent=False))
    async def get_memory_block(
        process: str,
        recipe: str | None = None,
        profile: str | None = None,
        paths: list[str] | None = None,
        reset: bool = False,
        label: str | None = None,
    ) -> str:
        """The Memory Block (the house rules) for this turn of an agent process.

        `process` is your process id, the same on every turn: later turns get stubs
        for the layers the process already received. Pass `reset=true` after you
        compact your context, to receive the full block again. `paths` are the files
        the task touches (scoped .AGENTS/ documents whose globs match are included);
        `recipe` and `profile` choose a tenant recipe; `label` reads each document at
        its version under that label (`production`, `canary`), or its latest where it
        has none.
        """

        def render() -> str:
            return api.memory_block(
                process=process,
                recipe=recipe,
                profile=profile,
                paths=paths,
                reset=reset,
                label=label,
            )

        return str(await run(render))

    @server.tool(**reads("List documents"))
    async def list_documents(prefix: str = "") -> list[DocumentSummary]:
        """The project's documents (path, version, size in bytes, last update), optionally
        only the paths starting with `prefix`."""
        documents: list[DocumentSummary] = await run(api.documents, prefix)
        return documents

    @server.tool(**reads("Read a document"))
    async def read_document(path: str, version: int | None = None) -> DocumentText:
        """A document's body, version and sha256: the current version, or `version`
        from its history."""
        document: DocumentText = await run(api.document, checked_path(path), version)
        return document

    @server.tool(**reads("Search documents"))
    async def search_documents(query: str) -> SearchResult:
        """The project's current documents whose body or path match `query`, best
        first, each with a snippet of its text around the matches.

        The server's search: on PostgreSQL a full-text search of the words (English
        stemming; "quoted phrases", `or`, `-word`), elsewhere `query` as one
        case-insensitive substring. At most 50 matches; `complete` is false when there
        were more. `documents_searched` is how many documents the project holds.
        """
        if not query.strip():
            raise ApiError("invalid", "`query` must not be empty.", field="query", status=0)
        result: SearchResult = await run(api.search, query)
        return result

    @server.tool(**adds("Propose a change"))
    async def propose_change(
        path: str, body: str, reason: str, base_version: int | None = None
    ) -> ProposedChange:
        """Propose a new body for a document, for a writer of the project to review
        (a tenant admin for `_vance`); nothing changes until they approve and merge it.

        `body` is the whole new text; `base_version` the version you edited (default:
        the current one), so edits saved meanwhile are merged, not lost. Returns the
        change request's id, its state ("open") and the URL of its page.
        """
        proposed: ProposedChange = await run(
            api.propose, checked_path(path), body, reason, base_version
        )
        return proposed

    @server.tool(**adds("Bind this run"))
    async def bind_run(process: str, manifest: dict[str, Any] | None = None) -> BoundRun:
        """Bind this run: record the exact versions of the context it uses (the
        `manifest`, else the project's context.json) in a binding record. Returns the
        record's id, its problem count (and problems) and the URL of its page."""
        bound: BoundRun = await run(api.bind, process, manifest)
        return bound

    @server.prompt(
        name="house-rules", title="House rules", description="The project's Memory Block (preview)"
    )
    async def house_rules() -> str:
        try:
            return str(await run(api.memory_block_preview))
        except ApiError as error:
            raise ValueError(str(error)) from None

    return server


SESSION_STARTS = frozenset({"initialize", "server/discover"})
SESSION_HEADER = "mcp-session-id"


def _session_start_middleware(api: ProjectApi, call: BlockingCall) -> Any:
    """What gives each session that starts (`initialize`, `server/discover`) its own
    instructions, bound as the client's session (its `Mcp-Session-Id`) or a new process."""

    async def session_start(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method not in SESSION_STARTS or not isinstance(result, dict):
            return result
        headers = getattr(ctx.request, "headers", None) or {}
        session = headers.get(SESSION_HEADER) or None
        try:
            started: SessionStart = await call(api.session_start, session)
            result["instructions"] = started["instructions"]
        except ApiError as error:
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


def _configure_mcp(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser, timeout=DEFAULT_TIMEOUT_SECONDS)
    add_offline_arguments(parser, fallback=False)
    parser.add_argument(
        "--server",
        dest="url",
        default=argparse.SUPPRESS,
        help="the same as --url",
    )
    parser.add_argument(
        "--label",
        help="read each document at its version under this label (production, canary, ...), "
        "or its latest where it has none, unless a get_memory_block call names another",
    )


@command(
    "mcp",
    help="serve the project's house rules to an agent over MCP (stdio)",
    configure=_configure_mcp,
)
def run_mcp(args: argparse.Namespace) -> int:
    require(args, "url", "token", "tenant", "project")
    client = ServerClient.from_args(args)
    blocks = resilient_blocks(
        args, client, refused=ApiError.from_response, warn=lambda line: print(line, file=sys.stderr)
    )
    api = ProjectApi(
        client=client,
        server_url=args.url,
        tenant=args.tenant,
        project=args.project,
        blocks=blocks,
        label=args.label or None,
    )
    # Before serving: a client shows a server that exits as failed, with this message,
    # where one that serves would show as connected and fail at the first tool call.
    try:
        started = api.session_start()
    except ApiError as error:
        print(
            f"agentdocs mcp: {args.tenant}/{args.project} on {args.url}: {error}", file=sys.stderr
        )
        return EXIT_USAGE
    build_server(api, instructions=started["instructions"]).run("stdio")
    return EXIT_OK

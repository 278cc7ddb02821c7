"""`agentdocs mcp`: the house rules of one project as a Model Context Protocol server.

    agentdocs mcp --tenant T --project P [--url URL | --server URL] [--token TOKEN]

An agent client (Claude Code, Codex, Cursor, Gemini CLI, anything built on an MCP
SDK) starts this command and talks MCP to it over stdin/stdout; the command talks to
the agentdocs server through the REST API with an API token, as the other commands
do. The server (its tools, resources and prompt) is `agentdocs.mcp`, the same as the
web app's `/mcp/`; this module is its HTTP backend (`HttpProjectApi`) and the command.

`get_memory_block` never blocks the agent: when the server cannot be reached, times
out (`--timeout`, default 5 s) or answers 5xx, it answers with the last good block
kept on disk and logs one warning line on stderr (`agentdocs.client`, docs/cli.md).

A refusal of the server comes back as an MCP tool error whose text is our error
code and detail (the REST error `{error, detail, field}`); nothing a tool meets stops
the server.

The MCP SDK is imported when the command runs, not when the CLI starts: it costs
about 0.4 s, which every other subcommand would pay. No Django here.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from agentdocs.cli.base import (
    EXIT_OK,
    EXIT_USAGE,
    ServerClient,
    add_server_arguments,
    command,
    require,
)
from agentdocs.cli.memory_block import add_offline_arguments, resilient_blocks
from agentdocs.client import http
from agentdocs.client.blocks import DEFAULT_TIMEOUT_SECONDS, NoCachedBlock, ResilientBlocks
from agentdocs.core.mcp_instructions import compose_instructions
from agentdocs.mcp.api import (
    MAX_SEARCH_MATCHES,
    BoundRun,
    DocumentSummary,
    DocumentText,
    ProposedChange,
    Refusal,
    ReportedOutcomes,
    SearchMatch,
    SearchResult,
    SessionStart,
    SkillFile,
    SkillText,
    memory_block_payload,
    reported_outcomes,
)

# A project's listing is followed for at most this many pages of PAGE_SIZE documents.
PAGE_SIZE = 200
MAX_LIST_PAGES = 25


def refusal_of(response: http.Response) -> Refusal:
    """The server's JSON error as a Refusal, or its status when it sent none."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "detail" in body:
        return Refusal(
            str(body.get("error", "error")),
            str(body["detail"]),
            field=body.get("field"),
            status=response.status_code,
        )
    return Refusal(
        "http_error",
        f"the server answered HTTP {response.status_code} {response.reason}",
        status=response.status_code,
    )


@dataclass(frozen=True)
class HttpProjectApi:
    """`agentdocs.mcp.api.ProjectApi` over the REST API, with an API token."""

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
    ) -> http.Response:
        try:
            response = self.client.session.request(
                method,
                url,
                json=json,
                params=params,
                headers={"Accept": accept},
                timeout=self.client.timeout,
            )
        except http.TransportError as error:
            raise Refusal("unreachable", f"cannot reach {url}: {error}", status=0) from None
        if response.status_code not in ok:
            raise refusal_of(response)
        return response

    def _json(self, response: http.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            raise Refusal(
                "not_json",
                f"the server answered {response.status_code} with something that is not JSON",
                status=response.status_code,
            ) from None

    def _skill_by_label(self, skill_path: str) -> http.Response:
        if self.label:
            try:
                return self._send("GET", self._url(skill_path), params={"label": self.label})
            except Refusal as refusal:
                if (refusal.status, refusal.field) != (404, "label"):
                    raise
        return self._send("GET", self._url(skill_path))

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
                raise Refusal("unavailable", str(missing), status=0) from None
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

    def skill(self, name: str, process: str | None = None) -> SkillText:
        """The skill (`GET .../skills/{name}`); with ``process``, read and recorded in
        one request (`POST .../skills/{name}/reads`). With `--label`, the version that
        label points at, else (the skill has no such label) its latest, as renders read."""
        skill_path = f"skills/{quote(name, safe='')}"
        if process is None:
            data = self._json(self._skill_by_label(skill_path))
        else:
            body = {"process": process, **({"label": self.label} if self.label else {})}
            data = self._json(
                self._send("POST", self._url(skill_path + "/reads"), json=body, ok=(201,))
            )
        return SkillText(
            name=data["name"],
            project=data["project"],
            description=data["description"],
            version=data["version"],
            sha256=data["sha256"],
            files=[
                SkillFile(
                    path=file["path"],
                    sha256=file["sha256"],
                    size=file["size"],
                    content=file["content"],
                )
                for file in data["files"]
            ],
            record=data.get("record"),
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
        self,
        path: str,
        body: str,
        reason: str,
        base_version: int | None,
        process: str | None = None,
    ) -> ProposedChange:
        """A change request for ``path``; based on the current version unless told; naming
        the agent process it came from when given."""
        if base_version is None:
            base_version = self.document(path)["version"]
        payload: dict[str, Any] = {
            "path": path,
            "body": body,
            "base_version": base_version,
            "reason": reason,
        }
        if process:
            payload["process"] = process
        change = self._json(self._send("POST", self._url("changes/"), json=payload, ok=(201,)))
        return ProposedChange(
            id=change["id"],
            state=change["state"],
            path=change["path"],
            base_version=change["base_version"],
            url=change["url"],
        )

    def session_start(self, session: str | None = None) -> SessionStart:
        """The instructions of a new session, bound (`POST .../mcp-sessions/`); Refusal
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
        except Refusal as error:
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

    def report_outcome(self, process: str, outcomes: list[dict[str, Any]]) -> ReportedOutcomes:
        answer = self._json(
            self._send(
                "POST",
                self._url("outcomes"),
                json={"process": process, "outcomes": outcomes},
                ok=(201,),
            )
        )
        return reported_outcomes(answer)


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
        args, client, refused=refusal_of, warn=lambda line: print(line, file=sys.stderr)
    )
    api = HttpProjectApi(
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
    except Refusal as error:
        print(
            f"agentdocs mcp: {args.tenant}/{args.project} on {args.url}: {error}", file=sys.stderr
        )
        return EXIT_USAGE
    from agentdocs.mcp.server import build_server, run_stdio

    run_stdio(build_server(api, instructions=started["instructions"]))
    return EXIT_OK

"""The MCP tools as a table: each a name, a title, its annotations, its arguments (a
pydantic model, whose JSON schema is the tool's input schema), its result type (the
output schema) and a small function over a `ProjectApi`.

`call_tool` runs one: it validates the arguments (a refusal names the argument), runs
the function and shapes the result as the MCP SDK's servers do (`structuredContent`,
wrapped in `{"result": ...}` when the result is not an object, and its JSON as text);
a `Refusal` is a tool error whose text every client shows (`tool_error_result`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as ListedTool
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from agentdocs.core.errors import InvalidSkill
from agentdocs.core.skills import validate_skill_name
from agentdocs.mcp.api import (
    BoundRun,
    DocumentSummary,
    DocumentText,
    ProjectApi,
    ProposedChange,
    Refusal,
    ReportedOutcomes,
    SearchResult,
    SkillText,
)
from agentdocs.mcp.paths import InvalidPath, document_path

# The key of `_meta` under which a refused tool call carries the REST error's fields.
ERROR_META_KEY = "agentdocs/error"


class Arguments(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MemoryBlockArguments(Arguments):
    process: str
    recipe: str | None = None
    profile: str | None = None
    paths: list[str] | None = None
    reset: bool = False
    label: str | None = None


class ListArguments(Arguments):
    prefix: str = ""


class ReadArguments(Arguments):
    path: str
    version: int | None = None


class ReadSkillArguments(Arguments):
    name: str
    process: str | None = None


class SearchArguments(Arguments):
    query: str


class ProposeArguments(Arguments):
    path: str
    body: str
    reason: str
    base_version: int | None = None
    process: str | None = None


class BindArguments(Arguments):
    process: str
    manifest: dict[str, Any] | None = None


class OutcomeArgument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    value: bool | int | float
    unit: str | None = None
    comment: str | None = None
    supersedes: int | None = None


class ReportOutcomeArguments(Arguments):
    process: str
    outcomes: list[OutcomeArgument]


def checked_path(path: str) -> str:
    """``path`` when it is a document path of the project, else the `invalid_path`
    refusal, before any request is made."""
    try:
        return document_path(path)
    except InvalidPath as refused:
        raise Refusal(refused.code, refused.detail, field=refused.field, status=0) from None


def get_memory_block(api: ProjectApi, given: MemoryBlockArguments) -> str:
    return api.memory_block(
        process=given.process,
        recipe=given.recipe,
        profile=given.profile,
        paths=given.paths,
        reset=given.reset,
        label=given.label or api.label,
    )


def list_documents(api: ProjectApi, given: ListArguments) -> list[DocumentSummary]:
    return api.documents(given.prefix)


def read_document(api: ProjectApi, given: ReadArguments) -> DocumentText:
    return api.document(checked_path(given.path), given.version)


def read_skill(api: ProjectApi, given: ReadSkillArguments) -> SkillText:
    try:
        name = validate_skill_name(given.name, field="name")
    except InvalidSkill as refused:
        raise Refusal("invalid", refused.detail, field="name", status=0) from None
    skill = api.skill(name, given.process)
    # SKILL.md first: the instructions, then the files they point to.
    skill["files"].sort(key=lambda file: (file["path"] != "SKILL.md", file["path"]))
    return skill


def search_documents(api: ProjectApi, given: SearchArguments) -> SearchResult:
    if not given.query.strip():
        raise Refusal("invalid", "`query` must not be empty.", field="query", status=0)
    return api.search(given.query)


def propose_change(api: ProjectApi, given: ProposeArguments) -> ProposedChange:
    return api.propose(
        checked_path(given.path), given.body, given.reason, given.base_version, given.process
    )


def bind_run(api: ProjectApi, given: BindArguments) -> BoundRun:
    return api.bind(given.process, given.manifest)


def report_outcome(api: ProjectApi, given: ReportOutcomeArguments) -> ReportedOutcomes:
    if not given.outcomes:
        raise Refusal("invalid", "`outcomes` must name at least one.", field="outcomes", status=0)
    outcomes = [outcome.model_dump(exclude_none=True) for outcome in given.outcomes]
    return api.report_outcome(given.process, outcomes)


@dataclass(frozen=True)
class Tool:
    """One row of the table."""

    name: str
    title: str
    description: str
    arguments: type[Arguments]
    result: Any
    run: Callable[[ProjectApi, Any], Any]
    # Changes nothing a person wrote; the same call gives the same answer.
    read_only: bool
    idempotent: bool

    @cached_property
    def _result_adapter(self) -> TypeAdapter[Any]:
        return TypeAdapter(self.result)

    @cached_property
    def wraps_result(self) -> bool:
        """A result that is not an object is sent as `{"result": ...}`."""
        return self._result_adapter.json_schema().get("type") != "object"

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        schema = self._result_adapter.json_schema()
        if not self.wraps_result:
            return schema
        definitions = schema.pop("$defs", None)
        wrapped: dict[str, Any] = {
            "type": "object",
            "properties": {"result": schema},
            "required": ["result"],
            "title": f"{self.name}Output",
        }
        if definitions:
            wrapped["$defs"] = definitions
        return wrapped

    @cached_property
    def listing(self) -> ListedTool:
        """The tool as `tools/list` answers it."""
        return ListedTool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.arguments.model_json_schema(),
            output_schema=self.output_schema,
            annotations=ToolAnnotations(
                title=self.title,
                read_only_hint=self.read_only,
                destructive_hint=False,
                idempotent_hint=self.idempotent,
                open_world_hint=False,
            ),
        )


TOOLS: tuple[Tool, ...] = (
    Tool(
        name="get_memory_block",
        title="Get the Memory Block",
        description="""The Memory Block (the house rules) for this turn of an agent process.

`process` is your process id, the same on every turn: later turns get stubs
for the layers the process already received. Pass `reset=true` after you
compact your context, to receive the full block again. `paths` are the files
the task touches (scoped .AGENTS/ documents whose globs match are included);
`recipe` and `profile` choose a tenant recipe; `label` reads each document at
its version under that label (`production`, `canary`), or its latest where it
has none.""",
        arguments=MemoryBlockArguments,
        result=str,
        run=get_memory_block,
        read_only=True,
        # Later turns of a process get stubs.
        idempotent=False,
    ),
    Tool(
        name="list_documents",
        title="List documents",
        description="The project's documents (path, version, size in bytes, last update), "
        "optionally only the paths starting with `prefix`.",
        arguments=ListArguments,
        result=list[DocumentSummary],
        run=list_documents,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="read_document",
        title="Read a document",
        description="A document's body, version and sha256: the current version, or "
        "`version` from its history.",
        arguments=ReadArguments,
        result=DocumentText,
        run=read_document,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="search_documents",
        title="Search documents",
        description="""The project's current documents whose body or path match `query`, best
first, each with a snippet of its text around the matches.

The server's search: on PostgreSQL a full-text search of the words (English
stemming; "quoted phrases", `or`, `-word`), elsewhere `query` as one
case-insensitive substring. At most 50 matches; `complete` is false when there
were more. `documents_searched` is how many documents the project holds.""",
        arguments=SearchArguments,
        result=SearchResult,
        run=search_documents,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="propose_change",
        title="Propose a change",
        description="""Propose a new body for a document, for a writer of the project to review
(a tenant admin for `_vance`); nothing changes until they approve and merge it.

`body` is the whole new text; `base_version` the version you edited (default:
the current one), so edits saved meanwhile are merged, not lost. Give your
`process` id (as to `get_memory_block`): the change request names the session it
came from. Returns the change request's id, its state ("open") and the URL of
its page.""",
        arguments=ProposeArguments,
        result=ProposedChange,
        run=propose_change,
        read_only=False,
        idempotent=False,
    ),
    Tool(
        name="bind_run",
        title="Bind this run",
        description="Bind this run: record the exact versions of the context it uses (the "
        "`manifest`, else the project's context.json) in a binding record. Returns the "
        "record's id, its problem count (and problems) and the URL of its page.",
        arguments=BindArguments,
        result=BoundRun,
        run=bind_run,
        read_only=False,
        idempotent=False,
    ),
    Tool(
        name="report_outcome",
        title="Report this run's outcome",
        description="""Report how this run went: one or more named results, each a yes/no or a
number (`task_success: true`, `tests_passed: 0.92`, `cost_usd: 0.31` with `unit`
"USD"), for `process` (your process id, as to get_memory_block). They go to the
run's newest binding record, so each can be compared with what the run was given.
An outcome is never changed: to correct one, report it again with `supersedes`
naming the id this tool returned for it.""",
        arguments=ReportOutcomeArguments,
        result=ReportedOutcomes,
        run=report_outcome,
        read_only=False,
        idempotent=False,
    ),
    Tool(
        name="read_skill",
        title="Read a skill",
        description="""Read one skill the project offers, by `name`, with every file of it.

The Memory Block's `## Skills (...)` layer lists the skills offered, each
with its name and description: read one when your task needs it. Returns its
version, its bundle's sha256 and each file (`SKILL.md` first) with its path,
sha256, size in bytes and content. Give the id of your `process` (as to
get_memory_block) and the read is added to your run's binding record
(`record`: its id), so the run's record says which procedure it followed.""",
        arguments=ReadSkillArguments,
        result=SkillText,
        run=read_skill,
        read_only=True,
        idempotent=True,
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}


def tool_error_result(error: Refusal) -> CallToolResult:
    """A refused tool call as every client shows it: `isError` with the error's sentence,
    code and field as text. No `structuredContent`: it would have to validate against
    the tool's `outputSchema` (the result's shape), which an error does not have, and
    clients that check it (the TypeScript SDK, MCP Inspector) would show a schema error
    instead of the sentence. The REST error's fields ride in `_meta`, for programs."""
    return CallToolResult(
        content=[TextContent(type="text", text=str(error))],
        is_error=True,
        _meta={ERROR_META_KEY: error.as_dict()},
    )


def arguments_refusal(error: ValidationError) -> Refusal:
    """Bad arguments, said as the REST API says bad input: the first argument at fault
    by name, and what it must be."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    if first["type"] == "missing":
        detail = f"`{field}` is required."
    elif first["type"] == "model_type":
        detail = "The arguments must be an object."
    else:
        detail = f"`{field}`: {first['msg']}."
    return Refusal("invalid", detail, field=field, status=0)


class UnknownTool(LookupError):
    """No tool of that name: the JSON-RPC error -32602 (invalid params)."""


def call_tool(api: ProjectApi, name: str, arguments: Any) -> CallToolResult:
    """Run the tool ``name`` with ``arguments`` against ``api``: its result, or the tool
    error of a refusal; UnknownTool when there is no such tool."""
    tool = BY_NAME.get(name)
    if tool is None:
        raise UnknownTool(f"Unknown tool: {name}")
    try:
        given = tool.arguments.model_validate(arguments if arguments is not None else {})
    except ValidationError as error:
        return tool_error_result(arguments_refusal(error))
    try:
        result = tool.run(api, given)
    except Refusal as refused:
        return tool_error_result(refused)
    if tool.wraps_result:
        structured: dict[str, Any] = {"result": result}
        text = (
            result if isinstance(result, str) else json.dumps(result, indent=2, ensure_ascii=False)
        )
    else:
        structured = dict(result)
        text = json.dumps(result, indent=2, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=False,
    )

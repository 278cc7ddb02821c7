"""What the MCP tools need of a project (`ProjectApi`), what they answer, and how a
refusal is said (`Refusal`), without the SDK, Django or HTTP.

Two backends implement `ProjectApi`: `agentdocs.cli.mcp.HttpProjectApi` (`agentdocs
mcp`, the REST API over HTTP with an API token) and `agentdocs.api.mcp_backend.
ServiceProjectApi` (the web app's `/mcp/`, the services and selectors behind the same
access checks, scopes and rate limits as the REST views). Either raises `Refusal` with
the REST error's fields: the same sentence, code and field whichever way a client came.
"""

from __future__ import annotations

from typing import Any, Protocol

# pydantic, which builds the tools' schemas, needs this TypedDict before Python 3.12.
from typing_extensions import TypedDict


class Refusal(Exception):
    """A refused operation: the REST error's code, sentence and field, and the HTTP
    status it came with (0 when no request was made, or none was answered)."""

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


class SkillFile(TypedDict):
    path: str
    sha256: str
    size: int
    content: str


class SkillText(TypedDict):
    """A skill the project offers, with every file of its bundle (`SKILL.md` first)."""

    name: str
    project: str
    description: str
    version: int
    sha256: str
    files: list[SkillFile]
    # The binding record of the read when the call named its `process`, else None.
    record: int | None


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


class ReportedOutcome(TypedDict):
    id: int
    binding: int
    name: str
    value: bool | int | float
    supersedes: int | None


class ReportedOutcomes(TypedDict):
    outcomes: list[ReportedOutcome]


# A project's listing holds at most this many documents; a search this many matches.
MAX_LISTED_DOCUMENTS = 5000
MAX_SEARCH_MATCHES = 50


class ProjectApi(Protocol):
    """The operations of one project the MCP server serves; each raises `Refusal`."""

    @property
    def tenant(self) -> str: ...

    @property
    def project(self) -> str: ...

    @property
    def label(self) -> str | None:
        """The label renders read by unless a call names one (`--label`, `?label=`)."""
        ...

    def memory_block(
        self,
        *,
        process: str,
        recipe: str | None,
        profile: str | None,
        paths: list[str] | None,
        reset: bool,
        label: str | None,
    ) -> str: ...

    def memory_block_preview(self) -> str: ...

    def documents(self, prefix: str = "") -> list[DocumentSummary]: ...

    def document(self, path: str, version: int | None = None) -> DocumentText: ...

    def search(self, query: str) -> SearchResult: ...

    def skill(self, name: str, process: str | None = None) -> SkillText: ...

    def propose(
        self,
        path: str,
        body: str,
        reason: str,
        base_version: int | None,
        process: str | None = None,
    ) -> ProposedChange: ...

    def session_start(self, session: str | None = None) -> SessionStart: ...

    def bind(self, process: str, manifest: dict[str, Any] | None) -> BoundRun: ...

    def report_outcome(self, process: str, outcomes: list[dict[str, Any]]) -> ReportedOutcomes: ...


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


def reported_outcomes(answer: dict[str, Any]) -> ReportedOutcomes:
    """What `report_outcome` answers of the REST report's answer."""
    return ReportedOutcomes(
        outcomes=[
            ReportedOutcome(
                id=outcome["id"],
                binding=outcome["binding"],
                name=outcome["name"],
                value=outcome["value"],
                supersedes=outcome["supersedes"],
            )
            for outcome in answer["outcomes"]
        ]
    )

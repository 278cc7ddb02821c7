"""`/mcp/`'s backend: `agentdocs.mcp.api.ProjectApi` over the services and selectors.

Each operation is its REST operation's: the same access check (`agentdocs.permissions`
through `api.access`), token scope, input rules, rate limits and services or selectors
as the REST view, with no HTTP in between. What they raise (the domain errors of
`agentdocs.core.errors`, DRF's validation errors) becomes the `Refusal` the REST API's
exception handler would have answered: the same code, sentence, field and status.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any, TypeVar
from urllib.parse import quote

from django.urls import get_script_prefix
from rest_framework import serializers
from rest_framework.request import Request

from agentdocs import ratelimit
from agentdocs.api.access import (
    caller,
    calling_token,
    request_document,
    request_project_access,
    require_scope,
)
from agentdocs.api.bindings import BindingListCreate
from agentdocs.api.changes import ChangeListCreate, ChangeSerializer
from agentdocs.api.errors import exception_handler
from agentdocs.api.memory_block import MemoryBlockView
from agentdocs.api.outcomes import ProcessReportSerializer, ReportedSerializer
from agentdocs.api.serializers import validated
from agentdocs.core.errors import InsufficientScope
from agentdocs.core.mcp_instructions import compose_instructions
from agentdocs.mcp.api import (
    MAX_LISTED_DOCUMENTS,
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
from agentdocs.models import Scope, Skill
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import outcomes as outcome_selectors
from agentdocs.selectors import search as search_selectors
from agentdocs.selectors import skill_labels as skill_label_selectors
from agentdocs.selectors import skills as skill_selectors
from agentdocs.services import bindings as binding_service
from agentdocs.services import changes as change_service
from agentdocs.services import mcp_sessions as mcp_session_service
from agentdocs.services import memory_block as memory_block_service
from agentdocs.services import outcomes as outcome_service
from agentdocs.services import skill_reads as skill_read_service
from agentdocs.validation import memory_block as memory_block_checks

T = TypeVar("T")
_DATETIME = serializers.DateTimeField()


@contextmanager
def _as_refusal(request: Request) -> Iterator[None]:
    """What the REST API would answer for an error raised inside, as a Refusal."""
    try:
        yield
    except Exception as error:
        answer = exception_handler(error, {"request": request})
        if answer is None or not isinstance(answer.data, dict):
            raise
        data = answer.data
        raise Refusal(
            str(data.get("error", "error")),
            str(data.get("detail", "")),
            field=data.get("field"),
            status=answer.status_code,
        ) from None


def _refusing(method: Callable[..., T]) -> Callable[..., T]:
    def refusing(self: ServiceProjectApi, *args: Any, **kwargs: Any) -> T:
        with _as_refusal(self.request):
            return method(self, *args, **kwargs)

    refusing.__doc__ = method.__doc__
    return refusing


def _skill_text(skill: Skill, *, record: int | None = None) -> SkillText:
    return SkillText(
        name=skill.name,
        project=skill.project.slug,
        description=skill.description,
        version=skill.version,
        sha256=skill.sha256,
        files=[
            SkillFile(
                path=path,
                sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                size=len(text.encode("utf-8")),
                content=text,
            )
            for path, text in sorted(skill.files.items())
        ],
        record=record,
    )


class ServiceProjectApi:
    """The project ``tenant``/``project`` as the caller of ``request`` (its token) may
    use it; ``server_url`` is where the app's pages are (the answers' links): the
    request's own site, worked out when an answer first needs it."""

    def __init__(
        self,
        request: Request,
        *,
        tenant: str,
        project: str,
        label: str | None = None,
        recipe: str | None = None,
    ) -> None:
        self.request = request
        self.recipe = recipe
        self.tenant = tenant
        self.project = project
        self.label = label

    @cached_property
    def server_url(self) -> str:
        return self.request.build_absolute_uri(get_script_prefix()).rstrip("/")

    @_refusing
    def memory_block(
        self,
        *,
        process: str,
        recipe: str | None,
        profile: str | None,
        paths: list[str] | None,
        reset: bool,
        label: str | None,
    ) -> str:
        require_scope(self.request, Scope.RENDER.value)
        payload = memory_block_payload(
            process=process, recipe=recipe, profile=profile, paths=paths, reset=reset, label=label
        )
        block, _, _ = MemoryBlockView.render_turn(self.request, self.tenant, self.project, payload)
        return block.text

    @_refusing
    def memory_block_preview(self) -> str:
        require_scope(self.request, Scope.READ.value)
        access = request_project_access(self.request, self.tenant, self.project)
        block = memory_block_service.render_memory_block(
            project=access.project,
            preview=True,
            label=self.label,
            rate_limit=ratelimit.windows(("preview_user", ratelimit.user_key(access.user.pk))),
        )
        return block.text

    @_refusing
    def documents(self, prefix: str = "") -> list[DocumentSummary]:
        access = request_project_access(self.request, self.tenant, self.project)
        rows = document_selectors.document_list(project=access.project, prefix=prefix)
        return [
            DocumentSummary(
                path=row.path,
                version=row.version,
                size=row.size,
                updated=_DATETIME.to_representation(row.updated_at),
            )
            for row in rows[:MAX_LISTED_DOCUMENTS]
        ]

    @_refusing
    def document(self, path: str, version: int | None = None) -> DocumentText:
        if version is None:
            _, document = request_document(self.request, self.tenant, self.project, path)
            return DocumentText(
                path=document.path,
                body=document.body,
                version=document.version,
                sha256=document.sha256,
            )
        _, document = request_document(
            self.request, self.tenant, self.project, path, include_deleted=True
        )
        record = document_selectors.document_version(document=document, version=version)
        return DocumentText(
            path=record.path, body=record.body, version=record.version, sha256=record.sha256
        )

    @_refusing
    def skill(self, name: str, process: str | None = None) -> SkillText:
        """`GET .../skills/{name}`'s skill: the project's own, else its tenant's. With
        ``process``, the read is bound to that process (a binding record with `skills`),
        which needs what binding needs: the `render` scope and the bind rate limit."""
        access = request_project_access(self.request, self.tenant, self.project)
        if process is not None:
            require_scope(self.request, Scope.RENDER.value)
            process = memory_block_checks.validate_process(process)
        read = skill_label_selectors.skills_by_label(
            skills=[skill_selectors.skill_get(project=access.project, name=name)],
            label=self._skill_label(access.project.tenant_id),
        )[0]
        skill = read.skill
        record = None
        if process is not None:
            ratelimit.check(
                "bind", caller(self.request), ("bind_user", ratelimit.user_key(access.user.pk))
            )
            record = skill_read_service.skill_read_record(
                tenant=access.tenant,
                project=access.project,
                user=access.user,
                process=process,
                skill=skill,
                label=read.label,
            ).pk
        return _skill_text(skill, record=record)

    def _skill_label(self, tenant_id: int) -> str | None:
        """The label skills are read by: the client's (`/mcp/?label=`), else its
        recipe's `params.label` (`/mcp/?recipe=`), as a render reads documents."""
        if self.label is not None:
            return self.label
        return skill_label_selectors.recipe_label(tenant_id=tenant_id, recipe=self.recipe)

    @_refusing
    def skills_offered(self) -> list[SkillText]:
        """The skills the project offers (its own, and its tenant's it does not
        replace), each with every file: MCP's Skills extension's `skills/list`. The
        client's recipe (`/mcp/?recipe=`), when it names one, chooses among them."""
        access = request_project_access(self.request, self.tenant, self.project)
        rows = skill_selectors.skill_offered_bundles(project=access.project, recipe=self.recipe)
        label = self._skill_label(access.project.tenant_id)
        read = skill_label_selectors.skills_by_label(skills=rows, label=label)
        return [_skill_text(each.skill) for each in read]

    @_refusing
    def search(self, query: str) -> SearchResult:
        """The search view's, one page of at most MAX_SEARCH_MATCHES matches (no document
        body is read), and how many documents the project holds."""
        access = request_project_access(self.request, self.tenant, self.project)
        q = search_selectors.validate_search_query(query)
        rows = search_selectors.document_search(tenant=access.tenant, q=q, project=access.project)
        page = list(rows[: MAX_SEARCH_MATCHES + 1])
        hits = search_selectors.search_hits(page[:MAX_SEARCH_MATCHES], q=q)
        searched = document_selectors.document_list(project=access.project, prefix="").count()
        return SearchResult(
            matches=[
                SearchMatch(
                    path=hit.path, version=hit.version, snippet=" ".join(hit.snippet.split())
                )
                for hit in hits
            ],
            documents_searched=searched,
            complete=len(page) <= MAX_SEARCH_MATCHES,
        )

    @_refusing
    def propose(
        self,
        path: str,
        body: str,
        reason: str,
        base_version: int | None,
        process: str | None = None,
    ) -> ProposedChange:
        """Any member may propose, with a token of any scope (as `POST .../changes/`)."""
        access = request_project_access(self.request, self.tenant, self.project)
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
        data = validated(ChangeListCreate.InputSerializer, payload)
        change = change_service.change_propose(project=access.project, user=access.user, **data)
        shown = ChangeSerializer(change, context={"request": self.request}).data
        return ProposedChange(
            id=change.pk,
            state=shown["state"],
            path=shown["path"],
            base_version=shown["base_version"],
            url=shown["url"],
        )

    @_refusing
    def session_start(self, session: str | None = None) -> SessionStart:
        """`POST .../mcp-sessions/`'s start; a token that may read but not render gets
        the instructions without the house rules, and no record."""
        access = request_project_access(self.request, self.tenant, self.project)
        try:
            require_scope(self.request, Scope.RENDER.value)
        except InsufficientScope:
            note = (
                "This session's token may read but not render (it has no `render` scope), "
                "so the house rules are not included here and get_memory_block is refused."
            )
            text = compose_instructions(
                tenant=self.tenant, project=self.project, process=None, house_rules="", note=note
            )
            return SessionStart(process=None, instructions=text, record=None)
        ratelimit.check(
            "bind", caller(self.request), ("bind_user", ratelimit.user_key(access.user.pk))
        )
        started = mcp_session_service.mcp_session_start(
            tenant=access.tenant,
            project=access.project,
            user=access.user,
            session=session,
            label=self.label,
        )
        return SessionStart(
            process=started.process, instructions=started.instructions, record=started.record.pk
        )

    @_refusing
    def bind(self, process: str, manifest: dict[str, Any] | None) -> BoundRun:
        require_scope(self.request, Scope.RENDER.value)
        access = request_project_access(self.request, self.tenant, self.project)
        payload: dict[str, Any] = {"process": process}
        if manifest is not None:
            payload["manifest"] = manifest
        data = validated(BindingListCreate.PostInputSerializer, payload)
        ratelimit.check(
            "bind", caller(self.request), ("bind_user", ratelimit.user_key(access.user.pk))
        )
        result = binding_service.binding_create(
            tenant=access.tenant, project=access.project, user=access.user, **data
        )
        shown = BindingListCreate.OutputSerializer(result.record).data
        page = (
            f"{self.server_url.rstrip('/')}/t/{quote(self.tenant, safe='')}/"
            f"{quote(self.project, safe='')}/bindings/{result.record.pk}/"
        )
        return BoundRun(
            id=result.record.pk,
            problem_count=shown["problem_count"],
            url=page,
            problems=shown.get("problems", []),
        )

    @_refusing
    def report_outcome(self, process: str, outcomes: list[dict[str, Any]]) -> ReportedOutcomes:
        """`POST .../outcomes`: a `render` token's, like binding the run."""
        require_scope(self.request, Scope.RENDER.value)
        access = request_project_access(self.request, self.tenant, self.project)
        data = validated(ProcessReportSerializer, {"process": process, "outcomes": outcomes})
        binding = outcome_selectors.binding_record_of_process(
            project=access.project, process=data["process"]
        )
        made = outcome_service.outcome_report(
            binding=binding,
            user=access.user,
            token=calling_token(self.request),
            reports=data["reports"],
        )
        return reported_outcomes(ReportedSerializer({"outcomes": made}).data)

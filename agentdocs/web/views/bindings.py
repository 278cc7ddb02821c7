"""Binding records: the list, one record with its outdated status, reconstruction, comparison.

A record is evidence and never changes; these pages only read it, except the
bind form, which makes a new record through the binding service as the API does.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from agentdocs import permissions
from agentdocs.core.bindings import MISSING, STALE
from agentdocs.core.errors import AgentdocsError, NotFound
from agentdocs.core.timeline import session_timelines, timeline_segments
from agentdocs.models import BindingRecord
from agentdocs.paging import LateRows
from agentdocs.permissions import ProjectAccess
from agentdocs.selectors import binding_checks
from agentdocs.selectors import bindings as binding_selectors
from agentdocs.selectors import policy as policy_selectors
from agentdocs.selectors.binding_memory_block import MemoryBlockRequest
from agentdocs.services import bindings as binding_service
from agentdocs.validation import memory_block as memory_block_checks
from agentdocs.web.forms.bindings import (
    BindForm,
    BindingCompareForm,
    BindingFilterForm,
    RunsTimelineForm,
)
from agentdocs.web.pages import form_page, member_page
from agentdocs.web.runs_chart import chart_description, runs_label, seen_label, timeline_chart

RECORDS_PER_PAGE = 50
# The runs page lists the newest sessions among the runs it read.
SESSIONS_SHOWN = 20


def _record_url_kwargs(access: ProjectAccess) -> dict[str, str]:
    return {"tenant": access.tenant.slug, "project": access.project.slug}


@member_page
@require_http_methods(["GET", "POST"])
def binding_list(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    if request.method == "POST":
        return _bind(request, access)
    return _bindings_page(request, access, BindForm())


def _bind(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
    form = BindForm(request.POST)
    if not form.is_valid():
        return _bindings_page(request, access, form)
    recipe = form.cleaned_data["recipe"]
    try:
        result = binding_service.binding_create(
            tenant=access.tenant,
            project=access.project,
            user=access.user,
            process=memory_block_checks.validate_process(form.cleaned_data["process"]),
            memory_block=(
                MemoryBlockRequest(recipe=recipe or None, profile=form.cleaned_data["profile"])
                if form.cleaned_data["with_memory_block"]
                else None
            ),
        )
    except AgentdocsError as error:
        return _bindings_page(request, access, form, refusal=error)
    record = result.record
    if result.has_problems:
        messages.warning(
            request,
            f"Bound as record {record.pk}, with {record.problem_count} "
            f"problem{'s' if record.problem_count != 1 else ''}: see below.",
        )
    else:
        messages.success(request, f"Bound as record {record.pk}, without problems.")
    return redirect(
        reverse("binding", kwargs={**_record_url_kwargs(access), "record_id": record.pk})
    )


def _bindings_page(
    request: HttpRequest,
    access: ProjectAccess,
    bind_form: BindForm,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    """The records, newest first, filtered and paged by the query string; the bind form beside."""
    filters = BindingFilterForm(request.GET)
    filters.is_valid()
    process = filters.cleaned_data.get("process") or None
    problems = {"with": True, "without": False}.get(filters.cleaned_data.get("problems") or "")
    page = filters.cleaned_data.get("page") or 1
    start = (page - 1) * RECORDS_PER_PAGE
    records = list(
        LateRows(
            binding_selectors.binding_record_list(
                project=access.project, process=process, problems=problems
            )
        )[start : start + RECORDS_PER_PAGE + 1]
    )
    context = {
        "access": access,
        "project": access.project,
        "records": records[:RECORDS_PER_PAGE],
        "has_older": len(records) > RECORDS_PER_PAGE,
        "page": page,
        "filters": filters,
        "bind_form": bind_form,
        "recipes": list(policy_selectors.recipe_list(tenant=access.tenant)),
    }
    return form_page(request, "agentdocs/bindings.html", context, form=bind_form, refusal=refusal)


def _record_sources(record: BindingRecord) -> dict:
    """Each bound source beside its outdated status, and how many are stale or missing."""
    rows = binding_selectors.binding_outdated(record=record)
    outdated = {(row["kind"], row.get("name") or row.get("path")): row for row in rows}
    sources = [
        {"kind": kind, "key": key, "entry": entry, "outdated": outdated.get((kind, key))}
        for kind, key_field in (("context", "name"), ("local", "path"))
        for entry in record.record.get(kind, [])
        for key in [entry[key_field]]
    ]
    return {
        "sources": sources,
        "stale": sum(1 for row in outdated.values() if row["status"] in STALE),
        "missing": sum(1 for row in outdated.values() if row["status"] == MISSING),
    }


@member_page
def binding_detail(request: HttpRequest, tenant: str, project: str, record_id: int) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    record = binding_selectors.binding_record_get(project=access.project, record_id=record_id)
    return render(
        request,
        "agentdocs/binding.html",
        {
            "access": access,
            "project": access.project,
            "record": record,
            "data": record.record,
            "memory_block": record.record.get("memory_block"),
            "repository": record.record.get("repository"),
            **_record_sources(record),
        },
    )


@member_page
def binding_reconstruct(
    request: HttpRequest, tenant: str, project: str, record_id: int
) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    record = binding_selectors.binding_record_get(project=access.project, record_id=record_id)
    return render(
        request,
        "agentdocs/binding_reconstruct.html",
        {
            "access": access,
            "project": access.project,
            "record": record,
            "reconstruction": binding_checks.binding_reconstruct(record=record),
        },
    )


@member_page
def binding_compare(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    form = BindingCompareForm(request.GET)
    if not form.is_valid():
        raise NotFound("Pick two binding records to compare.", field="record")
    a = binding_selectors.binding_record_get(
        project=access.project, record_id=form.cleaned_data["a"]
    )
    b = binding_selectors.binding_record_get(
        project=access.project, record_id=form.cleaned_data["b"]
    )
    return render(
        request,
        "agentdocs/binding_compare.html",
        {
            "access": access,
            "project": access.project,
            "a": a,
            "b": b,
            "comparison": binding_selectors.binding_compare(a=a, b=b),
        },
    )


@member_page
def binding_runs(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    """The runs timeline: which version of each bound source the runs saw, over time;
    the agent sessions among those runs, and one session's deliveries (`?session=`) as
    its own timeline."""
    access = permissions.project_access(request.user, tenant, project)
    form = RunsTimelineForm(request.GET)
    context: dict[str, Any] = {"access": access, "project": access.project, "form": form}
    if not form.is_valid():
        return render(request, "agentdocs/runs.html", context, status=400)
    window = binding_selectors.binding_timeline_window(
        project=access.project,
        since=form.cleaned_data["since"],
        until=form.cleaned_data["until"],
        limit=form.cleaned_data["limit"] or binding_selectors.TIMELINE_DEFAULT_RUNS,
    )
    segments = timeline_segments(window.runs)
    session_id = form.cleaned_data["session"]
    if session_id:
        found = binding_selectors.binding_session_runs(project=access.project, session=session_id)
        timelines = session_timelines(found.runs)
        context["session"] = {
            "id": session_id,
            "timeline": timelines[0] if timelines else None,
            "truncated": found.truncated,
            "limit": found.limit,
        }
    return render(
        request,
        "agentdocs/runs.html",
        {
            **context,
            "window": window,
            "sessions": session_timelines(window.runs)[:SESSIONS_SHOWN],
            "segments": [
                {
                    **segment,
                    "seen": seen_label(segment),
                    "runs_label": runs_label(segment["first_index"], segment["last_index"]),
                }
                for segment in segments
            ],
            "chart": timeline_chart(runs=window.runs, segments=segments),
            "description": chart_description(runs=window.runs, segments=segments),
        },
    )

"""The outcomes page: a project's runs grouped by what they saw and compared on one
outcome, as a chart with the intervals drawn and as a table (the API's
`GET .../outcomes/compare`)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agentdocs import permissions
from agentdocs.selectors import outcomes as outcome_selectors
from agentdocs.web.forms.outcomes import OutcomeCompareForm
from agentdocs.web.outcomes_chart import comparison_context
from agentdocs.web.pages import member_page


@member_page
def outcome_compare(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    form = OutcomeCompareForm(request.GET or {"metric": "task_success", "by": "label"})
    context: dict[str, Any] = {"access": access, "project": access.project, "form": form}
    if not form.is_valid():
        return render(request, "agentdocs/outcomes.html", context, status=400)
    data = form.cleaned_data
    comparison = outcome_selectors.outcome_comparison(
        project=access.project,
        metric=data["metric"],
        by=data["by"],
        document=data["document"] or None,
        since=data["since"],
        until=data["until"],
        baseline=data["baseline"] or None,
        lower_is_better=data["lower_is_better"],
    )
    return render(request, "agentdocs/outcomes.html", {**context, **comparison_context(comparison)})

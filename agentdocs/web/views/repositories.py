"""The Repositories pages of a project: each repository that reports its agent files,
with its state against the server's export now; and one repository with its checks,
paged."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from agentdocs import permissions
from agentdocs.selectors import repositories as repository_selectors
from agentdocs.selectors import repositories as selectors
from agentdocs.web.pages import list_page, member_page


@member_page
@require_GET
def repository_list(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    rows = repository_selectors.repository_list_status(project=access.project)
    return render(
        request,
        "agentdocs/repositories.html",
        {"access": access, "project": access.project, "rows": rows},
    )


@member_page
@require_GET
def repository_detail(
    request: HttpRequest, tenant: str, project: str, repository_id: int
) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    row = repository_selectors.repository_status(
        project=access.project, repository_id=repository_id
    )
    return render(
        request,
        "agentdocs/repository.html",
        {
            "access": access,
            "project": access.project,
            "row": row,
            "checks": list_page(
                request, selectors.repository_checks(repository=row.repository), per_page=50
            ),
        },
    )

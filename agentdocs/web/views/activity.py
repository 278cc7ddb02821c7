"""The tenant's activity page: what changed, who, why, with the API's filters."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agentdocs import permissions
from agentdocs.core.errors import InvalidInput
from agentdocs.paging import LateRows
from agentdocs.selectors import activity as activity_selectors
from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.web.pages import list_page, member_page

EVENTS_PER_PAGE = 50
# Up to this many projects the filter is a list to pick from; past it, a slug to type
# (a tenant of 1,000 projects would send a 1,000-row list with every page).
PROJECT_CHOICES = 100


@member_page
def activity(request: HttpRequest, tenant: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    projects = list(
        tenancy_selectors.project_list(tenant=access.tenant).only("slug", "name")[
            : PROJECT_CHOICES + 1
        ]
    )
    context = {
        "access": access,
        "tenant": access.tenant,
        "projects": projects if len(projects) <= PROJECT_CHOICES else None,
        "kinds": activity_selectors.visible_kinds(admin=access.is_admin),
        "filters": {name: request.GET.get(name, "") for name in activity_selectors.FILTERS},
    }
    try:
        filters = activity_selectors.activity_filter(request.GET)
        events = activity_selectors.activity_list(
            tenant=access.tenant, admin=access.is_admin, filters=filters
        )
    except InvalidInput as refusal:
        # A filter the page cannot read: the form again, the field named, nothing listed.
        return render(
            request, "agentdocs/activity.html", {**context, "refusal": refusal}, status=400
        )
    page = list_page(request, LateRows(events), per_page=EVENTS_PER_PAGE)
    return render(request, "agentdocs/activity.html", {**context, "page": page})

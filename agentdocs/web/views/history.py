"""History pages of settings, recipes, memberships and provider map entries: each
change with its number, who made it, why, and the values before and after."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from agentdocs import permissions
from agentdocs.core import policy as policy_rules
from agentdocs.core import recipes as recipe_rules
from agentdocs.core.manifest import validate_provider_name
from agentdocs.permissions import Access
from agentdocs.selectors import history as history_selectors
from agentdocs.web.pages import list_page, member_page

ENTRIES_PER_PAGE = 50


def _history_page(
    request: HttpRequest,
    access: Access,
    rows: Any,
    fields: tuple[str, ...],
    *,
    what: str,
    name: str,
    back: tuple[str, str] | None,
    with_diff: bool = False,
) -> HttpResponse:
    page = list_page(request, rows, per_page=ENTRIES_PER_PAGE)
    entries = history_selectors.history_entries(page, fields, with_diff=with_diff)
    return render(
        request,
        "agentdocs/history.html",
        {
            "access": access,
            "tenant": access.tenant,
            "what": what,
            "name": name,
            "back": back,
            "page": page,
            "entries": entries,
        },
    )


@member_page
def setting_history(request: HttpRequest, tenant: str, key: str) -> HttpResponse:
    """A tenant setting's history, or a project's with `?project=<slug>`."""
    project_slug = request.GET.get("project") or ""
    if project_slug:
        access: Access = permissions.project_access(request.user, tenant, project_slug)
        back = reverse("project-settings", kwargs={"tenant": tenant, "project": project_slug})
        what = f"Setting · {access.project.name if access.project else project_slug}"
    else:
        access = permissions.tenant_access(request.user, tenant)
        back = reverse("tenant-settings", kwargs={"tenant": tenant})
        what = "Tenant setting"
    policy_rules.validate_setting_key(key)
    rows = history_selectors.setting_history(tenant=access.tenant, project=access.project, key=key)
    return _history_page(
        request,
        access,
        rows,
        history_selectors.SETTING_FIELDS,
        what=what,
        name=key,
        back=(back, "Settings"),
    )


@member_page
def recipe_history(request: HttpRequest, tenant: str, name: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    recipe_rules.validate_recipe_name(name)
    rows = history_selectors.recipe_history(tenant=access.tenant, name=name)
    return _history_page(
        request,
        access,
        rows,
        history_selectors.RECIPE_FIELDS,
        what="Recipe",
        name=name,
        back=(reverse("recipes", kwargs={"tenant": tenant}), "Recipes"),
        with_diff=True,
    )


@member_page
def membership_history(request: HttpRequest, tenant: str, username: str) -> HttpResponse:
    """A member's roles over time: tenant admins only, as they alone see the members."""
    access = permissions.tenant_access(request.user, tenant)
    access.require_admin("Only tenant admins see the members and their roles.")
    rows = history_selectors.membership_history(tenant=access.tenant, username=username)
    return _history_page(
        request,
        access,
        rows,
        history_selectors.MEMBERSHIP_FIELDS,
        what="Membership",
        name=username,
        back=None,
    )


@member_page
def provider_history(request: HttpRequest, tenant: str, name: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    validate_provider_name(name)
    rows = history_selectors.provider_history(tenant=access.tenant, name=name)
    return _history_page(
        request,
        access,
        rows,
        history_selectors.PROVIDER_FIELDS,
        what="Provider map",
        name=name,
        back=None,
    )

"""`memory.*` settings pages, a tenant's and a project's: members read them, tenant
admins change them; a project's page shows the policy in force (the tenant's settings
and its own, merged as the Memory Block merges them)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from agentdocs import permissions
from agentdocs.core.errors import AgentdocsError, NotFound
from agentdocs.core.policy import PolicySetting, merge_policy
from agentdocs.permissions import Access
from agentdocs.selectors import policy as policy_selectors
from agentdocs.services import policy as policy_service
from agentdocs.web.forms.settings import SettingDeleteForm, SettingForm
from agentdocs.web.pages import form_page, list_page, member_page

SETTINGS_PER_PAGE = 100


def _policy_in_force(access: Access) -> dict:
    """For a project: the tenant's settings and its own, merged as the Memory Block merges them."""
    tenant_settings = list(policy_selectors.setting_list(tenant=access.tenant, project=None))
    if access.project is None:
        return {"tenant_settings": tenant_settings, "own_settings": [], "merged": None}
    own = list(policy_selectors.setting_list(tenant=access.tenant, project=access.project))
    merged = merge_policy(
        [
            PolicySetting(key=s.key, value=s.value, level="tenant", enforced=s.enforced)
            for s in tenant_settings
        ]
        + [PolicySetting(key=s.key, value=s.value, level="project") for s in own]
    )
    return {"tenant_settings": tenant_settings, "own_settings": own, "merged": merged}


def _settings_redirect(access: Access) -> HttpResponse:
    if access.project is None:
        return redirect("tenant-settings", tenant=access.tenant.slug)
    return redirect("project-settings", tenant=access.tenant.slug, project=access.project.slug)


def _change_form(access: Access, policy: dict, key: str) -> SettingForm:
    """The form, filled with the setting the user chose to change (if it is set here)."""
    here = policy["own_settings"] if access.project is not None else policy["tenant_settings"]
    setting = next((s for s in here if s.key == key), None)
    if setting is None:
        return SettingForm(initial={"key": key or "memory."})
    return SettingForm(
        initial={"key": setting.key, "value": setting.value, "enforced": setting.enforced}
    )


@member_page
@require_http_methods(["GET", "POST"])
def tenant_settings(request: HttpRequest, tenant: str) -> HttpResponse:
    return _settings(request, permissions.tenant_access(request.user, tenant))


@member_page
@require_http_methods(["GET", "POST"])
def project_settings(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    return _settings(request, permissions.project_access(request.user, tenant, project))


def _settings(request: HttpRequest, access: Access) -> HttpResponse:
    """One page for a tenant's settings and a project's: members read, admins change."""
    if request.method == "POST":
        access.require_admin()
        if "delete" in request.POST:
            return _delete_setting(request, access)
        return _save_setting(request, access)
    policy = _policy_in_force(access)
    form = _change_form(access, policy, request.GET.get("key", ""))
    return _settings_page(request, access, form, policy=policy)


def _save_setting(request: HttpRequest, access: Access) -> HttpResponse:
    form = SettingForm(request.POST)
    if not form.is_valid():
        return _settings_page(request, access, form)
    try:
        setting, created = policy_service.setting_set(
            tenant=access.tenant,
            project=access.project,
            key=form.cleaned_data["key"],
            value=form.cleaned_data["value"],
            enforced=form.cleaned_data["enforced"],
            user=access.user,
            reason=form.cleaned_data["reason"],
        )
    except AgentdocsError as error:
        return _settings_page(request, access, form, refusal=error)
    verb = "Added" if created else "Saved"
    messages.success(request, f"{verb} {setting.key} = {setting.value!r}.")
    return _settings_redirect(access)


def _delete_setting(request: HttpRequest, access: Access) -> HttpResponse:
    form = SettingDeleteForm(request.POST)
    if not form.is_valid():
        raise NotFound("No such setting.", field="key")
    key = form.cleaned_data["key"]
    policy_service.setting_delete(
        tenant=access.tenant, project=access.project, key=key, user=access.user
    )
    messages.success(request, f"Deleted the setting {key}.")
    return _settings_redirect(access)


def _settings_page(
    request: HttpRequest,
    access: Access,
    form: SettingForm,
    *,
    policy: dict | None = None,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    policy = policy or _policy_in_force(access)
    here = policy["own_settings"] if access.project is not None else policy["tenant_settings"]
    merged = policy["merged"]
    context = {
        "access": access,
        "tenant": access.tenant,
        "project": access.project,
        "form": form,
        **policy,
        "set_here": list_page(request, here, per_page=SETTINGS_PER_PAGE),
        "in_force": list_page(
            request,
            list(merged.values) if merged else [],
            per_page=SETTINGS_PER_PAGE,
            param="in_force_page",
        ),
    }
    return form_page(request, "agentdocs/settings.html", context, form=form, refusal=refusal)

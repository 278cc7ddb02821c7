"""Policy pages of a tenant: its `memory.*` settings (a tenant's and a project's: members
read them, tenant admins change them; a project's page shows the policy in force, the
tenant's settings and its own merged as the Memory Block merges them), and its recipes
(members read them, with a preview of each on its projects; tenant admins create, edit
and delete them, with a form or as the JSON the API takes)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from agentdocs import permissions
from agentdocs.core.errors import AgentdocsError, InvalidInput, NotFound
from agentdocs.core.policy import PolicySetting, merge_policy
from agentdocs.core.recipes import RecipeParams, RenderOptions
from agentdocs.models import Recipe
from agentdocs.permissions import Access
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import policy as policy_selectors
from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.services import policy as policy_service
from agentdocs.web.forms.policy import (
    RecipeDeleteForm,
    RecipeEditorForm,
    RecipeForm,
    SettingDeleteForm,
    SettingForm,
)
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


RECIPES_PER_PAGE = 100


PREVIEW_LINKS = 20  # a recipe page's preview links, one per project


def _recipe(access: Access, name: str) -> Recipe:
    recipe = policy_selectors.recipe_list(tenant=access.tenant).filter(name=name).first()
    if recipe is None:
        raise NotFound(f"No recipe {name!r} in this tenant.", field="recipe")
    return recipe


@member_page
def recipe_list(request: HttpRequest, tenant: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    page = list_page(
        request, policy_selectors.recipe_list(tenant=access.tenant), per_page=RECIPES_PER_PAGE
    )
    recipes = [
        {"recipe": recipe, "options": RenderOptions.from_recipe(recipe.params)} for recipe in page
    ]
    return render(
        request,
        "agentdocs/recipes.html",
        {"access": access, "tenant": access.tenant, "recipes": recipes, "page": page},
    )


# Recipes are edited with a form (`RecipeEditorForm`) or, under "Advanced", as the
# JSON the API takes (`RecipeForm`); a POST says which with `editor=form`.
RecipeAnyForm = RecipeForm | RecipeEditorForm


def _editor_form(
    data: Any = None, *, name: str = "", params: RecipeParams | None = None, profiles: Any = None
) -> RecipeEditorForm:
    return RecipeEditorForm(
        data,
        initial=RecipeEditorForm.initial_from(name=name, params=params or {}),
        original_params=params or {},
        original_profiles=profiles or {},
        auto_id="editor_%s",
    )


def _posted_recipe_form(request: HttpRequest, recipe: Recipe | None) -> RecipeAnyForm:
    data = request.POST.copy()
    if recipe is not None:
        data["name"] = recipe.name  # the name identifies the recipe; it is not edited
    if data.get("editor") == "form":
        if recipe is None:
            return _editor_form(data)
        return _editor_form(data, name=recipe.name, params=recipe.params, profiles=recipe.profiles)
    return RecipeForm(data)


def _recipe_refused(form: RecipeAnyForm, error: AgentdocsError) -> bool:
    """Put a service's refusal beside its control; False when `form_page` should."""
    if isinstance(form, RecipeEditorForm):
        form.add_service_error(error.field, error.detail)
        return True
    return False


@member_page
@require_http_methods(["GET", "POST"])
def recipe_create(request: HttpRequest, tenant: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    access.require_admin()
    if request.method == "POST":
        return _save_new_recipe(request, access)
    return _new_recipe_page(request, access, _editor_form())


def _save_new_recipe(request: HttpRequest, access: Access) -> HttpResponse:
    form = _posted_recipe_form(request, None)
    if not form.is_valid():
        return _new_recipe_page(request, access, form)
    try:
        recipe = policy_service.recipe_create(
            tenant=access.tenant,
            name=form.cleaned_data["name"],
            params=form.cleaned_data["params"],
            profiles=form.cleaned_data["profiles"],
            user=access.user,
            reason=form.cleaned_data["reason"],
        )
    except AgentdocsError as error:
        return _new_recipe_page(request, access, form, refusal=error)
    messages.success(request, f"Created the recipe {recipe.name}.")
    return redirect("recipe", tenant=access.tenant.slug, name=recipe.name)


def _new_recipe_page(
    request: HttpRequest,
    access: Access,
    form: RecipeAnyForm,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    context = {
        "access": access,
        "tenant": access.tenant,
        "creating": True,
        **_recipe_forms(form, json_initial={"params": {}, "profiles": {}}),
        "document_paths": document_selectors.agent_document_paths(tenant=access.tenant),
    }
    beside_form = not (refusal is not None and _recipe_refused(form, refusal))
    return form_page(
        request,
        "agentdocs/recipe_form.html",
        context,
        form=form,
        refusal=refusal,
        beside_form=beside_form,
    )


def _recipe_forms(form: RecipeAnyForm, *, json_initial: dict[str, Any]) -> dict[str, Any]:
    """The page's two editors: the one that was sent, and the other one fresh."""
    if isinstance(form, RecipeForm):
        name = json_initial.get("name", "")
        editor = _editor_form(
            name=name, params=json_initial["params"], profiles=json_initial["profiles"]
        )
        return {"form": form, "editor_form": editor, "json_form": form, "json_open": True}
    return {"form": form, "editor_form": form, "json_form": RecipeForm(initial=json_initial)}


@member_page
@require_http_methods(["GET", "POST"])
def recipe_detail(request: HttpRequest, tenant: str, name: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    recipe = _recipe(access, name)
    if request.method == "POST":
        access.require_admin()
        return _save_recipe(request, access, recipe)
    form = _editor_form(name=recipe.name, params=recipe.params, profiles=recipe.profiles)
    return _recipe_page(request, access, recipe, form)


def _save_recipe(request: HttpRequest, access: Access, recipe: Recipe) -> HttpResponse:
    form = _posted_recipe_form(request, recipe)
    if not form.is_valid():
        return _recipe_page(request, access, recipe, form)
    try:
        policy_service.recipe_update(
            recipe=recipe,
            params=form.cleaned_data["params"],
            profiles=form.cleaned_data["profiles"],
            user=access.user,
            reason=form.cleaned_data["reason"],
        )
    except AgentdocsError as error:
        return _recipe_page(request, access, recipe, form, refusal=error)
    messages.success(request, f"Saved the recipe {recipe.name}.")
    return redirect("recipe", tenant=access.tenant.slug, name=recipe.name)


def _recipe_page(
    request: HttpRequest,
    access: Access,
    recipe: Recipe,
    form: RecipeAnyForm,
    *,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    context = {
        "access": access,
        "tenant": access.tenant,
        "recipe": recipe,
        "options": RenderOptions.from_recipe(recipe.params),
        "profiles": sorted((recipe.profiles or {}).items()),
        # A preview link for the first projects; a tenant of 1,000 projects would send
        # 1,000 links with every recipe page.
        "projects": list(tenancy_selectors.project_list(tenant=access.tenant)[: PREVIEW_LINKS + 1]),
        "preview_links": PREVIEW_LINKS,
        **_recipe_forms(
            form,
            json_initial={
                "name": recipe.name,
                "params": recipe.params,
                "profiles": recipe.profiles,
            },
        ),
        "document_paths": (
            document_selectors.agent_document_paths(tenant=access.tenant) if access.is_admin else []
        ),
    }
    beside_form = not (refusal is not None and _recipe_refused(form, refusal))
    return form_page(
        request,
        "agentdocs/recipe.html",
        context,
        form=form,
        refusal=refusal,
        beside_form=beside_form,
    )


@member_page
@require_http_methods(["GET", "POST"])
def recipe_delete(request: HttpRequest, tenant: str, name: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    recipe = _recipe(access, name)
    access.require_admin()
    if request.method == "POST":
        form = RecipeDeleteForm(request.POST)
        if not form.is_valid():  # a NUL, or a reason over 500 characters: the 400 page
            raise InvalidInput(str(form.errors["reason"][0]), field="reason")
        policy_service.recipe_delete(
            recipe=recipe, user=access.user, reason=form.cleaned_data["reason"]
        )
        messages.success(request, f"Deleted the recipe {name}.")
        return redirect("recipes", tenant=access.tenant.slug)
    return render(
        request,
        "agentdocs/recipe_delete.html",
        {"access": access, "tenant": access.tenant, "recipe": recipe},
    )

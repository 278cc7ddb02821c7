"""`memory.*` settings and recipes: members read them, tenant admins change them."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from agentdocs import permissions, selectors
from agentdocs.core.errors import AlreadyExists, Enforced, InvalidInput, NotFound, SecretDetected
from agentdocs.core.policy import PolicySetting, merge_policy
from agentdocs.core.recipes import RenderOptions
from agentdocs.models import Recipe
from agentdocs.permissions import Access
from agentdocs.services import policy as policy_service
from agentdocs.web.forms import RecipeForm, SettingDeleteForm, SettingForm
from agentdocs.web.pages import add_service_error, member_page


def _policy_in_force(access: Access) -> dict:
    """For a project: the tenant's settings and its own, merged as the Memory Block merges them."""
    tenant_settings = list(selectors.setting_list(tenant=access.tenant, project=None))
    if access.project is None:
        return {"tenant_settings": tenant_settings, "own_settings": [], "merged": None}
    own = list(selectors.setting_list(tenant=access.tenant, project=access.project))
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


def _settings_page(request: HttpRequest, access: Access) -> HttpResponse:
    status = 200
    policy = _policy_in_force(access)
    form = _change_form(access, policy, request.GET.get("key", ""))
    if request.method == "POST":
        access.require_admin()
        if "delete" in request.POST:
            delete_form = SettingDeleteForm(request.POST)
            if delete_form.is_valid():
                key = delete_form.cleaned_data["key"]
                policy_service.setting_delete(
                    tenant=access.tenant, project=access.project, key=key, user=request.user
                )
                messages.success(request, f"Deleted the setting {key}.")
                return _settings_redirect(access)
            raise NotFound("No such setting.", field="key")
        form = SettingForm(request.POST)
        if form.is_valid():
            try:
                setting, created = policy_service.setting_set(
                    tenant=access.tenant,
                    project=access.project,
                    key=form.cleaned_data["key"],
                    value=form.cleaned_data["value"],
                    enforced=form.cleaned_data["enforced"],
                    user=request.user,
                    reason=form.cleaned_data["reason"],
                )
            except (InvalidInput, Enforced, SecretDetected) as error:
                status = error.status
                add_service_error(form, error)
            else:
                verb = "Added" if created else "Saved"
                messages.success(request, f"{verb} {setting.key} = {setting.value!r}.")
                return _settings_redirect(access)
        else:
            status = 400
    return render(
        request,
        "agentdocs/settings.html",
        {
            "access": access,
            "tenant": access.tenant,
            "project": access.project,
            "form": form,
            **policy,
        },
        status=status,
    )


@member_page
@require_http_methods(["GET", "POST"])
def tenant_settings(request: HttpRequest, tenant: str) -> HttpResponse:
    return _settings_page(request, permissions.tenant_access(request.user, tenant))


@member_page
@require_http_methods(["GET", "POST"])
def project_settings(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    return _settings_page(request, permissions.project_access(request.user, tenant, project))


def _recipe(access: Access, name: str) -> Recipe:
    recipe = selectors.recipe_list(tenant=access.tenant).filter(name=name).first()
    if recipe is None:
        raise NotFound(f"No recipe {name!r} in this tenant.", field="recipe")
    return recipe


@member_page
def recipe_list(request: HttpRequest, tenant: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    recipes = [
        {"recipe": recipe, "options": RenderOptions.from_recipe(recipe.params)}
        for recipe in selectors.recipe_list(tenant=access.tenant)
    ]
    return render(
        request,
        "agentdocs/recipes.html",
        {"access": access, "tenant": access.tenant, "recipes": recipes},
    )


@member_page
@require_http_methods(["GET", "POST"])
def recipe_create(request: HttpRequest, tenant: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    access.require_admin()
    status = 200
    if request.method == "POST":
        form = RecipeForm(request.POST)
        if form.is_valid():
            try:
                recipe = policy_service.recipe_create(
                    tenant=access.tenant,
                    name=form.cleaned_data["name"],
                    params=form.cleaned_data["params"],
                    profiles=form.cleaned_data["profiles"],
                    user=request.user,
                    reason=form.cleaned_data["reason"],
                )
            except SecretDetected as error:
                status = error.status
                add_service_error(form, error)
            except (InvalidInput, AlreadyExists) as error:
                status = 400
                add_service_error(form, error)
            else:
                messages.success(request, f"Created the recipe {recipe.name}.")
                return redirect("recipe", tenant=access.tenant.slug, name=recipe.name)
        else:
            status = 400
    else:
        form = RecipeForm(initial={"params": {}, "profiles": {}})
    return render(
        request,
        "agentdocs/recipe_form.html",
        {"access": access, "tenant": access.tenant, "form": form, "creating": True},
        status=status,
    )


@member_page
@require_http_methods(["GET", "POST"])
def recipe_detail(request: HttpRequest, tenant: str, name: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    recipe = _recipe(access, name)
    status = 200
    form = RecipeForm(
        initial={"name": recipe.name, "params": recipe.params, "profiles": recipe.profiles}
    )
    if request.method == "POST":
        access.require_admin()
        # The name identifies the recipe; it is not edited here.
        data = request.POST.copy()
        data["name"] = recipe.name
        form = RecipeForm(data)
        if form.is_valid():
            try:
                policy_service.recipe_update(
                    recipe=recipe,
                    params=form.cleaned_data["params"],
                    profiles=form.cleaned_data["profiles"],
                    user=request.user,
                    reason=form.cleaned_data["reason"],
                )
            except SecretDetected as error:
                status = error.status
                add_service_error(form, error)
            except InvalidInput as error:
                status = 400
                add_service_error(form, error)
            else:
                messages.success(request, f"Saved the recipe {recipe.name}.")
                return redirect("recipe", tenant=access.tenant.slug, name=recipe.name)
        else:
            status = 400
    return render(
        request,
        "agentdocs/recipe.html",
        {
            "access": access,
            "tenant": access.tenant,
            "recipe": recipe,
            "options": RenderOptions.from_recipe(recipe.params),
            "profiles": sorted((recipe.profiles or {}).items()),
            "projects": list(selectors.project_list(tenant=access.tenant)),
            "form": form,
        },
        status=status,
    )


@member_page
@require_http_methods(["GET", "POST"])
def recipe_delete(request: HttpRequest, tenant: str, name: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    recipe = _recipe(access, name)
    access.require_admin()
    if request.method == "POST":
        policy_service.recipe_delete(
            recipe=recipe, user=request.user, reason=request.POST.get("reason", "")[:500]
        )
        messages.success(request, f"Deleted the recipe {name}.")
        return redirect("recipes", tenant=access.tenant.slug)
    return render(
        request,
        "agentdocs/recipe_delete.html",
        {"access": access, "tenant": access.tenant, "recipe": recipe},
    )

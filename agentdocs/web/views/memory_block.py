"""The Memory Block preview: exactly the text an agent process of this project receives."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from agentdocs import permissions, ratelimit
from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.core.labels import LATEST, validate_label_name
from agentdocs.core.memory_block import LayerKind
from agentdocs.selectors import labels as label_selectors
from agentdocs.selectors import policy as policy_selectors
from agentdocs.services.memory_block import render_memory_block
from agentdocs.validation.memory_block import validate_client_document, validate_paths
from agentdocs.web.forms.memory_block import MemoryBlockPreviewForm
from agentdocs.web.pages import member_page

LAYER_TITLES = {
    LayerKind.POLICY: "Policy",
    LayerKind.AGENT_NOTES: "Agent notes",
    LayerKind.CLIENT_NOTES: "Client agent notes",
    LayerKind.CONTEXT: "Project context",
    LayerKind.SKILLS: "Skills",
}


def _budget(context) -> dict:
    budget = context.budget_bytes
    percent = 100 * context.used_bytes / budget if budget else 0
    # A sliver stays visible for a small but non-zero use.
    shown = max(1, round(percent)) if context.used_bytes else 0
    return {"percent": min(shown, 100)}


@member_page
@require_http_methods(["GET", "POST"])
def memory_block_preview(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    """A preview renders every layer in full and touches no process's read state.

    GET takes recipe, profile, label and paths from the query string (links to a
    preview); POST also takes a client document, too long for a URL. A label reads each
    document at its version under it, or its latest where it has none, as the API's
    preview does; empty, the recipe's `params.label`."""
    access = permissions.project_access(request.user, tenant, project)
    recipes = list(policy_selectors.recipe_list(tenant=access.tenant))
    form = MemoryBlockPreviewForm(request.POST if request.method == "POST" else request.GET)
    block = None
    status = 200
    profiles: list[str] = []
    ignored_profile = ""
    if form.is_valid():
        recipe_name = form.cleaned_data["recipe"] or None
        profile_name = form.cleaned_data["profile"] or None
        recipe = next((r for r in recipes if r.name == recipe_name), None)
        profiles = sorted((recipe.profiles or {}).keys()) if recipe else []
        if profile_name and (recipe_name is None or recipe) and profile_name not in profiles:
            # Left over from another recipe: preview this one without it, and say so.
            ignored_profile, profile_name = profile_name, None
        try:
            client_document = None
            if form.cleaned_data["client_document_body"]:
                client_document = validate_client_document(
                    name=form.cleaned_data["client_document_name"],
                    body=form.cleaned_data["client_document_body"],
                )
            label = form.cleaned_data["label"]
            block = render_memory_block(
                project=access.project,
                recipe_name=recipe_name,
                profile_name=profile_name,
                client_document=client_document,
                preview=True,
                paths=validate_paths(form.cleaned_data["paths"]),
                # `latest` stays: it overrides the recipe's label, as on the API.
                label=validate_label_name(label) if label else None,
                rate_limit=ratelimit.windows(("preview_user", ratelimit.user_key(access.user.pk))),
            )
        except (NotFound, InvalidInput) as error:
            if error.field not in PREVIEW_FIELDS:
                raise
            status = error.status  # an unknown recipe stays 404, as on the API
            form.add_error(PREVIEW_FIELDS[error.field], error.detail)
    else:
        status = 400
    layers = [
        {"layer": layer, "title": LAYER_TITLES.get(layer.kind, layer.kind)}
        for layer in (block.layers if block else ())
    ]
    response = render(
        request,
        "agentdocs/memory_block.html",
        {
            "access": access,
            "project": access.project,
            "form": form,
            "recipes": [recipe.name for recipe in recipes],
            "profiles": profiles,
            "ignored_profile": ignored_profile,
            "label_names": [LATEST, *label_selectors.label_names_in_use(project=access.project)],
            # Not "block": inside {% block %} tags that name is Django's own.
            "memory_block": block,
            "layers": layers,
            "block_bytes": len(block.text.encode("utf-8")) if block else 0,
            "budget": _budget(block.context) if block else None,
        },
        status=status,
    )
    if request.method == "POST" and request.headers.get("HX-Request"):
        # The address bar keeps what a link can carry: not the client document.
        response["HX-Push-Url"] = _preview_url(request, form)
    return response


# A refusal's field → the form field that shows it.
PREVIEW_FIELDS = {
    "recipe": "recipe",
    "profile": "profile",
    "paths": "paths",
    "label": "label",
    "client_document.name": "client_document_name",
    "client_document.body": "client_document_body",
}


def _preview_url(request: HttpRequest, form: MemoryBlockPreviewForm) -> str:
    query = {
        name: value
        for name in ("recipe", "profile", "label", "paths")
        if (value := form.data.get(name, "")) and isinstance(value, str)
    }
    return f"{request.path}?{urlencode(query)}" if query else request.path

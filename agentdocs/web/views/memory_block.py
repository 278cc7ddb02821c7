"""The Memory Block preview: exactly the text an agent process of this project receives."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agentdocs import permissions
from agentdocs.core.errors import InvalidInput, NotFound
from agentdocs.core.memory_block import LayerKind
from agentdocs.selectors import policy as policy_selectors
from agentdocs.services.memory_block import render_memory_block, validate_paths
from agentdocs.web.forms import MemoryBlockPreviewForm
from agentdocs.web.pages import add_service_error, member_page

LAYER_TITLES = {
    LayerKind.POLICY: "Policy",
    LayerKind.AGENT_NOTES: "Agent notes",
    LayerKind.CLIENT_NOTES: "Client agent notes",
    LayerKind.CONTEXT: "Project context",
}


def _budget(context) -> dict:
    budget = context.budget_bytes
    percent = 100 * context.used_bytes / budget if budget else 0
    # A sliver stays visible for a small but non-zero use.
    shown = max(1, round(percent)) if context.used_bytes else 0
    return {"percent": min(shown, 100)}


@member_page
def memory_block_preview(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    """A preview renders every layer in full and touches no process's read state."""
    access = permissions.project_access(request.user, tenant, project)
    recipes = list(policy_selectors.recipe_list(tenant=access.tenant))
    form = MemoryBlockPreviewForm(request.GET)
    block = None
    status = 200
    if form.is_valid():
        try:
            block = render_memory_block(
                project=access.project,
                recipe_name=form.cleaned_data["recipe"] or None,
                profile_name=form.cleaned_data["profile"] or None,
                preview=True,
                paths=validate_paths(form.cleaned_data["paths"]),
            )
        except (NotFound, InvalidInput) as error:
            if error.field not in ("recipe", "profile", "paths"):
                raise
            status = 400
            add_service_error(form, error)
    else:
        status = 400
    layers = [
        {"layer": layer, "title": LAYER_TITLES.get(layer.kind, layer.kind)}
        for layer in (block.layers if block else ())
    ]
    return render(
        request,
        "agentdocs/memory_block.html",
        {
            "access": access,
            "project": access.project,
            "form": form,
            "recipes": [
                {"name": recipe.name, "profiles": sorted((recipe.profiles or {}).keys())}
                for recipe in recipes
            ],
            # Not "block": inside {% block %} tags that name is Django's own.
            "memory_block": block,
            "layers": layers,
            "block_bytes": len(block.text.encode("utf-8")) if block else 0,
            "budget": _budget(block.context) if block else None,
        },
        status=status,
    )

"""Home, tenant and project pages: where a signed-in member finds their documents."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agentdocs import permissions
from agentdocs.core.errors import AgentdocsError
from agentdocs.core.memory_block import LayerKind
from agentdocs.core.recipes import RenderOptions
from agentdocs.models import RESERVED_PROJECT
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import policy as policy_selectors
from agentdocs.selectors import repositories as repository_selectors
from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.services.memory_block import render_memory_block
from agentdocs.web.pages import list_page, member_page

AGENT_DOCUMENT = "agent.md"
PROJECTS_PER_PAGE = 100
HOME_TENANTS_PER_PAGE = 20
HOME_PROJECTS_SHOWN = 12
DOCUMENTS_PER_PAGE = 100


def home_page(request: HttpRequest, *, refusal: AgentdocsError | None = None) -> HttpResponse:
    """The home page; after a refused accept or decline, with the refusal's sentence and
    its status (409 for an invitation decided already)."""
    user = permissions.signed_in(request.user)
    tenants = list_page(
        request,
        tenancy_selectors.tenant_overview_for(user=user, projects_shown=HOME_PROJECTS_SHOWN),
        per_page=HOME_TENANTS_PER_PAGE,
    )
    invitations = list(tenancy_selectors.invitation_list_for(user=user))
    return render(
        request,
        "agentdocs/home.html",
        {"tenants": tenants, "invitations": invitations, "refusal": refusal},
        status=refusal.status if refusal is not None else 200,
    )


@member_page
def home(request: HttpRequest) -> HttpResponse:
    """The tenants the user is a member of and their projects, and the invitations
    waiting for their answer."""
    return home_page(request)


@member_page
def tenant_detail(request: HttpRequest, tenant: str) -> HttpResponse:
    access = permissions.tenant_access(request.user, tenant)
    projects = list_page(
        request,
        tenancy_selectors.project_list_with_document(tenant=access.tenant, path=AGENT_DOCUMENT),
        per_page=PROJECTS_PER_PAGE,
    )
    tenant_wide = document_selectors.tenant_wide_document(tenant=access.tenant, path=AGENT_DOCUMENT)
    return render(
        request,
        "agentdocs/tenant.html",
        {
            "access": access,
            "tenant": access.tenant,
            "projects": projects,
            "tenant_wide": tenant_wide,
            "reserved_project": RESERVED_PROJECT,
            "repositories": repository_selectors.repository_counts(tenant=access.tenant),
        },
    )


def _recipe_rows(recipes: list) -> list[dict]:
    """Each recipe with what it does to the agent document, in the cascade's words."""
    rows = []
    for recipe in recipes:
        options = RenderOptions.from_recipe(recipe.params)
        rows.append(
            {
                "recipe": recipe,
                "agent_document": options.agent_document,
                "agent_document_set": "agentDocument" in (recipe.params or {}),
                "profiles": sorted((recipe.profiles or {}).keys()),
            }
        )
    return rows


@member_page
def project_detail(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    access = permissions.project_access(request.user, tenant, project)
    # The agent notes exactly as the Memory Block resolves them with no recipe.
    block = render_memory_block(project=access.project, preview=True)
    return render(
        request,
        "agentdocs/project.html",
        {
            "access": access,
            "project": access.project,
            "documents": list_page(
                request,
                document_selectors.document_list(project=access.project),
                per_page=DOCUMENTS_PER_PAGE,
            ),
            "deleted_documents": list_page(
                request,
                document_selectors.deleted_document_list(project=access.project),
                per_page=DOCUMENTS_PER_PAGE,
                param="deleted_page",
            ),
            "agent_notes": block.layer(LayerKind.AGENT_NOTES),
            "context": block.context,
            "context_layer": block.layer(LayerKind.CONTEXT),
            "recipes": _recipe_rows(list(policy_selectors.recipe_list(tenant=access.tenant))),
            "may_write": access.may_write(),
            "reserved_project": RESERVED_PROJECT,
        },
    )

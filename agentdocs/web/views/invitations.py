"""The answers to an invitation from the home page: accept or decline, then back home.

Someone else's invitation is a 404, as in the API; one decided already is refused
on the home page with its status (409).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from agentdocs import permissions
from agentdocs.core.errors import AgentdocsError
from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.services import tenancy as tenant_service
from agentdocs.web.pages import member_page
from agentdocs.web.views.tenancy import home_page


@require_POST
@member_page
def invitation_accept(request: HttpRequest, invitation_id: int) -> HttpResponse:
    invitation = tenancy_selectors.invitation_get_for(
        user=permissions.signed_in(request.user), invitation_id=invitation_id
    )
    try:
        tenant_service.invitation_accept(
            invitation=invitation, user=permissions.signed_in(request.user)
        )
    except AgentdocsError as error:
        return home_page(request, refusal=error)
    return redirect("tenant", tenant=invitation.tenant.slug)


@require_POST
@member_page
def invitation_decline(request: HttpRequest, invitation_id: int) -> HttpResponse:
    invitation = tenancy_selectors.invitation_get_for(
        user=permissions.signed_in(request.user), invitation_id=invitation_id
    )
    try:
        tenant_service.invitation_decline(
            invitation=invitation, user=permissions.signed_in(request.user)
        )
    except AgentdocsError as error:
        return home_page(request, refusal=error)
    return redirect("home")

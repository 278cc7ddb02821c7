"""The access row token authentication read for a request, handed to the permission
module explicitly: ``permissions.project_access(request.user, tenant, project,
prefetched=prefetched_access(request))``."""

from __future__ import annotations

from rest_framework.request import Request

from agentdocs.api.authentication import TokenAuth
from agentdocs.permissions import PrefetchedAccess


def prefetched_access(request: Request) -> PrefetchedAccess | None:
    """The access row read with the request's API token, for its first access check
    only; None for any other authentication, and for every later check."""
    auth = request.auth
    if isinstance(auth, TokenAuth):
        return auth.take_prefetched_access()
    return None

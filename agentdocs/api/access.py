"""What token authentication hands the permission module, and the scope a request needs.

Every API view resolves its tenant, project or document here:
`request_tenant_access`, `request_project_access` and `request_document` pass
`agentdocs.permissions` the access row read with the token (first check only) and
the token's limits (every check), so a token-authenticated request's access check
asks the database nothing more.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from agentdocs import permissions
from agentdocs.api.authentication import TokenAuth
from agentdocs.core.errors import InsufficientScope
from agentdocs.models import ApiToken, Document, Scope
from agentdocs.permissions import Access, Intent, PrefetchedAccess, ProjectAccess
from agentdocs.services.memory_block import caller_of


def prefetched_access(request: Request, *, keep: bool = False) -> PrefetchedAccess | None:
    """What the request's API token brings to an access check; None for a session.
    ``keep``: the access row read with the token stays for the next check too."""
    auth = request.auth
    if isinstance(auth, TokenAuth):
        return auth.take_prefetched_access(keep=keep)
    return None


def request_tenant_access(request: Request, tenant: str) -> Access:
    """The request's user's access to ``tenant``: NotFound for outsiders."""
    return permissions.tenant_access(request.user, tenant, prefetched=prefetched_access(request))


def request_project_access(
    request: Request, tenant: str, project: str, *, keep_prefetched: bool = False
) -> ProjectAccess:
    """The request's user's access to ``project`` of ``tenant``: NotFound for outsiders.
    ``keep_prefetched``: a check before the request does anything, whose access row
    (read with the token) the request's next check uses again instead of reading it
    afresh, as nothing was written in between."""
    return permissions.project_access(
        request.user, tenant, project, prefetched=prefetched_access(request, keep=keep_prefetched)
    )


def request_document(
    request: Request,
    tenant: str,
    project: str,
    path: str,
    *,
    intent: Intent = "read",
    include_deleted: bool = False,
    bypass_review: bool = False,
) -> tuple[ProjectAccess, Document]:
    """The request's user's access to the project and the document at ``path`` there,
    for reading or writing (`permissions.document_for` says what is refused, in order)."""
    access = request_project_access(request, tenant, project)
    document = permissions.document_for(
        access, path, intent=intent, include_deleted=include_deleted, bypass_review=bypass_review
    )
    return access, document


def token_tenant_id(request: Request) -> int | None:
    """The one tenant a tenant-bound API token works in; None for any other caller."""
    auth = request.auth
    return auth.limits.tenant_id if isinstance(auth, TokenAuth) else None


def calling_token(request: Request) -> ApiToken | None:
    """The API token the request was sent with; None for a session."""
    auth = request.auth
    return auth.token if isinstance(auth, TokenAuth) else None


def caller(request: Request) -> str:
    """Whom a render's read state belongs to: the request's API token, or its user."""
    auth = request.auth
    token_id = auth.token.pk if isinstance(auth, TokenAuth) else None
    return caller_of(user_id=request.user.pk, token_id=token_id)


def required_scope(request: Request, view: Any) -> str:
    """The scope an operation needs: a view may name one per method in
    ``required_scopes``; otherwise reading needs `read` and any change `write`."""
    named = getattr(view, "required_scopes", {}).get(request.method)
    if named:
        return Scope(named).value
    # `.value`: the wire name, which messages print (a member's repr is `Scope.WRITE`).
    return Scope.READ.value if request.method in SAFE_METHODS else Scope.WRITE.value


class TokenScopePermission(BasePermission):
    """Refuses (403 insufficient_scope) an API token whose scopes do not reach what the
    operation needs; requests signed in with a session are not limited by scopes."""

    def has_permission(self, request: Request, view: Any) -> bool:
        require_scope(request, required_scope(request, view))
        return True


def token_allows(request: Request, needed: str) -> bool:
    """Whether the request may do what ``needed`` allows: its API token has the scope,
    or it is signed in with a session (not limited by scopes)."""
    auth = request.auth
    return not isinstance(auth, TokenAuth) or auth.token.allows(needed)


def require_scope(request: Request, needed: str) -> None:
    """InsufficientScope (403) when the request's API token does not have ``needed``;
    requests signed in with a session are not limited by scopes. What `/mcp/`'s tools
    check for the REST operation each one is."""
    auth = request.auth
    if isinstance(auth, TokenAuth) and not auth.token.allows(needed):
        raise InsufficientScope(
            f"This token's scopes ({', '.join(auth.token.scopes) or 'none'}) do not "
            f"include {needed!r}, which this request needs.",
            field=None,
            required_scope=needed,
        )

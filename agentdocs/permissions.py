"""The one place that decides who may read and write what.

Every API view and page resolves the tenant or project through this module,
then asks it before reading or writing. The rules live here; the row they are
applied to is read by `agentdocs.sql.access`. Outsiders (no membership in the tenant)
get NotFound for everything, so tenant and project names do not leak; members
without the right get Forbidden.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User

from agentdocs.core.errors import AdminOnly, ChangeForbidden, InsufficientScope, NotFound
from agentdocs.core.labels import validate_movable_label
from agentdocs.core.paths import is_reserved_path, validate_path
from agentdocs.models import (
    ApiToken,
    ChangeRequest,
    Document,
    Project,
    Review,
    ReviewDecision,
    Role,
    Scope,
    Tenant,
)
from agentdocs.selectors import documents as document_selectors
from agentdocs.selectors import review as review_selectors
from agentdocs.selectors import tenancy as tenancy_selectors
from agentdocs.sql import access as access_sql
from agentdocs.sql.access import AccessRow

AnyUser = AbstractBaseUser | AnonymousUser

_WRITERS = {Role.WRITER, Role.ADMIN}

# What a view means to do with a document it asks for (`document_for`).
Intent = Literal["read", "write"]


@dataclass(frozen=True, kw_only=True)
class Access:
    """What one signed-in user may do in one tenant (and, when given, one project).

    Views pass ``access.user`` to the services: it is the request's user, known by
    now to be signed in and a member.
    """

    user: User
    tenant: Tenant
    role: Role
    project: Project | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == Role.ADMIN

    def is_reserved(self, path: str | None = None) -> bool:
        """The tenant's `_vance` project and any `_vance/` path are admin-only to write."""
        in_reserved_project = self.project is not None and self.project.is_reserved
        return in_reserved_project or (path is not None and is_reserved_path(path))

    def may_read(self, path: str | None = None) -> bool:
        return True  # every member reads everything in the tenant, `_vance` included

    def may_write(self, path: str | None = None) -> bool:
        if self.is_reserved(path):
            return self.is_admin
        return self.role in _WRITERS

    def require_write(self, path: str | None = None) -> None:
        if self.may_write(path):
            return
        if self.is_reserved(path):
            raise ChangeForbidden(
                "The reserved `_vance` space is written by tenant admins only.", field="path"
            )
        raise ChangeForbidden(
            f"Your role in this tenant is {self.role}; writing needs writer or admin."
        )

    def require_admin(self, detail: str = "Only tenant admins may do this.") -> None:
        """``detail`` says what is reserved, for the refusal (the 403 page, the API)."""
        if not self.is_admin:
            raise AdminOnly(detail)

    @property
    def may_bypass_review(self) -> bool:
        """Tenant admins change protected paths without a change request, and are the
        reviewers who move a protected label (`review.protectedLabels`)."""
        return self.is_admin

    def require_bypass_review(self) -> None:
        """Writing a path `review.required` protects without a review is a tenant
        admin's, as the role a token's scopes leave it (an admin's `write` token may not)."""
        if not self.may_bypass_review:
            raise AdminOnly("Only tenant admins may bypass review.", field="bypass_review")

    def may_move_label(self, path: str | None, *, label: str, protected: Sequence[str]) -> bool:
        """The one rule for a label's rights: moving or removing the label ``label`` of
        the document at ``path`` is writing it (admins for `_vance`), and a label
        `review.protectedLabels` names is a reviewer's (tenant admins). The API, the
        pages and the review of a change request that moves or removes it ask this."""
        return self.may_write(path) and (label not in protected or self.may_bypass_review)

    def require_move_label(self, path: str | None, *, label: str, protected: Sequence[str]) -> None:
        """`may_move_label`, or Forbidden: naming `path` for a role that may not write
        it, `label` for a protected label."""
        self.require_write(path)
        if not self.may_move_label(path, label=label, protected=protected):
            raise ChangeForbidden(
                f"The label `{label}` is protected by `review.protectedLabels`: only "
                "reviewers (tenant admins) move or remove it.",
                field="label",
            )

    def may_review(self, path: str, *, label: str = "", protected: Sequence[str] = ()) -> bool:
        """Who reviews and merges a change request of the document at ``path``: a
        writer of the path; for one that moves or removes the label ``label``, whoever
        may move that label (`may_move_label`). An approval counts only while its
        reviewer still may (`approvals_that_count`)."""
        if label:
            return self.may_move_label(path, label=label, protected=protected)
        return self.may_write(path)

    def require_review(self, path: str, *, label: str = "", protected: Sequence[str] = ()) -> None:
        if label:
            self.require_move_label(path, label=label, protected=protected)
        else:
            self.require_write(path)


@dataclass(frozen=True, kw_only=True)
class ProjectAccess(Access):
    """Access to one project of the tenant: what `project_access` returns."""

    project: Project


def document_for(
    access: ProjectAccess,
    path: str,
    *,
    intent: Intent = "read",
    include_deleted: bool = False,
    bypass_review: bool = False,
) -> Document:
    """The document at ``path`` in the access's project, for reading or writing.

    In this order: a path that is not one is refused (400, naming `path`); to write,
    a role that may not write the path is refused (403), and so is asking to bypass
    review without being a tenant admin; then the document, NotFound when there is
    none (or it is deleted, unless ``include_deleted``: history, diffs and reverts
    read deleted documents too)."""
    validate_path(path)
    if intent == "write":
        access.require_write(path)
    if bypass_review:
        access.require_bypass_review()
    return document_selectors.document_get(
        project=access.project, path=path, include_deleted=include_deleted
    )


def movable_label_for(access: ProjectAccess, document: Document, label: object) -> str:
    """The label's rights, decided once for a move or a removal from the API, the pages
    and anything else: the label's name (InvalidInput naming `label` when it is not a
    slug, or is `latest`), when the member may move or remove it (`may_move_label`,
    with the project's `review.protectedLabels`); ChangeForbidden otherwise. The name
    it returns is the checked one the services take."""
    name = validate_movable_label(label, field="label")
    protected = review_selectors.review_policy(project=access.project).protected_labels
    access.require_move_label(document.path, label=name, protected=protected)
    return name


def movable_skill_label_for(access: ProjectAccess, label: object) -> str:
    """A skill label's rights, as a document label's (`movable_label_for`): moving or
    removing it is writing the project's skills (tenant admins in `_vance`), and a
    label `review.protectedLabels` names is a reviewer's. The checked name."""
    name = validate_movable_label(label, field="label")
    protected = review_selectors.review_policy(project=access.project).protected_labels
    access.require_move_label(None, label=name, protected=protected)
    return name


def require_change_review(access: ProjectAccess, change: ChangeRequest) -> None:
    """Reviewing and merging a change request are for whoever may review it
    (`Access.may_review`): a writer of its path, and of a label's change whoever may
    move that label (`may_move_label`)."""
    protected = (
        review_selectors.review_policy(project=change.project).protected_labels
        if change.label
        else ()
    )
    access.require_review(change.path, label=change.label, protected=protected)


def signed_in(user: AnyUser) -> User:
    """The user, when signed in; NotFound (as for any outsider) otherwise."""
    if not isinstance(user, User) or not user.is_authenticated:
        raise NotFound("No such tenant.", field="tenant")
    return user


def _effective_role(user: AnyUser, membership_role: str | None) -> Role | None:
    if getattr(user, "is_superuser", False):
        return Role.ADMIN
    return Role(membership_role) if membership_role else None


_ROLE_ORDER = (Role.READER, Role.WRITER, Role.ADMIN)


@dataclass(frozen=True)
class TokenLimits:
    """What an API token narrows: the one tenant it works in (None: every tenant of its
    user) and the highest role its scopes reach. The user's current role still applies:
    the effective role is the smaller of the two."""

    tenant_id: int | None
    ceiling: Role


@dataclass(frozen=True)
class PrefetchedAccess:
    """What token authentication read with the token: an access row for these slugs
    (a check of the same tenant and project uses it instead of asking the database
    again; ``project_slug`` is None for a tenant's access, ``row`` None once it has
    been used) and the token's limits, which apply to every check of the request."""

    tenant_slug: str
    project_slug: str | None
    row: AccessRow | None
    limits: TokenLimits | None = None


def token_limits(token: ApiToken) -> TokenLimits:
    """What ``token`` narrows: its tenant binding and the role its scopes reach."""
    return TokenLimits(tenant_id=token.tenant_id, ceiling=token.role_ceiling)


def token_with_access(
    *, key_hash: str, tenant_slug: str, project_slug: str | None
) -> tuple[ApiToken, PrefetchedAccess] | None:
    """The API token whose key hashes to ``key_hash`` (with ``token.user``) and its
    user's access row for the tenant or project, as the request's prefetched access, in
    one query; None for an unknown key. Token authentication calls this for a request
    whose path names a tenant, so the view's access check asks the database nothing."""
    row = access_sql.token_and_access_row(
        key_hash=key_hash, tenant_slug=tenant_slug, project_slug=project_slug
    )
    if row is None:
        return None
    prefetched = PrefetchedAccess(
        tenant_slug=tenant_slug,
        project_slug=project_slug,
        row=row.access,
        limits=token_limits(row.token),
    )
    return row.token, prefetched


def _access_row(
    user: User,
    tenant_slug: str,
    project_slug: str | None,
    prefetched: PrefetchedAccess | None,
) -> AccessRow:
    if (
        prefetched is not None
        and prefetched.row is not None
        and (prefetched.tenant_slug, prefetched.project_slug) == (tenant_slug, project_slug)
    ):
        return prefetched.row
    return access_sql.access_row(
        user_id=user.pk, tenant_slug=tenant_slug, project_slug=project_slug
    )


def _tenant_and_role(
    user: AnyUser, row: AccessRow, limits: TokenLimits | None
) -> tuple[Tenant, Role]:
    """The tenant and the user's role (capped by the token's limits), or NotFound alike
    for unknown and foreign tenants, and for tenants the token is not bound to."""
    if row.tenant is None:
        raise NotFound("No such tenant.", field="tenant")
    role = _effective_role(user, row.membership_role)
    if role is None:
        raise NotFound("No such tenant.", field="tenant")
    if limits is not None:
        if limits.tenant_id is not None and limits.tenant_id != row.tenant.pk:
            raise NotFound("No such tenant.", field="tenant")
        role = min(role, limits.ceiling, key=_ROLE_ORDER.index)
    return row.tenant, role


def tenant_access(
    user: AnyUser, tenant_slug: str, *, prefetched: PrefetchedAccess | None = None
) -> Access:
    """The user's access to a tenant, in one query (none when ``prefetched`` holds the
    row for this tenant); NotFound for outsiders."""
    member = signed_in(user)
    row = _access_row(member, tenant_slug, None, prefetched)
    tenant, role = _tenant_and_role(member, row, prefetched.limits if prefetched else None)
    return Access(user=member, tenant=tenant, role=role)


def project_access(
    user: AnyUser,
    tenant_slug: str,
    project_slug: str,
    *,
    prefetched: PrefetchedAccess | None = None,
) -> ProjectAccess:
    """The user's access to a project, in one query (none when ``prefetched`` holds the
    row for this project); NotFound for outsiders.

    An outsider cannot tell an unknown tenant from a known one: both are
    "No such tenant". Only a member learns that a project does not exist.
    """
    member = signed_in(user)
    row = _access_row(member, tenant_slug, project_slug, prefetched)
    tenant, role = _tenant_and_role(member, row, prefetched.limits if prefetched else None)
    if row.project is None:
        raise NotFound("No such project.", field="project")
    return ProjectAccess(user=member, tenant=tenant, role=role, project=row.project)


def approvals_that_count(
    *,
    tenant: Tenant,
    project: Project,
    path: str,
    label: str,
    protected: Sequence[str],
    reviewers: Sequence[User | None],
) -> list[bool]:
    """Whether the approval of each of ``reviewers`` of a change request of ``path``
    (moving or removing ``label``, when given) counts now: only while its reviewer still
    may review it (`Access.may_review`) with their role in the tenant today. A reviewer
    demoted to reader, removed from the tenant, deactivated or deleted (None) no longer
    counts. One query (none without reviewers)."""
    present = [user for user in reviewers if user is not None]
    roles = tenancy_selectors.member_roles(
        tenant_id=tenant.pk, user_ids=[user.pk for user in present]
    )
    counts: list[bool] = []
    for user in reviewers:
        role = None if user is None else _effective_role(user, roles.get(user.pk))
        if user is None or role is None or not user.is_active:
            counts.append(False)
            continue
        access = Access(user=user, tenant=tenant, role=role, project=project)
        counts.append(access.may_review(path, label=label, protected=protected))
    return counts


@dataclass(frozen=True)
class Approval:
    """One reviewer's approval of a change request, and whether it counts now."""

    reviewer: str
    counts: bool


def approvals(
    change: ChangeRequest,
    *,
    reviews: Sequence[Review] | None = None,
    protected: Sequence[str] | None = None,
) -> list[Approval]:
    """Each approval, by reviewer, once, in the order they came, and whether it counts:
    only while its reviewer still may review the change request
    (`approvals_that_count`), so an approval by a reviewer since demoted to
    reader, removed from the tenant or deleted no longer counts. ``reviews`` (with their
    reviewers) and ``protected`` (`review.protectedLabels`) when the caller has them."""
    if reviews is None:
        reviews = list(change.reviews.select_related("reviewer"))
    approving: list[Review] = []
    for review in reviews:
        if review.decision != ReviewDecision.APPROVE:
            continue
        if review.reviewer_id is None or all(
            seen.reviewer_id != review.reviewer_id for seen in approving
        ):
            approving.append(review)
    if protected is None and change.label and approving:
        protected = review_selectors.review_policy(project=change.project).protected_labels
    counts = approvals_that_count(
        tenant=change.tenant,
        project=change.project,
        path=change.path,
        label=change.label,
        protected=protected or (),
        reviewers=[review.reviewer for review in approving],
    )
    return [
        Approval(
            reviewer=review.reviewer.get_username() if review.reviewer else "(deleted user)",
            counts=counted,
        )
        for review, counted in zip(approving, counts, strict=True)
    ]


def approvers(change: ChangeRequest, **known: Any) -> list[str]:
    """The usernames whose approvals count now (`approvals`), in the order they came."""
    return [approval.reviewer for approval in approvals(change, **known) if approval.counts]


def may_create_tenants(user: AnyUser) -> bool:
    if not user.is_authenticated:
        return False
    if settings.AGENTDOCS_TENANT_CREATORS == "authenticated":
        return True
    return bool(getattr(user, "is_superuser", False))


# What an API token may do with other tokens.


def token_mint_check(
    *,
    minter: ApiToken,
    scopes: Sequence[str],
    tenant_slug: str | None,
    expires_in_days: int | None,
    now: datetime,
) -> None:
    """A token creates only a token within itself, so a leaked token can never be turned
    into a broader or longer-lived one: the new token's scopes are within its own, the
    minter holds the `admin` scope, the new token is bound to the minter's tenant when
    the minter is bound, and it expires no later than the minter. InsufficientScope
    (403) names the field that asks for more (None when the minter lacks `admin`). A
    session's user is limited by their role alone: views call this for tokens only."""
    held = ", ".join(scope for scope in Scope.values if scope in (minter.scopes or [])) or "none"
    beyond = [scope for scope in scopes if not minter.allows(scope)]
    if beyond:
        raise InsufficientScope(
            f"This token's scopes ({held}) do not include {beyond[0]!r}: a token creates "
            "only tokens within its own scopes.",
            field="scopes",
            required_scope=beyond[0],
        )
    if not minter.allows(Scope.ADMIN):
        raise InsufficientScope(
            f"This token's scopes ({held}) do not include 'admin', which creating a token needs.",
            field=None,
            required_scope=Scope.ADMIN.value,
        )
    if minter.tenant is not None:
        bound_to = minter.tenant.slug
        if tenant_slug != bound_to:
            raise InsufficientScope(
                f"This token works only in tenant {bound_to!r}, so a token it creates must "
                f"be bound to {bound_to!r} too.",
                field="tenant",
            )
    if minter.expires_at is not None:
        expires_at = now + timedelta(days=expires_in_days) if expires_in_days else None
        if expires_at is None or expires_at > minter.expires_at:
            whole_days = (minter.expires_at - now).days
            raise InsufficientScope(
                f"This token expires at {minter.expires_at:%Y-%m-%d %H:%M} UTC, so a token "
                "it creates must expire no later: "
                + (
                    f"give `expires_in_days` of at most {whole_days}."
                    if whole_days >= 1
                    else "it has less than a day left, too little for any token it creates."
                ),
                field="expires_in_days",
            )

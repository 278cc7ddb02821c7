"""Tenants, projects, memberships and the invitations that lead to them."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from agentdocs.core.errors import (
    AgentdocsError,
    AlreadyExists,
    InvalidInput,
    NotFound,
    Unprocessable,
)
from agentdocs.core.paths import looks_reserved
from agentdocs.core.stored_text import refuse_hidden_or_secret
from agentdocs.models import (
    RESERVED_PROJECT,
    ChangeType,
    Invitation,
    InvitationState,
    Membership,
    Project,
    Role,
    Tenant,
)
from agentdocs.models.history import mark_change
from agentdocs.services import events

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")


def _validate_slug(slug: object, *, field: str = "slug", allow_reserved: bool = False) -> str:
    if not isinstance(slug, str):
        raise InvalidInput("The slug must be a string.", field=field)
    if slug != RESERVED_PROJECT and looks_reserved(slug) and not allow_reserved:
        raise InvalidInput(
            f"The slug {slug!r} looks like the reserved `_vance` project, which is "
            "created with the tenant; choose one that cannot be mistaken for it.",
            field=field,
        )
    if slug.startswith("_") and not allow_reserved:
        raise InvalidInput(
            "Slugs starting with '_' are reserved (the tenant-wide `_vance` project "
            "is created with the tenant).",
            field=field,
        )
    if not _SLUG.match(slug):
        raise InvalidInput(
            "A slug is 1-64 characters of lowercase letters, digits and '-', "
            "starting with a letter or digit.",
            field=field,
        )
    return slug


def _validate_name(name: object, *, field: str = "name") -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("The name must be a non-empty string.", field=field)
    if len(name) > 200:
        raise InvalidInput("The name is longer than 200 characters.", field=field)
    refuse_hidden_or_secret(name.strip(), field=field, what="The name")
    return name.strip()


@transaction.atomic
def tenant_create(*, slug: str, name: str, user: User | None) -> Tenant:
    """Create a tenant with its reserved `_vance` project; the creator becomes its admin."""
    _validate_slug(slug)
    name = _validate_name(name)
    if Tenant.objects.filter(slug=slug).exists():
        raise AlreadyExists(f"A tenant {slug!r} already exists.", field="slug")
    try:
        with transaction.atomic():
            tenant = mark_change(
                Tenant(slug=slug, name=name),
                user=user,
                reason="Tenant created",
                change_type=ChangeType.CREATED,
            )
            tenant.save()
    except IntegrityError:
        raise AlreadyExists(f"A tenant {slug!r} already exists.", field="slug") from None
    mark_change(
        Project(tenant=tenant, slug=RESERVED_PROJECT, name="Tenant-wide (_vance)"),
        user=user,
        reason="Reserved project created with the tenant",
        change_type=ChangeType.CREATED,
    ).save()
    if user is not None:
        membership = mark_change(
            Membership(user=user, tenant=tenant, role=Role.ADMIN),
            user=user,
            reason="Tenant creator",
            change_type=ChangeType.CREATED,
        )
        membership.save()
        _membership_changed(
            membership, action="created", previous_role=None, actor=user, reason="Tenant creator"
        )
    return tenant


def project_create(*, tenant: Tenant, slug: str, name: str, user: User | None) -> Project:
    _validate_slug(slug)
    name = _validate_name(name)
    try:
        with transaction.atomic():
            project = mark_change(
                Project(tenant=tenant, slug=slug, name=name),
                user=user,
                reason="Project created",
                change_type=ChangeType.CREATED,
            )
            project.save()
    except IntegrityError:
        raise AlreadyExists(
            f"A project {slug!r} already exists in this tenant.", field="slug"
        ) from None
    return project


def _validate_role(role: object) -> Role:
    if not isinstance(role, str) or role not in Role.values:
        raise InvalidInput(f"The role must be one of {', '.join(Role.values)}.", field="role")
    return Role(role)


def _other_admins_exist(tenant: Tenant, user_id: int) -> bool:
    return (
        Membership.objects.filter(tenant=tenant, role=Role.ADMIN).exclude(user_id=user_id).exists()
    )


@transaction.atomic
def membership_set(
    *, tenant: Tenant, username: str, role: str, actor: User, reason: str = ""
) -> tuple[Membership, bool]:
    """Give ``username`` ``role`` in the tenant. Returns (membership, created)."""
    role = _validate_role(role)
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"No user {username!r}.", field="username")
    # Lock the tenant's admin rows so two demotions cannot both pass the last-admin check.
    list(Membership.objects.select_for_update().filter(tenant=tenant, role=Role.ADMIN))
    membership = Membership.objects.filter(tenant=tenant, user=user).first()
    if membership is None:
        reason = reason or f"Added as {role}"
        membership = mark_change(
            Membership(tenant=tenant, user=user, role=role),
            user=actor,
            reason=reason,
            change_type=ChangeType.CREATED,
        )
        membership.save()
        _membership_changed(
            membership, action="created", previous_role=None, actor=actor, reason=reason
        )
        return membership, True
    if membership.role == role:
        return membership, False
    if membership.role == Role.ADMIN and not _other_admins_exist(tenant, user.pk):
        raise Unprocessable(
            "This is the tenant's last admin; make someone else admin first.", field="role"
        )
    previous_role = membership.role
    membership.role = role
    reason = reason or f"Role changed to {role}"
    mark_change(membership, user=actor, reason=reason, change_type=ChangeType.UPDATED).save()
    _membership_changed(
        membership, action="updated", previous_role=previous_role, actor=actor, reason=reason
    )
    return membership, False


@transaction.atomic
def membership_remove(*, tenant: Tenant, username: str, actor: User, reason: str = "") -> None:
    list(Membership.objects.select_for_update().filter(tenant=tenant, role=Role.ADMIN))
    membership = (
        Membership.objects.select_related("user")
        .filter(tenant=tenant, user__username=username)
        .first()
    )
    if membership is None:
        raise NotFound(f"{username!r} is not a member of this tenant.", field="username")
    if membership.role == Role.ADMIN and not _other_admins_exist(tenant, membership.user_id):
        raise Unprocessable(
            "This is the tenant's last admin and cannot be removed.", field="username"
        )
    reason = reason or "Removed"
    mark_change(membership, user=actor, reason=reason, change_type=ChangeType.DELETED)
    membership.delete()
    _membership_changed(
        membership, action="deleted", previous_role=membership.role, actor=actor, reason=reason
    )


def _membership_changed(
    membership: Membership,
    *,
    action: str,
    previous_role: str | None,
    actor: User,
    reason: str,
) -> None:
    tenant = membership.tenant
    username = membership.user.get_username()
    data: events.MembershipEventData = {
        "username": username,
        "action": action,
        "role": None if action == "deleted" else membership.role,
        "previous_role": previous_role,
        "actor": actor.get_username(),
        "reason": reason,
    }
    events.emit(
        type=events.MEMBERSHIP_CHANGED,
        action=action,
        tenant=tenant,
        project=None,
        actor=actor,
        target=username,
        reason=reason,
        data=data,
    )


class InvitationDecided(AgentdocsError):
    """The invitation was already accepted, declined or cancelled."""

    code = "invitation_decided"
    status = 409


MAX_USERNAME_LENGTH = 150
MAX_EMAIL_LENGTH = 254


def _validate_invitation_target(username: str | None, email: str | None) -> tuple[str, str]:
    """(username, email) of an invitation: exactly one given, well-formed; an email is
    kept lowercased, as it is matched case-insensitively."""
    username = username or ""
    email = email or ""
    if username and email:
        raise InvalidInput("Invite by username or by email, not both.", field="email")
    if not username and not email:
        raise InvalidInput("Name the user to invite: a username or an email.", field="username")
    if username:
        try:
            if len(username) > MAX_USERNAME_LENGTH:
                raise ValidationError("too long")
            UnicodeUsernameValidator()(username)
        except ValidationError:
            raise InvalidInput(
                f"A username is 1-{MAX_USERNAME_LENGTH} letters, digits and @/./+/-/_.",
                field="username",
            ) from None
        return username, ""
    try:
        if len(email) > MAX_EMAIL_LENGTH:
            raise ValidationError("too long")
        validate_email(email)
    except ValidationError:
        raise InvalidInput("This is not an email address.", field="email") from None
    return "", email.lower()


@transaction.atomic
def invitation_create(
    *,
    tenant: Tenant,
    role: str,
    invited_by: User,
    username: str | None = None,
    email: str | None = None,
    reason: str = "",
) -> Invitation:
    """Invite a user, named by username or email, to the tenant with ``role``.

    Nothing here looks at the users: the work and the answer are the same whether or
    not such a user exists, so an invitation never tells a tenant admin who has an
    account. Inviting the same target again while an invitation is pending updates that
    one instead of adding another.
    """
    role = _validate_role(role)
    username, email = _validate_invitation_target(username, email)
    pending = (
        Invitation.objects.select_for_update()
        .filter(tenant=tenant, username=username, email=email, state=InvitationState.PENDING)
        .first()
    )
    if pending is not None:
        if pending.role != role:
            pending.role = role
            mark_change(
                pending,
                user=invited_by,
                reason=reason or f"Invited again, as {role}",
                change_type=ChangeType.UPDATED,
            ).save()
        return pending
    invitation = mark_change(
        Invitation(tenant=tenant, username=username, email=email, role=role, invited_by=invited_by),
        user=invited_by,
        reason=reason or f"Invited as {role}",
        change_type=ChangeType.CREATED,
    )
    invitation.save()
    return invitation


def _lock_pending(invitation: Invitation) -> Invitation:
    """The invitation read afresh under a row lock; InvitationDecided unless pending."""
    locked = (
        Invitation.objects.select_for_update(of=("self",))
        .select_related("tenant", "invited_by")
        .get(pk=invitation.pk)
    )
    if locked.state != InvitationState.PENDING:
        raise InvitationDecided(f"This invitation was already {locked.state}.", field="id")
    return locked


def _decide(
    invitation: Invitation,
    *,
    state: InvitationState,
    user: User,
    reason: str,
    accepted_user: User | None = None,
) -> Invitation:
    invitation.state = state
    invitation.decided_at = timezone.now()
    invitation.accepted_user = accepted_user
    mark_change(invitation, user=user, reason=reason, change_type=ChangeType.UPDATED).save()
    return invitation


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: User, reason: str = "") -> Invitation:
    """``user`` accepts an invitation meant for them: they become a member with its role
    (an existing member's role becomes the invited one). The membership's history says
    who invited and who accepted."""
    invitation = _lock_pending(invitation)
    inviter = invitation.invited_by.get_username() if invitation.invited_by else "someone"
    note = f"Invited by {inviter}, accepted by {user.get_username()}"
    membership_set(
        tenant=invitation.tenant,
        username=user.get_username(),
        role=invitation.role,
        actor=user,
        reason=f"{note}: {reason}" if reason else note,
    )
    return _decide(
        invitation,
        state=InvitationState.ACCEPTED,
        user=user,
        reason=reason or "Accepted",
        accepted_user=user,
    )


@transaction.atomic
def invitation_decline(*, invitation: Invitation, user: User, reason: str = "") -> Invitation:
    """``user`` declines an invitation meant for them; no membership is made."""
    invitation = _lock_pending(invitation)
    return _decide(
        invitation, state=InvitationState.DECLINED, user=user, reason=reason or "Declined"
    )


@transaction.atomic
def invitation_cancel(*, invitation: Invitation, actor: User, reason: str = "") -> Invitation:
    """A tenant admin withdraws a pending invitation."""
    invitation = _lock_pending(invitation)
    return _decide(
        invitation, state=InvitationState.CANCELLED, user=actor, reason=reason or "Cancelled"
    )


@transaction.atomic
def member_role_set_or_invite(
    *, tenant: Tenant, username: str, role: str, actor: User, reason: str = ""
) -> Membership | Invitation:
    """Change the role of an existing member (as `membership_set` does); anyone else is
    invited instead, with the same work and answer whether or not such a user exists."""
    role = _validate_role(role)
    if Membership.objects.filter(tenant=tenant, user__username=username).exists():
        membership, _ = membership_set(
            tenant=tenant, username=username, role=role, actor=actor, reason=reason
        )
        return membership
    return invitation_create(
        tenant=tenant, username=username, role=role, invited_by=actor, reason=reason
    )

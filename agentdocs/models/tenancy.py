"""Tenants, their projects and who may do what in them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from simple_history.models import HistoricalRecords

from agentdocs.models.history import HistoryChangeType

RESERVED_PROJECT = "_vance"


class Role(models.TextChoices):
    READER = "reader", "Reader"
    WRITER = "writer", "Writer"
    ADMIN = "admin", "Admin"


class Tenant(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Project(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="projects")
    slug = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "slug"], name="project_slug_unique_per_tenant"
            )
        ]

    def __str__(self) -> str:
        return f"{self.tenant.slug}/{self.slug}"

    @property
    def is_reserved(self) -> bool:
        return self.slug == RESERVED_PROJECT


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["tenant", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["user", "tenant"], name="one_membership_per_tenant")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.tenant} ({self.role})"


class InvitationState(models.TextChoices):
    PENDING = "pending", "Pending"
    ACCEPTED = "accepted", "Accepted"
    DECLINED = "declined", "Declined"
    CANCELLED = "cancelled", "Cancelled"


class Invitation(models.Model):
    """A tenant admin's offer of a role to a user, named by username or by email.

    The target is kept as written and matched against users when they look (an email
    case-insensitively), so creating one says nothing about whether such a user
    exists. Only its acceptance makes a membership.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="invitations")
    username = models.CharField(max_length=150, blank=True)
    email = models.EmailField(max_length=254, blank=True)
    role = models.CharField(max_length=16, choices=Role.choices)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)
    state = models.CharField(
        max_length=16, choices=InvitationState.choices, default=InvitationState.PENDING
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    accepted_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(username="") & ~Q(email="")) | (~Q(username="") & Q(email="")),
                name="invitation_names_username_or_email",
            )
        ]
        indexes = [
            models.Index(fields=["state", "username"], name="invitation_state_username"),
            models.Index(fields=["state", "email"], name="invitation_state_email"),
        ]

    def __str__(self) -> str:
        return f"{self.username or self.email} to {self.tenant} as {self.role} ({self.state})"

    @property
    def target(self) -> str:
        return self.username or self.email

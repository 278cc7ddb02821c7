"""Versioned Markdown documents. Nothing here writes them: every change goes
through `agentdocs.services.documents`."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from django.conf import settings
from django.contrib.auth.models import User
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from agentdocs.models.history import HistoryChangeType
from agentdocs.models.tenancy import Project


class SecretAcknowledgement(models.TextChoices):
    """Why a writer saved a text the secret check refused: its history row says so."""

    FALSE_POSITIVE = "false_positive", "False positive"
    TEST_VALUE = "test_value", "Test value"


class HiddenAcknowledgement(models.TextChoices):
    """Why a writer saved a text holding characters a reader cannot see (bidi controls,
    zero-width or tag characters): its history row says so."""

    INTENDED = "intended", "Intended"


class Document(models.Model):
    """One versioned Markdown document at a path inside a project.

    A deleted document keeps its row (``is_deleted``) so that its versions stay
    numbered on one line and every earlier version can be restored.
    """

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="documents")
    path = models.CharField(max_length=255)
    body = models.TextField(blank=True)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField(default=0, help_text="Body length in UTF-8 bytes.")
    version = models.PositiveIntegerField()
    is_deleted = models.BooleanField(default=False)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    updated_at = models.DateTimeField()
    lock_holder = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    lock_expires_at = models.DateTimeField(null=True, blank=True)
    # Set by the write that saved a text the secret check refused, "" on every other
    # write: copied into the history row like the body, so each version says whether
    # (and why) its writer overrode the check.
    secret_acknowledgement = models.CharField(
        max_length=16, choices=SecretAcknowledgement.choices, blank=True, default=""
    )
    # Likewise for a text holding hidden characters (`core.hidden_characters`).
    hidden_acknowledgement = models.CharField(
        max_length=16, choices=HiddenAcknowledgement.choices, blank=True, default=""
    )
    # Set by a write whose base version was stale and that was merged (three-way) onto
    # the version current then: that version's number. None on every other write, and
    # copied into the history row like the body, so history says "merged with v7".
    merged_with = models.PositiveIntegerField(null=True, blank=True, default=None)

    # Change review (issue 13), set per write like the acknowledgement: a tenant admin
    # wrote a protected path directly (`bypass_review`), or the write merged a change request.
    review_bypassed = models.BooleanField(default=False)
    change_request = models.ForeignKey(
        "agentdocs.ChangeRequest",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    # Locks are coordination, not content: taking one writes no version.
    history = HistoricalRecords(
        bases=[HistoryChangeType], excluded_fields=["lock_holder", "lock_expires_at"]
    )

    class Meta:
        ordering = ["path"]
        constraints = [
            models.UniqueConstraint(fields=["project", "path"], name="document_path_unique"),
            models.CheckConstraint(condition=Q(version__gte=1), name="document_version_positive"),
        ]
        indexes = [models.Index(fields=["project", "is_deleted", "path"])]

    def __str__(self) -> str:
        return f"{self.project}:{self.path}@{self.version}"

    if TYPE_CHECKING:
        # Added by django-simple-history, which ships no type information.
        def save_without_historical_record(self, *, update_fields: list[str]) -> None: ...


class HistoricalDocument(Protocol):
    """One history row of a `Document`: one per version, never changed.

    django-simple-history builds this model when Django starts, so the type
    checker cannot see it; this declares the columns the services and views read.
    """

    history_id: int
    history_date: datetime
    history_user: User | None
    history_change_reason: str | None
    change_type: str
    id: int
    project_id: int
    path: str
    body: str
    sha256: str
    size: int
    version: int
    is_deleted: bool
    secret_acknowledgement: str
    hidden_acknowledgement: str
    merged_with: int | None

    review_bypassed: bool
    change_request_id: int | None

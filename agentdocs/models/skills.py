"""Skills (the Agent Skills format): a `SKILL.md` and its bundled text files, versioned
as one bundle. Nothing here writes them: every change goes through
`agentdocs.services.skills`."""

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


class Skill(models.Model):
    """One skill of a project (of the tenant, in its `_vance` project), by name.

    ``files`` holds the whole bundle, path to text (`SKILL.md`, `scripts/...`,
    `references/...`, `assets/...`), so each history row is a whole version of the
    skill: every change to any file writes one. A deleted skill keeps its row
    (``is_deleted``) so that its versions stay numbered on one line.
    """

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="skills")
    name = models.CharField(max_length=64)
    # The frontmatter's `description`, kept beside the files for lists and the index.
    description = models.TextField(blank=True, default="")
    files = models.JSONField(default=dict)
    sha256 = models.CharField(max_length=64, help_text="Digest of the bundle's manifest.")
    size = models.PositiveIntegerField(default=0, help_text="All files' UTF-8 bytes.")
    version = models.PositiveIntegerField()
    is_deleted = models.BooleanField(default=False)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    updated_at = models.DateTimeField()
    # The edit lock, as a document has it (`services.skill_locks`).
    lock_holder = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    lock_expires_at = models.DateTimeField(null=True, blank=True)
    # Set by a write whose base version was stale and that was merged (three-way, file
    # by file) onto the version current then: that version's number; None otherwise.
    merged_with = models.PositiveIntegerField(null=True, blank=True, default=None)

    # Locks are coordination, not content: taking one writes no version. `merged_with`
    # is not in the history rows either: a column added to a chained history table
    # would change the hash of every row already in the tenant's chain (the version's
    # event and the write's answer say it instead).
    history = HistoricalRecords(
        bases=[HistoryChangeType],
        excluded_fields=["lock_holder", "lock_expires_at", "merged_with"],
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="skill_name_unique"),
            models.CheckConstraint(condition=Q(version__gte=1), name="skill_version_positive"),
        ]
        indexes = [models.Index(fields=["project", "is_deleted", "name"])]

    def __str__(self) -> str:
        return f"{self.project}:skill/{self.name}@{self.version}"

    if TYPE_CHECKING:
        # Added by django-simple-history, which ships no type information.
        def save_without_historical_record(self, *, update_fields: list[str]) -> None: ...


class HistoricalSkill(Protocol):
    """One history row of a `Skill`: one per version of the whole bundle, never changed
    (django-simple-history builds the model at start; this declares what is read)."""

    history_id: int
    history_date: datetime
    history_user: User | None
    history_change_reason: str | None
    change_type: str
    id: int
    project_id: int
    name: str
    description: str
    files: dict[str, str]
    sha256: str
    size: int
    version: int
    is_deleted: bool
    updated_at: datetime

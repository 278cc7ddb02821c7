"""The domain model: tenants, projects, members, documents, settings, recipes.

Nothing here writes documents: every change goes through
`agentdocs.services.documents`. Models hold data and constraints only.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

RESERVED_PROJECT = "_vance"


class Role(models.TextChoices):
    READER = "reader", "Reader"
    WRITER = "writer", "Writer"
    ADMIN = "admin", "Admin"


class ChangeType(models.TextChoices):
    CREATED = "created", "Created"
    WRITTEN = "written", "Written"
    EDITED = "edited", "Edited"
    DELETED = "deleted", "Deleted"
    REVERTED = "reverted", "Reverted"
    RESTORED = "restored", "Restored"
    UPDATED = "updated", "Updated"


class HistoryChangeType(models.Model):
    """Extra column on every historical table: what kind of change made the row."""

    change_type = models.CharField(max_length=16, choices=ChangeType.choices, blank=True)

    class Meta:
        abstract = True


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


class Setting(models.Model):
    """A `memory.*` policy value at tenant scope (project null) or project scope."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="settings")
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, null=True, blank=True, related_name="settings"
    )
    key = models.CharField(max_length=128)
    value = models.TextField(blank=True)
    enforced = models.BooleanField(default=False)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["key"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "key"],
                condition=Q(project__isnull=True),
                name="tenant_setting_unique",
            ),
            models.UniqueConstraint(
                fields=["project", "key"],
                condition=Q(project__isnull=False),
                name="project_setting_unique",
            ),
            models.CheckConstraint(
                condition=Q(project__isnull=True) | Q(enforced=False),
                name="only_tenant_settings_are_enforced",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key}={self.value}"


class Recipe(models.Model):
    """Per process type: whether and which agent document it gets, and its profiles."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="recipes")
    name = models.CharField(max_length=64)
    params = models.JSONField(default=dict, blank=True)
    profiles = models.JSONField(default=dict, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="recipe_name_unique_per_tenant")
        ]

    def __str__(self) -> str:
        return f"{self.tenant.slug}:{self.name}"


class ProviderMapping(models.Model):
    """The provider map: a tenant's symbolic source name resolved to one of its documents.

    Manifests name sources symbolically (`workstation/agent-baseline`); where each
    lives is tenant state, edited by tenant admins, never committed in a manifest.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="providers")
    name = models.CharField(max_length=200)
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="+")
    path = models.CharField(max_length=255)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="provider_name_unique")
        ]

    def __str__(self) -> str:
        return f"{self.tenant.slug}:{self.name} -> {self.project.slug}/{self.path}"


class BindingRecord(models.Model):
    """The lockfile of one run: which exact sources a process was bound to.

    Immutable evidence: the binding service inserts it whole and nothing changes
    it afterwards, except that archival fills the archive fields once (a
    conditional update on ``archived_at IS NULL``) and the sweep notes when it
    enqueued archival again. It is deliberately not
    history-tracked: there is no history to keep.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="+")
    process = models.CharField(max_length=200)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField()
    schema = models.CharField(max_length=32)
    record = models.JSONField()
    problem_count = models.PositiveIntegerField()
    memory_block_sha256 = models.CharField(max_length=64, blank=True)
    archive_path = models.CharField(max_length=500, blank=True)
    archive_sha256 = models.CharField(max_length=64, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    # When the sweep last enqueued archival again; null while the enqueue made at
    # creation is the only one. The sweep waits as long after either.
    archive_enqueued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "-created_at", "-id"]),
            models.Index(fields=["project", "process", "-created_at"]),
            models.Index(
                fields=["created_at"],
                condition=Q(archived_at__isnull=True),
                name="binding_record_unarchived",
            ),
        ]

    def __str__(self) -> str:
        return f"binding record {self.pk} ({self.process})"

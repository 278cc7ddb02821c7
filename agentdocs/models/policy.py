"""Policy: `memory.*` settings, recipes and provider maps."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from agentdocs.models.history import HistoryChangeType
from agentdocs.models.tenancy import Project, Tenant


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

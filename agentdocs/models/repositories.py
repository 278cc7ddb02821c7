"""Repositories: where a project's exported agent files live, and what each one last
reported of them (`agentdocs sync`, `sync --check` and `bind --repo` report).

A repository is identified within its project by its git remote (credentials
stripped) and branch; a repository without a remote by the name its client gives
(`--repo-name`) and branch. Its state against the server's export now is computed on
read (`agentdocs.core.repositories`); `state` here is the state as of its last
report, which is what `repository.state_changed` events compare.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from agentdocs.models.bindings import BindingRecord
from agentdocs.models.tenancy import Project
from agentdocs.models.tokens import ApiToken


class Repository(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="repositories")
    # The git remote without credentials; "" for a repository known by `name` alone.
    remote = models.CharField(max_length=1000, blank=True)
    # The client's name for a repository without a remote; "" when it has one.
    name = models.CharField(max_length=200, blank=True)
    # "" for a detached HEAD (a CI checkout of a pull request, say).
    branch = models.CharField(max_length=255, blank=True)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    last_commit = models.CharField(max_length=64, blank=True)
    dirty = models.BooleanField(default=False)
    # What the last report said: the formats (comma-separated, as sync takes them), the
    # recipe and profile, the export the repository holds and each file's state.
    formats = models.CharField(max_length=500)
    recipe = models.CharField(max_length=200, blank=True)
    profile = models.CharField(max_length=200, blank=True)
    export_sha256 = models.CharField(max_length=64)
    files = models.JSONField(default=dict)  # {path: state}
    # The document versions each exported file was built from, when a report showed
    # the repository holding the server's export of the moment (`Baseline`);
    # `baseline_sha256` is that export's. `behind_by` counts versions written since.
    baseline_sha256 = models.CharField(max_length=64, blank=True)
    baseline = models.JSONField(default=dict)
    state = models.CharField(max_length=20)
    last_run = models.ForeignKey(
        BindingRecord, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["remote", "name", "branch", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "remote", "name", "branch"], name="repository_identity"
            )
        ]

    def __str__(self) -> str:
        return f"repository {self.remote or self.name} ({self.branch or 'detached'})"


class RepositoryCheck(models.Model):
    """One report of a repository: what a sync, a check or a bound run found there."""

    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="checks")
    kind = models.CharField(max_length=10)  # sync, check or bind
    commit = models.CharField(max_length=64, blank=True)
    branch = models.CharField(max_length=255, blank=True)
    dirty = models.BooleanField(default=False)
    formats = models.CharField(max_length=500)
    export_sha256 = models.CharField(max_length=64)
    files = models.JSONField(default=dict)  # {path: state}
    # The state the report left the repository in, against the export of that moment.
    state = models.CharField(max_length=20)
    binding = models.ForeignKey(
        BindingRecord, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reported_at = models.DateTimeField()
    reported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    token = models.ForeignKey(
        ApiToken, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-reported_at", "-id"]
        indexes = [models.Index(fields=["repository", "-reported_at", "-id"])]

    def __str__(self) -> str:
        return f"{self.kind} of repository {self.repository_id} at {self.reported_at}"

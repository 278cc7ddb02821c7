"""Binding records: which document versions one run received."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from agentdocs.models.tenancy import Project, Tenant


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
    # The server's signature over the record's canonical JSON (`core.signing` token).
    signature = models.TextField(blank=True, default="")
    # What the run saw, as outcome cohorts group runs (`agentdocs.core.cohorts.run_cohorts`
    # of `record`), stored beside it so that a comparison reads these and not every
    # record's JSON. Derived, not evidence: neither signed nor chained.
    # "" for none.
    label = models.TextField(blank=True, default="")
    recipe = models.TextField(blank=True, default="")
    document_versions = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "-created_at", "-id"]),
            models.Index(fields=["project", "process", "-created_at"]),
            # Outcome cohorts' runs, counted from the index alone (`agentdocs.sql.cohorts`).
            models.Index(fields=["project", "label", "process"], name="binding_record_label"),
            models.Index(fields=["project", "recipe", "process"], name="binding_record_recipe"),
            models.Index(
                fields=["created_at"],
                condition=Q(archived_at__isnull=True),
                name="binding_record_unarchived",
            ),
        ]

    def __str__(self) -> str:
        return f"binding record {self.pk} ({self.process})"

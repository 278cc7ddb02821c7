"""Run outcomes: a named result of one run (`task_success: true`, `cost_usd: 0.31`).

An outcome belongs to the binding record of the run it reports on, and through it to
the run's process. It is never changed: a correction is a new outcome that
`supersedes` the earlier one, both kept, so a process has at most one current outcome
of each name (the one nothing supersedes; the constraints below hold it so). Each
report is a history row (who, when, why) in the tenant's hash chain, like a document
write.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from agentdocs.core.outcomes import NAME_LENGTH, UNIT_LENGTH
from agentdocs.models.bindings import BindingRecord
from agentdocs.models.history import HistoryChangeType
from agentdocs.models.tenancy import Project, Tenant
from agentdocs.models.tokens import ApiToken


class Outcome(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="+")
    binding = models.ForeignKey(BindingRecord, on_delete=models.PROTECT, related_name="outcomes")
    # The binding record's process, so that one run has one current outcome per name
    # whichever of its records it was reported on.
    process = models.CharField(max_length=200)
    name = models.CharField(max_length=NAME_LENGTH)
    # A yes/no outcome is stored as 1 or 0 with `is_bool`, so one SUM counts successes.
    value = models.FloatField()
    is_bool = models.BooleanField()
    unit = models.CharField(max_length=UNIT_LENGTH, blank=True, default="")
    comment = models.TextField(blank=True, default="")
    supersedes = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="superseded_by"
    )
    reported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # The API token it was reported with; null from a signed-in page or the MCP endpoint
    # of a session.
    reported_with = models.ForeignKey(
        ApiToken, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reported_at = models.DateTimeField()

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["reported_at", "id"]
        constraints = [
            # The first report of a name for a process; every later one supersedes.
            models.UniqueConstraint(
                fields=["project", "process", "name"],
                condition=Q(supersedes__isnull=True),
                name="outcome_first_report_unique",
            ),
            models.CheckConstraint(
                condition=Q(is_bool=False) | Q(value__in=[0.0, 1.0]), name="outcome_bool_value"
            ),
        ]
        indexes = [models.Index(fields=["project", "name", "binding"], name="outcome_metric")]

    def __str__(self) -> str:
        return f"{self.process}: {self.name}={self.value}"

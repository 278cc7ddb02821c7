"""Labels: a name (`production`, `canary`, ...) pointing at one version of a document.

`latest` is implicit (the newest version) and never stored. A label is moved and
removed only through `agentdocs.services.labels`; every move is a history row (who,
why, which version) in the tenant's hash chain, like a document write.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from simple_history.models import HistoricalRecords

from agentdocs.models.documents import Document
from agentdocs.models.history import HistoryChangeType


class Label(models.Model):
    """What every label holds, a document's or a skill's: its name, the version it points
    at, who moved it last, when and why. Each kind adds what it labels and its
    constraints; each has its own history table (`inherit`)."""

    name = models.CharField(max_length=64)
    version = models.PositiveIntegerField()
    moved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    moved_at = models.DateTimeField(default=timezone.now)
    reason = models.TextField(blank=True, default="")

    history = HistoricalRecords(bases=[HistoryChangeType], inherit=True)

    class Meta:
        abstract = True
        ordering = ["name"]


class DocumentLabel(Label):
    """The version of ``document`` that readers asking for ``name`` get."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="labels")

    class Meta(Label.Meta):
        constraints = [
            models.UniqueConstraint(fields=["document", "name"], name="document_label_unique"),
            models.CheckConstraint(condition=Q(version__gte=1), name="document_label_version"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}:{self.name}@{self.version}"

    @property
    def chain_tenant_id(self) -> int:
        """The tenant whose hash chain the label's history rows join: its document's
        project's (the service moves a label with the document and project at hand)."""
        return self.document.project.tenant_id

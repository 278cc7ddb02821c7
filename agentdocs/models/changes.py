"""Change requests: a proposed new body for a document (or new files for a skill, or
a label's move), reviewed before it is merged.

A change request names the document (project and path), the version its body was
written against (`base_version`) and the proposed body. Writers of the project (tenant
admins for `_vance`) review it; once enough of them approved, it is merged onto the
document's current version by a three-way merge, through the one write path, with the
proposer as author. Merged, rejected and withdrawn requests are closed: nothing about
them changes any more. Every state change is a history row (who, when, why), and so
is every review: each decision joins the tenant's hash chain, not only the one that
moves the request.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from simple_history.models import HistoricalRecords

from agentdocs.models.bindings import BindingRecord
from agentdocs.models.documents import HiddenAcknowledgement
from agentdocs.models.history import HistoryChangeType
from agentdocs.models.tenancy import Project, Tenant


class ChangeState(models.TextChoices):
    OPEN = "open", "Open"
    APPROVED = "approved", "Approved"
    MERGED = "merged", "Merged"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"


# States in which a change request still moves; the others are final.
LIVE_STATES = (ChangeState.OPEN, ChangeState.APPROVED)


class ReviewDecision(models.TextChoices):
    APPROVE = "approve", "Approve"
    REJECT = "reject", "Reject"


class ChangeRequest(models.Model):
    """A proposed body for the document at `path`; its id is the number people type (#12)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="change_requests")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="change_requests")
    path = models.CharField(max_length=255)
    body = models.TextField(blank=True)
    base_version = models.PositiveIntegerField()
    reason = models.TextField(blank=True, default="")
    proposer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    state = models.CharField(max_length=16, choices=ChangeState.choices, default=ChangeState.OPEN)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    merged_version = models.PositiveIntegerField(null=True, blank=True)
    # `intended` when the proposer acknowledged hidden characters in the body; the merge
    # passes it on to the write, whose history row then keeps it.
    hidden_acknowledgement = models.CharField(
        max_length=16, choices=HiddenAcknowledgement.choices, blank=True, default=""
    )
    merged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # A label move under review (issue 29): the label to move to ``base_version``; the
    # body is then the text of that version and merging moves the label, writing nothing.
    label = models.CharField(max_length=64, blank=True, default="")
    # With `label`: a removal under review (issue 34); merging it removes the label.
    # ``base_version`` is then the version the label pointed at when it was proposed.
    label_removal = models.BooleanField(default=False)
    # A change request of a skill (issue 37): the skill's name; ``path`` is then the
    # skill's path for review (`core.skills.skill_path`), and ``files`` the whole
    # proposed bundle (``body`` its `SKILL.md`), or with ``label`` a move or removal of
    # the skill's label. ``base_version`` 0 proposes a new skill.
    skill = models.CharField(max_length=64, blank=True, default="")
    files = models.JSONField(null=True, blank=True, default=None)
    # Proposed by an agent: the process (session) it came from, as its renders and binding
    # records name it, and that process's latest binding record in the project when it
    # proposed (null when it had none).
    process = models.CharField(max_length=200, blank=True, default="")
    binding_record = models.ForeignKey(
        BindingRecord, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    # The body (and a label change's label and removal, a skill's name and files, and
    # the process it came from)
    # never changes after the proposal: history keeps the states, not copies of it. A
    # column added to a chained history table would also change the hash of every row
    # already chained (`services.audit_chain.row_values`).
    history = HistoricalRecords(
        bases=[HistoryChangeType],
        excluded_fields=[
            "body",
            "label",
            "label_removal",
            "skill",
            "files",
            "process",
            "binding_record",
        ],
    )

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=ChangeState.values), name="change_request_state_known"
            ),
            models.CheckConstraint(
                condition=Q(base_version__gte=1) | (Q(base_version=0) & ~Q(skill="")),
                name="change_request_base_version_positive",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "state", "-id"], name="change_tenant_state"),
            models.Index(fields=["project", "state", "-id"], name="change_project_state"),
            models.Index(fields=["project", "path", "merged_version"], name="change_merged"),
        ]

    def __str__(self) -> str:
        return f"change #{self.pk} {self.project}:{self.path} ({self.state})"

    @property
    def is_live(self) -> bool:
        return self.state in LIVE_STATES

    @property
    def is_skill(self) -> bool:
        return bool(self.skill)

    @property
    def label_action(self) -> str | None:
        """`move` or `remove` for a change request of a label; None for one of the body."""
        if not self.label:
            return None
        return "remove" if self.label_removal else "move"


class Review(models.Model):
    """One reviewer's decision on a change request, with an optional comment."""

    change_request = models.ForeignKey(
        ChangeRequest, on_delete=models.CASCADE, related_name="reviews"
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    decision = models.CharField(max_length=16, choices=ReviewDecision.choices)
    comment = models.TextField(blank=True, default="")
    at = models.DateTimeField(default=timezone.now)

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(decision__in=ReviewDecision.values), name="review_decision_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} {self.decision}s change #{self.change_request_id}"

    @property
    def chain_tenant_id(self) -> int:
        """The tenant whose hash chain the review's history rows join: its request's
        (a review is made with the request it reviews at hand, so no query)."""
        return self.change_request.tenant_id


class ChangeComment(models.Model):
    """A member's comment on a change request."""

    change_request = models.ForeignKey(
        ChangeRequest, on_delete=models.CASCADE, related_name="comments"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    body = models.TextField()
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.author} on change #{self.change_request_id}"


class ChangeEvals(models.Model):
    """Eval results attached to a change request: what ``harness`` found running each
    case against the base text and the proposed text (`agentdocs.core.evals`). Never
    changed once stored; results run again are attached again, and the latest counts."""

    change_request = models.ForeignKey(
        ChangeRequest, on_delete=models.CASCADE, related_name="evals"
    )
    harness = models.CharField(max_length=200)
    cases = models.JSONField()  # list[core.evals.EvalCase]
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    submitted_at = models.DateTimeField(default=timezone.now)

    history = HistoricalRecords(bases=[HistoryChangeType])

    class Meta:
        ordering = ["submitted_at", "id"]
        verbose_name = "change evals"
        verbose_name_plural = "change evals"

    def __str__(self) -> str:
        return f"evals {self.pk} of change #{self.change_request_id} ({self.harness})"

    @property
    def chain_tenant_id(self) -> int:
        """The tenant whose hash chain the history row joins: its change request's."""
        return self.change_request.tenant_id

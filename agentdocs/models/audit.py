"""The head of each tenant's hash chain over its history rows, and the walks of it
run as tasks."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from agentdocs.models.tenancy import Tenant


class AuditChainHead(models.Model):
    """The last link of a tenant's chain: how many rows it holds and the last row's
    ``chain_sha256``. Writers lock this row to append, so the chain follows commit
    order; the daily verification keeps its last finding here for the admins' banner."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="+")
    seq = models.BigIntegerField(default=0)
    chain_sha256 = models.CharField(max_length=64, blank=True, default="")
    verified_at = models.DateTimeField(null=True, blank=True)
    # The last verification's first broken link (`core.audit_chain.BrokenLink`), or None.
    broken_at = models.JSONField(null=True, blank=True, default=None)

    def __str__(self) -> str:
        return f"chain of tenant {self.tenant_id} at {self.seq}"


class AuditVerificationState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class AuditVerification(models.Model):
    """One walk of a tenant's chain run as a task (`POST .../audit/verify`): how far it
    has come and, once done, its report (`core.audit_chain.ChainReport`)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    state = models.CharField(
        max_length=16, choices=AuditVerificationState.choices, default=AuditVerificationState.QUEUED
    )
    # The chain's length when the walk was asked for, and the rows walked so far.
    total = models.BigIntegerField(default=0)
    checked = models.BigIntegerField(default=0)
    report = models.JSONField(null=True, blank=True, default=None)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    # Moved with each progress step: a run unmoved for long is taken for lost.
    updated_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "-created_at"], name="audit_verification_recent")]

    def __str__(self) -> str:
        return f"verification {self.pk} of tenant {self.tenant_id}: {self.state}"


class AuditExportRun(models.Model):
    """One export of a tenant's chain written by a task (`POST .../audit/export`, or a
    `GET` of a chain too long to stream within a request) to a JSON Lines file in the
    media storage: how far it has come and, once done, the file, its size and sha256,
    and the head it ends with."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    state = models.CharField(
        max_length=16, choices=AuditVerificationState.choices, default=AuditVerificationState.QUEUED
    )
    # The chain's length when the export was asked for, and the rows written so far.
    total = models.BigIntegerField(default=0)
    written = models.BigIntegerField(default=0)
    # Once done: the file's name in the media storage, its size, its sha256, and the
    # head its last line names.
    file = models.CharField(max_length=255, blank=True, default="")
    bytes = models.BigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    head_seq = models.BigIntegerField(null=True, blank=True)
    head_sha256 = models.CharField(max_length=64, blank=True, default="")
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    # Moved with each progress step: a run unmoved for long is taken for lost.
    updated_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "-created_at"], name="audit_export_recent")]

    def __str__(self) -> str:
        return f"export {self.pk} of tenant {self.tenant_id}: {self.state}"

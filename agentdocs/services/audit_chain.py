"""Hash-chaining every history row of a tenant, and walking the chain to verify it.

`history_row_link` runs for every history row django-simple-history is about to
write (connected in `AgentdocsConfig.ready`, after the change-type receiver, whose
column it covers). Inside the change's transaction it locks the tenant's
`AuditChainHead`, so concurrent writers of one tenant append one after another in
commit order. A change saved outside any transaction is linked right after its
row is written, in a transaction of its own; rows written in bulk are linked by
`history_rows_link` before their insert.

The verification walks the chain, then looks around it: rows of the tenant numbered
past its head or with no link, and the live rows agents read (documents, labels,
settings, recipes, providers) against their newest chained history row. A long chain
is walked by a task (`audit_verification_start`, `agentdocs.tasks.verify_audit_chain`).
"""

from __future__ import annotations

import heapq
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import cached_property
from typing import Any
from uuid import UUID

from celery import current_app
from django.core.cache import cache
from django.db import connection, models, transaction
from django.db.models import Q, QuerySet, Subquery, Value
from django.utils import timezone

from agentdocs.core.audit_chain import (
    BrokenLink,
    ChainReport,
    ChainRow,
    broken_link,
    chain_link,
    chain_walk,
    live_mismatch,
)
from agentdocs.models.audit import (
    AuditChainHead,
    AuditExportRun,
    AuditVerification,
    AuditVerificationState,
)
from agentdocs.models.changes import ChangeRequest
from agentdocs.models.documents import Document
from agentdocs.models.labels import DocumentLabel
from agentdocs.models.policy import ProviderMapping, Recipe, Setting
from agentdocs.models.skill_labels import SkillLabel
from agentdocs.models.skills import Skill
from agentdocs.models.tenancy import Project, Tenant
from agentdocs.selectors.audit import audit_banner_key, history_models
from agentdocs.services import events
from agentdocs.sql import chain_head

logger = logging.getLogger(__name__)

# Columns outside the hashed row: the surrogate key (unknown before the insert; the
# row's place is chain_seq) and the link itself.
_UNHASHED = {"history_id", "chain_sha256"}
TENANT_HISTORY = "agentdocs.historicaltenant"
# Rows read per round trip (a server-side cursor on PostgreSQL), and how often a walk
# tells its progress.
CHUNK = 2000
# The first batch is small, so the first row (the export's first byte) comes at once.
FIRST_CHUNK = 50
PROGRESS_EVERY = 5000


def _plain(field: models.Field, value: Any) -> Any:
    if value is None or isinstance(field, models.JSONField):
        return value
    value = field.to_python(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat() if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (Decimal, UUID)):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def row_values(row: models.Model) -> dict[str, Any]:
    """The hashed columns of a history row, as plain JSON values."""
    return {
        field.attname: _plain(field, getattr(row, field.attname))
        for field in row._meta.concrete_fields
        if field.attname not in _UNHASHED
    }


def _tenant_of(instance: models.Model, history_row: models.Model) -> int | None:
    """The tenant whose chain a history row joins; None for what belongs to no tenant
    (an API token of a user, not of a tenant)."""
    if isinstance(instance, Tenant):
        return instance.pk
    # A model whose rows name no tenant nor project says whose it is (a review: its request's).
    owner = getattr(instance, "chain_tenant_id", None)
    if owner is not None:
        return int(owner)
    if hasattr(history_row, "tenant_id"):
        return history_row.tenant_id
    project_id = getattr(history_row, "project_id", None)
    if project_id is None:
        return None
    # Services hold the document with its project; a bare id costs one query.
    cached = instance._state.fields_cache.get("project")
    if isinstance(cached, Project) and cached.pk == project_id:
        return cached.tenant_id
    return Project.objects.values_list("tenant_id", flat=True).get(pk=project_id)


def _locked_head(tenant_id: int) -> tuple[int, str]:
    head = (
        AuditChainHead.objects.select_for_update()
        .filter(tenant_id=tenant_id)
        .values_list("seq", "chain_sha256")
        .first()
    )
    if head is not None:
        return head
    # The tenant's first history row is its own creation, in the transaction that made it.
    AuditChainHead.objects.create(tenant_id=tenant_id)
    return 0, ""


# One row's append, in one statement (`agentdocs.sql.chain_head`): the head moved on by
# one and locked, answering its new seq, the previous link, and whether the history
# table has the trigger that stores the head's link (migration 0026). The new link needs
# the previous one, so it is computed here, and the trigger stores it in the head when
# the row is inserted, in the INSERT's round trip. A table without the trigger (code
# running before `migrate`, a table SQLite remade for a migration) gets a second
# UPDATE: the chain never depends on the trigger, only its speed does.
HEAD_TRIGGER = chain_head.HEAD_TRIGGER


def _advanced_head(tenant_id: int, table: str) -> tuple[int, str, bool]:
    """The head moved on by one and locked: its new seq, the previous link, and whether
    ``table``'s trigger will store the new link."""
    if not chain_head.head_advance_supported():  # locked, then moved on below
        seq, previous = _locked_head(tenant_id)
        return seq + 1, previous, False
    head = chain_head.head_advance(tenant_id, table)
    if head is None:
        # The tenant's first history row is its own creation, in the transaction that
        # made it.
        AuditChainHead.objects.create(tenant_id=tenant_id)
        return 1, "", False
    return head


def _append(history_row: models.Model, tenant_id: int, *, inserted: bool = False) -> None:
    """Link ``history_row`` as its tenant's next row; ``inserted``: it is written already
    (then no trigger stores the link)."""
    seq, previous, stored_by_trigger = _advanced_head(tenant_id, history_row._meta.db_table)
    history_row.chain_seq = seq  # type: ignore[attr-defined]
    link = chain_link(previous, model=history_row._meta.label_lower, row=row_values(history_row))
    history_row.chain_sha256 = link  # type: ignore[attr-defined]
    if inserted or not stored_by_trigger:
        chain_head.head_link(tenant_id, seq=seq, link=link)


def history_row_link(
    sender: type[models.Model], instance: models.Model, history_instance: models.Model, **_: Any
) -> None:
    """pre_create_historical_record: chain the row about to be written."""
    tenant_id = _tenant_of(instance, history_instance)
    if tenant_id is None:
        return
    history_instance.chain_tenant = tenant_id  # type: ignore[attr-defined]
    if connection.in_atomic_block:
        _append(history_instance, tenant_id)
    else:
        history_instance._chain_after_insert = True  # type: ignore[attr-defined]


def history_row_link_after_insert(history_instance: models.Model, **_: Any) -> None:
    """post_create_historical_record: chain a row written outside any transaction."""
    if not getattr(history_instance, "_chain_after_insert", False):
        return
    with transaction.atomic():
        _append(history_instance, history_instance.chain_tenant, inserted=True)  # type: ignore[attr-defined]
        type(history_instance)._default_manager.filter(pk=history_instance.pk).update(
            chain_seq=history_instance.chain_seq,  # type: ignore[attr-defined]
            chain_sha256=history_instance.chain_sha256,  # type: ignore[attr-defined]
        )


# Linking rows written in bulk


def history_rows_link(*, tenant_id: int, rows: Sequence[models.Model]) -> None:
    """Chain history rows about to be written with `bulk_create` (which sends no
    signal), in the order given, as one append to the tenant's chain; call inside the
    transaction that writes them. A bulk path (a seed, a data migration) that writes
    history rows any other way leaves them `unlinked`, and the verification says so."""
    if not rows:
        return
    seq, previous = _locked_head(tenant_id)
    for row in rows:
        seq += 1
        row.chain_tenant = tenant_id  # type: ignore[attr-defined]
        row.chain_seq = seq  # type: ignore[attr-defined]
        previous = chain_link(previous, model=row._meta.label_lower, row=row_values(row))
        row.chain_sha256 = previous  # type: ignore[attr-defined]
    AuditChainHead.objects.filter(tenant_id=tenant_id).update(seq=seq, chain_sha256=previous)


# Reading the chain: in batches by key (`chain_seq`, the live rows' id), each its own
# short query on the index (chain_tenant, chain_seq) that migration 0022 makes; no cursor
# stays open (PostgreSQL's would copy the whole result first, outside a transaction),
# so the first row comes at once, memory stays flat, and a walk's progress commits.


def _converter(field: models.Field) -> Callable[[Any], Any]:
    """`_plain` for a value read from the database, with the common types' work known
    beforehand: the walk converts every column of every row."""
    if isinstance(field, _AS_READ):
        return _as_read
    if isinstance(field, models.DateTimeField):
        return _utc_iso
    return lambda value: _plain(field, value)


def _as_read(value: Any) -> Any:
    return value


def _utc_iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat() if value.tzinfo else value.isoformat()


# Fields whose value as read is its plain JSON value (`_plain` gives it back unchanged).
_AS_READ = (
    models.JSONField,
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.BooleanField,
    models.ForeignKey,
)


def _rows(model: type[models.Model], tenant_id: int, up_to: int) -> Iterator[ChainRow]:
    label = model._meta.label_lower
    fields = [f for f in model._meta.concrete_fields if f.attname not in _UNHASHED]
    names = [field.attname for field in fields]
    converters = [_converter(field) for field in fields]
    seq_at = names.index("chain_seq")
    rows = (
        model._default_manager.filter(chain_tenant=tenant_id, chain_seq__lte=up_to)
        .order_by("chain_seq")
        .values_list("pk", "chain_sha256", *names)
    )
    after, size = 0, FIRST_CHUNK
    while True:
        batch = list(rows.filter(chain_seq__gt=after)[:size])
        for pk, link, *values in batch:
            row = {
                name: convert(value)
                for name, convert, value in zip(names, converters, values, strict=True)
            }
            yield ChainRow(model=label, id=pk, seq=values[seq_at], chain_sha256=link, row=row)
        if len(batch) < size:
            return
        after, size = batch[-1][2 + seq_at], CHUNK


def chain_rows(*, tenant: Tenant) -> tuple[AuditChainHead, Iterator[ChainRow]]:
    """The tenant's head and its chained rows in chain order, streamed (a batch at a
    time from each history model), up to the head as it is now."""
    head, _ = AuditChainHead.objects.get_or_create(tenant=tenant)
    streams = [_rows(model, tenant.pk, head.seq) for model in history_models()]
    return head, heapq.merge(*streams, key=lambda entry: entry.seq)


# What agents read: the live rows a render reads, each compared, on the columns a
# render reads, with the newest history row of it in the chain. A user's deletion
# clears `updated_by` without a history row, so who wrote is not compared.


@dataclass(frozen=True)
class LiveModel:
    model: type[models.Model]
    columns: tuple[str, ...]
    # The lookup from the live row to its tenant's id.
    tenant_lookup: str

    @cached_property
    def fields(self) -> list[models.Field]:
        by_attname = {field.attname: field for field in self.model._meta.concrete_fields}
        return [by_attname[column] for column in self.columns]

    @property
    def history(self) -> type[models.Model]:
        return self.model.history.model  # type: ignore[attr-defined]

    @property
    def history_label(self) -> str:
        return self.history._meta.label_lower


LIVE_MODELS = (
    LiveModel(
        Document,
        ("project_id", "path", "body", "sha256", "size", "version", "is_deleted"),
        "project__tenant_id",
    ),
    LiveModel(DocumentLabel, ("document_id", "name", "version"), "document__project__tenant_id"),
    LiveModel(Setting, ("tenant_id", "project_id", "key", "value", "enforced"), "tenant_id"),
    LiveModel(Recipe, ("tenant_id", "name", "params", "profiles"), "tenant_id"),
    LiveModel(ProviderMapping, ("tenant_id", "name", "project_id", "path"), "tenant_id"),
    LiveModel(
        Skill,
        ("project_id", "name", "files", "sha256", "size", "version", "is_deleted"),
        "project__tenant_id",
    ),
    LiveModel(SkillLabel, ("skill_id", "name", "version"), "skill__project__tenant_id"),
)
_LIVE_BY_HISTORY = {live.history_label: live for live in LIVE_MODELS}
_DELETED = "-"


def _compared(live: LiveModel, values: Sequence[Any]) -> dict[str, Any]:
    """The compared columns of a live row (or of a history row, read with its
    history_type first), as plain JSON values, as `row_values` makes them."""
    return {
        field.attname: _plain(field, value)
        for field, value in zip(live.fields, values, strict=True)
    }


def _recorded(live: LiveModel, history_type: str, values: Sequence[Any]) -> dict[str, Any] | None:
    """The compared columns of a history row; None when it records a deletion."""
    return None if history_type == _DELETED else _compared(live, values)


class _Newest:
    """The newest chained history row of each live row (its history_id), kept as the
    walk passes them in chain order: the walk reads history once for both."""

    def __init__(self) -> None:
        self.by_label: dict[str, dict[int, int]] = {live.history_label: {} for live in LIVE_MODELS}

    def watch(
        self, rows: Iterable[ChainRow], progress: Callable[[int], None] | None
    ) -> Iterator[ChainRow]:
        for walked, entry in enumerate(rows, start=1):
            newest = self.by_label.get(entry.model)
            if newest is not None:
                newest[entry.row["id"]] = entry.id
            if progress is not None and walked % PROGRESS_EVERY == 0:
                progress(walked)
            yield entry


def _live_recheck(tenant_id: int, live: LiveModel, object_id: int) -> BrokenLink | None:
    """Compare one live row with its newest chained history row again, holding the
    tenant's chain head: writers hold it from their history row to their commit, so a
    write that landed while the walk ran is not taken for a mismatch."""
    with transaction.atomic():
        AuditChainHead.objects.select_for_update().filter(tenant_id=tenant_id).exists()
        values = live.model._default_manager.filter(pk=object_id).values_list(*live.columns).first()
        row = (
            live.history._default_manager.filter(
                chain_tenant=tenant_id, id=object_id, chain_seq__isnull=False
            )
            .order_by("-chain_seq")
            .values_list("history_type", *live.columns)
            .first()
        )
    return live_mismatch(
        model=live.model._meta.label_lower,
        id=object_id,
        recorded=None if row is None else _recorded(live, row[0], row[1:]),
        live=None if values is None else _compared(live, values),
    )


def _recorded_rows(live: LiveModel, history_ids: Iterable[int]) -> dict[int, dict | None]:
    """The compared columns of these history rows, by the live row's id: one query."""
    rows = live.history._default_manager.filter(pk__in=list(history_ids)).values_list(
        "id", "history_type", *live.columns
    )
    return {row[0]: _recorded(live, row[1], row[2:]) for row in rows}


def _live_finding(tenant_id: int, newest: _Newest) -> BrokenLink | None:
    for live in LIVE_MODELS:
        newest_ids = newest.by_label[live.history_label]
        rows = (
            live.model._default_manager.filter(**{live.tenant_lookup: tenant_id})
            .order_by("pk")
            .values_list("pk", *live.columns)
        )
        seen: set[int] = set()
        after = 0
        while True:
            batch = list(rows.filter(pk__gt=after)[:CHUNK])
            recorded = _recorded_rows(
                live, (newest_ids[pk] for pk, *_ in batch if pk in newest_ids)
            )
            for pk, *values in batch:
                seen.add(pk)
                if pk not in recorded or recorded[pk] != _compared(live, values):
                    finding = _live_recheck(tenant_id, live, pk)
                    if finding is not None:
                        return finding
            if len(batch) < CHUNK:
                break
            after = batch[-1][0]
        # A live row gone whose history says it still exists: deleted behind its back.
        gone = [history_id for pk, history_id in newest_ids.items() if pk not in seen]
        for start in range(0, len(gone), CHUNK):
            for object_id, values in _recorded_rows(live, gone[start : start + CHUNK]).items():
                if values is not None:
                    finding = _live_recheck(tenant_id, live, object_id)
                    if finding is not None:
                        return finding
    return None


# Rows outside the chain


def _owned_by(model: type[models.Model], tenant_id: int) -> Q | None:
    """The history rows of ``model`` that belong to the tenant by their own columns
    (None: the model's rows say it only through chain_tenant)."""
    if model._meta.label_lower == TENANT_HISTORY:
        return Q(id=tenant_id)
    names = {field.name for field in model._meta.concrete_fields}
    if "tenant" in names:
        return Q(tenant_id=tenant_id)
    if "project" in names:
        return Q(project_id__in=Project.objects.filter(tenant_id=tenant_id).values("pk"))
    if "change_request" in names:
        requests = ChangeRequest.objects.filter(tenant_id=tenant_id).values("pk")
        return Q(change_request_id__in=requests)
    if "document" in names:
        documents = Document.objects.filter(project__tenant_id=tenant_id).values("pk")
        return Q(document_id__in=documents)
    return None


def _across_history(tests: Callable[[type[models.Model]], list[Q]]) -> QuerySet[Any]:
    """The history rows of every model that pass one of its ``tests``, as (model, id,
    chain_seq, chain_sha256), in one statement (UNION ALL: one round trip, not one per
    model and test; each test stays a separate branch, so each reads its own index)."""
    branches = [
        model._default_manager.filter(test)
        .annotate(model=Value(model._meta.label_lower, output_field=models.CharField()))
        .values_list("model", "pk", "chain_seq", "chain_sha256")
        .order_by()
        for model in history_models()
        for test in tests(model)
    ]
    return branches[0].union(*branches[1:], all=True)


def _unlinked_finding(tenant_id: int) -> BrokenLink | None:
    """A history row of the tenant with no link: written by SQL or a bulk path that
    did not chain it (`history_rows_link`)."""

    def unlinked(model: type[models.Model]) -> list[Q]:
        tests = [
            Q(chain_tenant=tenant_id, chain_seq__isnull=True),
            Q(chain_tenant=tenant_id, chain_sha256__isnull=True),
        ]
        owned = _owned_by(model, tenant_id)
        if owned is not None:
            tests.append(Q(chain_tenant__isnull=True) & owned)
        return tests

    found = list(_across_history(unlinked)[:1])
    if not found:
        return None
    label, pk, _, link = found[0]
    return broken_link("unlinked", model=label, id=pk, expected="", found=link)


def _past_head_finding(tenant_id: int) -> BrokenLink | None:
    """A row of the tenant's chain numbered past its head, the head read in the same
    statement (a writer's row and its head's move commit together)."""
    head = AuditChainHead.objects.filter(tenant_id=tenant_id)
    past = Q(chain_tenant=tenant_id, chain_seq__gt=Subquery(head.values("seq")[:1]))
    found = list(_across_history(lambda model: [past]).order_by("chain_seq")[:1])
    if not found:
        return None
    label, pk, _, link = found[0]
    head_sha256 = head.values_list("chain_sha256", flat=True).first() or ""
    return broken_link("past_head", model=label, id=pk, expected=head_sha256, found=link)


def audit_chain_report(
    *, tenant: Tenant, progress: Callable[[int], None] | None = None
) -> ChainReport:
    """Walk the tenant's chain and look around it; the first finding is reported.

    In order: the chain itself (each link, its numbering, its end at the head); rows
    numbered past the head; the tenant's history rows outside the chain; the live rows
    agents read against their newest chained history row. ``checked`` counts the
    chain's rows walked; ``progress`` is told the count every `PROGRESS_EVERY` rows."""
    head, rows = chain_rows(tenant=tenant)
    newest = _Newest()
    report = chain_walk(
        newest.watch(rows, progress),
        tenant_id=tenant.pk,
        head_seq=head.seq,
        head_sha256=head.chain_sha256,
    )
    if report["broken_at"] is not None:
        return report
    broken = (
        _past_head_finding(tenant.pk)
        or _unlinked_finding(tenant.pk)
        or _live_finding(tenant.pk, newest)
    )
    if broken is not None:
        return {"ok": False, "checked": report["checked"], "broken_at": broken}
    return report


def audit_chain_verify(
    *, tenant: Tenant, progress: Callable[[int], None] | None = None
) -> ChainReport:
    """Verify the tenant's chain (`audit_chain_report`); the report is kept on its head
    for the admins' banner."""
    report = audit_chain_report(tenant=tenant, progress=progress)
    AuditChainHead.objects.filter(tenant=tenant).update(
        verified_at=timezone.now(), broken_at=report["broken_at"]
    )
    # The admins' banner reads the finding from the cache, so pages pay no query for it.
    if report["broken_at"] is None:
        cache.delete(audit_banner_key(tenant.pk))
    else:
        cache.set(audit_banner_key(tenant.pk), report["broken_at"], timeout=None)
    return report


# Verifications run as tasks (`POST .../audit/verify`)

VERIFY_TASK = "agentdocs.tasks.verify_audit_chain"
# A run that has not moved for this long lost its worker: the next request starts another.
LOST_AFTER = timedelta(minutes=10)
# Finished runs are kept this long, for their status links.
KEPT_FOR = timedelta(days=30)


def audit_verification_start(*, tenant: Tenant, user: Any) -> AuditVerification:
    """A verification of the tenant's chain on its way: the one already queued or
    running (so repeated requests walk the chain once), or a new one, handed to the
    task (`agentdocs.tasks.verify_audit_chain`) once committed. With no broker the task
    runs in-process, so the run returned is already done."""
    now = timezone.now()
    with transaction.atomic():
        AuditVerification.objects.filter(tenant=tenant, created_at__lt=now - KEPT_FOR).delete()
        running = (
            AuditVerification.objects.filter(
                tenant=tenant,
                state__in=[AuditVerificationState.QUEUED, AuditVerificationState.RUNNING],
                updated_at__gte=now - LOST_AFTER,
            )
            .order_by("-created_at")
            .first()
        )
        if running is not None:
            return running
        head = AuditChainHead.objects.filter(tenant=tenant).values_list("seq", flat=True).first()
        verification = AuditVerification.objects.create(
            tenant=tenant, requested_by=user, total=head or 0
        )
        transaction.on_commit(lambda: _enqueue_verification(verification.pk))
    verification.refresh_from_db()
    return verification


def _enqueue_verification(verification_id: int) -> None:
    enqueue_audit_task(VERIFY_TASK, AuditVerification, verification_id)


def enqueue_audit_task(
    task: str, model: type[AuditVerification | AuditExportRun], run_id: int
) -> None:
    """Hand a run (a verification, an export) to its task, named rather than imported
    (tasks are an interface over the services). A broker that cannot take it fails the
    run, which its status link then says, instead of leaving it queued."""
    app = current_app
    try:
        if not app.conf.task_always_eager:
            app.send_task(task, args=(run_id,))
            return
        if task not in app.tasks:
            app.autodiscover_tasks(force=True)
        app.tasks[task].delay(run_id)
    except Exception as error:
        logger.exception("Could not run %s for %s %s.", task, model.__name__, run_id)
        model.objects.filter(pk=run_id).exclude(state=AuditVerificationState.DONE).update(
            state=AuditVerificationState.FAILED,
            error=f"{type(error).__name__}: {error}"[:500],
            finished_at=timezone.now(),
        )


def audit_verification_run(*, verification_id: int) -> AuditVerification | None:
    """Walk the chain for one verification, telling its progress on the row as it goes,
    and keep the report there; a run already finished is left as it is."""
    verification = (
        AuditVerification.objects.select_related("tenant").filter(pk=verification_id).first()
    )
    if verification is None or verification.state in (
        AuditVerificationState.DONE,
        AuditVerificationState.FAILED,
    ):
        return verification
    runs = AuditVerification.objects.filter(pk=verification_id)
    started = timezone.now()
    runs.update(state=AuditVerificationState.RUNNING, started_at=started, updated_at=started)

    def progress(walked: int) -> None:
        runs.update(checked=walked, updated_at=timezone.now())

    try:
        report = audit_chain_verify(tenant=verification.tenant, progress=progress)
    except Exception as error:
        runs.update(
            state=AuditVerificationState.FAILED,
            error=f"{type(error).__name__}: {error}"[:500],
            finished_at=timezone.now(),
        )
        raise
    finished = timezone.now()
    runs.update(
        state=AuditVerificationState.DONE,
        checked=report["checked"],
        report=report,
        updated_at=finished,
        finished_at=finished,
    )
    verification.refresh_from_db()
    return verification


def audit_chain_check(*, tenant_id: int) -> ChainReport:
    """The daily check: verify one tenant's chain and, when it is broken, emit
    `audit.chain_broken` (webhooks, the admins' activity feed; the banner reads the head)."""
    tenant = Tenant.objects.get(pk=tenant_id)
    report = audit_chain_verify(tenant=tenant)
    broken = report["broken_at"]
    if broken is not None:
        data: events.AuditChainBrokenEventData = {
            **broken,
            "checked": report["checked"],
        }
        with transaction.atomic():
            events.emit(
                type=events.AUDIT_CHAIN_BROKEN,
                tenant=tenant,
                project=None,
                actor=None,
                target=f"{broken['model']} {broken['id']}",
                reason="The history chain does not verify at this row.",
                data=data,
            )
    return report


def audit_chain_lines(*, tenant: Tenant) -> Iterator[str]:
    """The chain as JSON Lines: one line per row, in chain order, then the head."""
    head, rows = chain_rows(tenant=tenant)
    for entry in rows:
        line = {
            "seq": entry.seq,
            "model": entry.model,
            "id": entry.id,
            "chain_sha256": entry.chain_sha256,
            "row": entry.row,
        }
        yield json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n"
    yield json.dumps({"head": {"seq": head.seq, "chain_sha256": head.chain_sha256}}) + "\n"

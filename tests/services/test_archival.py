"""Archiving binding records in-process (the embedded default): canonical JSON through
Django's storage API, idempotent, retried, and swept when a worker never finished."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from datetime import timedelta

import pytest
from django.core.files.storage import FileSystemStorage, default_storage
from django.core.management import call_command
from django.db import connections, transaction
from django.utils import timezone

from agentdocs.models import BindingRecord
from agentdocs.selectors import bindings as binding_selectors
from agentdocs.services import archival
from agentdocs.services import bindings as binding_service
from agentdocs.tasks import archive_binding_record
from config.celery import app as celery_app
from tests.conftest import need_service

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def archive_in_process(settings, tmp_path):
    """Tasks run in-process, as with no broker, into a storage of this test's own."""
    settings.MEDIA_ROOT = tmp_path / "media"
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield tmp_path / "media"
    celery_app.conf.task_always_eager = eager


@pytest.fixture
def bound(project, writer, make_document, django_capture_on_commit_callbacks):
    make_document(project, "AGENTS.md", "# Agents\nüñï\n")

    def make(process: str = "run-ü", *, commit: bool = True) -> BindingRecord:
        with django_capture_on_commit_callbacks(execute=commit):
            result = binding_service.binding_create(
                tenant=project.tenant,
                project=project,
                user=writer,
                process=process,
                manifest={"local": ["AGENTS.md"]},
            )
        return BindingRecord.objects.get(pk=result.record.pk)

    return make


def test_a_committed_binding_is_archived_as_canonical_json(bound):
    record = bound()
    assert record.archived_at is not None
    day = record.created_at.strftime("%Y-%m-%d")
    assert record.archive_path == f"acme/web/{day}/{record.pk}.json"
    with default_storage.open(record.archive_path, "rb") as stored:
        content = stored.read()
    assert hashlib.sha256(content).hexdigest() == record.archive_sha256
    assert json.loads(content) == {"id": record.pk, **record.record}
    assert content == json.dumps(
        {"id": record.pk, **record.record},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode("utf-8")
    assert "run-ü".encode() in content


def test_archiving_twice_writes_one_archive_and_changes_nothing(bound, archive_in_process):
    record = bound()
    before = (record.archive_path, record.archive_sha256, record.archived_at)
    assert archive_binding_record.apply(args=[record.pk]).get() is False
    assert archival.binding_record_archive(record_id=record.pk) is False
    record.refresh_from_db()
    assert (record.archive_path, record.archive_sha256, record.archived_at) == before
    assert [p.name for p in archive_in_process.rglob("*.json")] == [f"{record.pk}.json"]


def test_nothing_is_archived_before_the_transaction_commits(bound):
    record = bound(commit=False)
    assert record.archived_at is None
    assert not default_storage.exists(archival.archive_path(record))


def test_a_partial_archive_left_by_a_dead_worker_is_replaced(bound):
    record = bound(commit=False)
    path = archival.archive_path(record)
    default_storage.save(path, __import__("io").BytesIO(b'{"id":'))
    assert archival.binding_record_archive(record_id=record.pk) is True
    record.refresh_from_db()
    with default_storage.open(path, "rb") as stored:
        assert hashlib.sha256(stored.read()).hexdigest() == record.archive_sha256
    assert len(list(default_storage.listdir(path.rsplit("/", 1)[0])[1])) == 1


def test_a_missing_record_is_not_retried_forever(db):
    assert archive_binding_record.apply(args=[987654]).get() is False


def test_the_archive_task_acknowledges_late_and_retries_with_backoff():
    assert archive_binding_record.acks_late is True
    assert archive_binding_record.retry_backoff
    # Any storage error, not only the filesystem's: an object store raises its own.
    for error in (OSError, RuntimeError, ConnectionError):
        assert issubclass(error, archive_binding_record.autoretry_for)
    assert archive_binding_record.max_retries >= 3


def test_a_failing_storage_does_not_fail_the_binding_and_the_sweep_completes_it(
    bound, settings, tmp_path
):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the storage expects a folder")
    good_root = settings.MEDIA_ROOT
    settings.MEDIA_ROOT = blocker
    record = bound()  # archival fails after every retry; the record is committed evidence
    assert record.archived_at is None
    settings.MEDIA_ROOT = good_root
    BindingRecord.objects.filter(pk=record.pk).update(
        created_at=timezone.now() - timedelta(minutes=10)
    )
    call_command("archive_sweep")
    record.refresh_from_db()
    assert record.archived_at is not None
    assert default_storage.exists(record.archive_path)


def test_the_sweep_takes_only_records_older_than_the_delay(bound, settings):
    old = bound(commit=False)
    new = bound(commit=False)
    BindingRecord.objects.filter(pk=old.pk).update(
        created_at=timezone.now()
        - timedelta(seconds=settings.AGENTDOCS_ARCHIVE_SWEEP_AFTER_SECONDS + 5)
    )
    assert binding_selectors.unarchived_record_ids() == [old.pk]
    from agentdocs.tasks import sweep_unarchived_binding_records

    assert sweep_unarchived_binding_records.apply().get() == 1
    old.refresh_from_db()
    new.refresh_from_db()
    assert old.archived_at is not None and new.archived_at is None


def test_the_sweep_command_accepts_a_delay(bound, capsys):
    record = bound(commit=False)
    call_command("archive_sweep", "--older-than", "0")
    assert "Enqueued 1" in capsys.readouterr().out
    record.refresh_from_db()
    assert record.archived_at is not None


def test_the_beat_schedule_runs_the_sweep():
    schedule = celery_app.conf.beat_schedule
    assert any(
        entry["task"] == "agentdocs.tasks.sweep_unarchived_binding_records"
        for entry in schedule.values()
    )


def test_the_sweep_waits_the_delay_again_before_enqueuing_a_record_once_more(
    bound, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "a-file"
    settings.MEDIA_ROOT.write_text("a file where the storage expects a folder")
    record = bound()  # every archive attempt fails: the record stays unarchived
    delay = timedelta(seconds=settings.AGENTDOCS_ARCHIVE_SWEEP_AFTER_SECONDS + 5)
    BindingRecord.objects.filter(pk=record.pk).update(created_at=timezone.now() - delay)
    assert archival.archive_sweep() == [record.pk]
    record.refresh_from_db()
    assert record.archived_at is None and record.archive_enqueued_at is not None
    # Still in the queue, as far as the sweep knows: not enqueued a second time.
    assert archival.archive_sweep() == []
    BindingRecord.objects.filter(pk=record.pk).update(archive_enqueued_at=timezone.now() - delay)
    assert archival.archive_sweep() == [record.pk]


class UnavailableObjectStore(FileSystemStorage):
    """A storage backend whose first saves fail with its own error, not an OSError,
    as an object store's client library raises when the service is unavailable."""

    failures_left = 0

    def _save(self, name, content):
        if UnavailableObjectStore.failures_left:
            UnavailableObjectStore.failures_left -= 1
            raise RuntimeError("the object store is unavailable")
        return super()._save(name, content)


def test_an_object_store_error_leaves_the_record_for_the_retry_and_the_sweep(
    bound, settings, tmp_path
):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": f"{__name__}.UnavailableObjectStore",
            "OPTIONS": {"location": str(tmp_path / "store")},
        },
    }
    UnavailableObjectStore.failures_left = 1
    record = bound()  # in-process, the first attempt fails and asks for a retry
    assert UnavailableObjectStore.failures_left == 0 and record.archived_at is None
    BindingRecord.objects.filter(pk=record.pk).update(
        created_at=timezone.now() - timedelta(minutes=10)
    )
    assert archival.archive_sweep() == [record.pk]
    record.refresh_from_db()
    assert record.archived_at is not None
    assert (tmp_path / "store" / record.archive_path).is_file()


def test_a_process_that_never_imported_the_tasks_still_archives_in_process(bound, monkeypatch):
    # The service names the task rather than importing it; without a broker, Celery
    # finds the task module as a worker would, and the task runs in-process.
    monkeypatch.delitem(sys.modules, "agentdocs.tasks")
    for name in list(celery_app.tasks):
        if name.startswith("agentdocs.tasks."):
            monkeypatch.delitem(celery_app.tasks, name)
    record = bound()
    assert record.archived_at is not None
    assert default_storage.exists(record.archive_path)


def _unarchived_batch(bound, count: int) -> list[int]:
    return [bound(f"run-{i}", commit=False).pk for i in range(count)]


def test_a_batch_is_archived_with_queries_that_do_not_grow_with_it(
    bound, django_assert_max_num_queries, archive_in_process
):
    small, large = _unarchived_batch(bound, 2), _unarchived_batch(bound, 12)
    with django_assert_max_num_queries(5) as small_queries:
        assert archival.binding_records_archive(record_ids=small) == 2
    with django_assert_max_num_queries(5) as large_queries:
        assert archival.binding_records_archive(record_ids=large) == 12
    assert len(large_queries) == len(small_queries)
    for record in BindingRecord.objects.filter(pk__in=small + large):
        with default_storage.open(record.archive_path, "rb") as stored:
            assert stored.read() == archival.archive_bytes(record)
        assert hashlib.sha256(archival.archive_bytes(record)).hexdigest() == record.archive_sha256
    # Again: nothing left to set, nothing written twice.
    assert archival.binding_records_archive(record_ids=small + large) == 0
    assert len(list(archive_in_process.rglob("*.json"))) == 14


def test_a_batch_sets_each_record_once_with_its_own_archive(bound):
    record_ids = _unarchived_batch(bound, 3)
    assert archival.binding_records_archive(record_ids=record_ids[:1]) == 1
    first = BindingRecord.objects.get(pk=record_ids[0])
    assert archival.binding_records_archive(record_ids=record_ids) == 2
    assert BindingRecord.objects.get(pk=record_ids[0]).archived_at == first.archived_at
    paths = set(
        BindingRecord.objects.filter(pk__in=record_ids).values_list("archive_path", flat=True)
    )
    assert len(paths) == 3


def test_a_drain_archives_the_oldest_batch_and_asks_for_the_next_when_full(bound, settings):
    record_ids = _unarchived_batch(bound, 7)
    settings.AGENTDOCS_ARCHIVE_BATCH_SIZE = 2
    settings.AGENTDOCS_ARCHIVE_DRAINS = 3
    # The first drain of a backlog starts several; each of those hands on to one.
    assert archival.archive_pending() == archival.Drained(archived=2, follow=3)
    archived = BindingRecord.objects.filter(archived_at__isnull=False)
    assert sorted(archived.values_list("pk", flat=True)) == record_ids[:2]
    assert archival.archive_pending(handed_on=True) == archival.Drained(archived=2, follow=1)
    assert archival.archive_pending(batch_size=10) == archival.Drained(archived=3, follow=0)
    assert archival.archive_pending() == archival.Drained(archived=0, follow=0)


def test_the_drain_task_hands_on_until_the_backlog_is_archived(bound, settings, archive_in_process):
    from agentdocs.tasks import archive_pending_binding_records

    record_ids = _unarchived_batch(bound, 7)
    settings.AGENTDOCS_ARCHIVE_BATCH_SIZE = 3
    # In-process, the next drains run inside this one: 3, then 3 and 1, then none.
    assert archive_pending_binding_records.apply().get() == 3
    assert not BindingRecord.objects.filter(pk__in=record_ids, archived_at__isnull=True).exists()
    assert sorted(p.name for p in archive_in_process.rglob("*.json")) == sorted(
        f"{pk}.json" for pk in record_ids
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_drains_at_once_take_disjoint_batches(bound, settings, monkeypatch, archive_in_process):
    """A drain skips the records another holds (`FOR UPDATE SKIP LOCKED`): here the
    other is a transaction of this test's own, holding the oldest two."""
    from django.db import connection

    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "row locks are PostgreSQL's; set DATABASE_URL to a PostgreSQL database",
    )
    # Committed for real, each bind enqueues a drain at once: to a broker that keeps it.
    celery_app.conf.task_always_eager = False  # the autouse fixture sets it back
    monkeypatch.setattr(celery_app, "send_task", lambda name, args=(): None)
    record_ids = _unarchived_batch(bound, 5)
    settings.AGENTDOCS_ARCHIVE_BATCH_SIZE = 2
    held = threading.Event()
    release = threading.Event()

    def hold_the_oldest_two() -> None:
        with transaction.atomic():
            list(archival._unarchived()[:2].values_list("id", flat=True))
            held.set()
            release.wait(timeout=30)
        connections.close_all()

    holder = threading.Thread(target=hold_the_oldest_two)
    holder.start()
    try:
        assert held.wait(timeout=30)
        assert archival.archive_pending() == archival.Drained(archived=2, follow=2)
        assert archival.archive_pending(handed_on=True) == archival.Drained(archived=1, follow=0)
    finally:
        release.set()
        holder.join()
    left = BindingRecord.objects.filter(pk__in=record_ids, archived_at__isnull=True)
    assert sorted(left.values_list("pk", flat=True)) == record_ids[:2]
    assert archival.archive_pending() == archival.Drained(archived=2, follow=2)
    assert len(list(archive_in_process.rglob("*.json"))) == 5


def test_a_record_whose_file_fails_is_left_for_the_retry_and_the_others_are_archived(
    bound, settings, tmp_path
):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": f"{__name__}.UnavailableObjectStore",
            "OPTIONS": {"location": str(tmp_path / "store")},
        },
    }
    record_ids = _unarchived_batch(bound, 3)
    UnavailableObjectStore.failures_left = 1
    with pytest.raises(RuntimeError):
        archival.binding_records_archive(record_ids=record_ids)
    left = BindingRecord.objects.filter(pk__in=record_ids, archived_at__isnull=True)
    assert list(left.values_list("pk", flat=True)) == record_ids[:1]
    assert archival.binding_records_archive(record_ids=record_ids) == 1


def test_with_a_broker_a_bind_enqueues_one_drain_while_one_waits(
    bound, settings, monkeypatch, django_capture_on_commit_callbacks
):
    sent: list[tuple] = []
    celery_app.conf.task_always_eager = False  # the autouse fixture sets it back
    monkeypatch.setattr(celery_app, "send_task", lambda name, args=(): sent.append((name, args)))
    from django.core.cache import cache

    cache.delete(archival.ARCHIVE_PENDING_KEY.format(queue=celery_app.conf.task_default_queue))
    for i in range(3):
        bound(f"broker-{i}")
    assert sent == [(archival.ARCHIVE_PENDING_TASK, ())]
    # A drain forgets that it waits before it claims: the next bind enqueues another.
    archival.archive_pending()
    bound("after-the-drain")
    assert sent == [(archival.ARCHIVE_PENDING_TASK, ())] * 2

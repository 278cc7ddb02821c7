"""Archiving binding records in-process (the embedded default): canonical JSON through
Django's storage API, idempotent, retried, and swept when a worker never finished."""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import timedelta

import pytest
from django.core.files.storage import FileSystemStorage, default_storage
from django.core.management import call_command
from django.utils import timezone

from agentdocs.models import BindingRecord
from agentdocs.selectors import bindings as binding_selectors
from agentdocs.services import archival
from agentdocs.services import bindings as binding_service
from agentdocs.tasks import archive_binding_record
from config.celery import app as celery_app

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

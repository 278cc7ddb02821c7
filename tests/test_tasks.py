"""Archival with a real Celery worker process on this machine's Redis and PostgreSQL.

The worker is `celery -A config worker` in a subprocess. It shares the test
database (committed data: these tests use the transactional database) and a
filesystem storage in a temporary folder, and it listens on a queue of its own,
so that nothing else using the same Redis takes or gives it work.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from agentdocs.models import BindingRecord
from agentdocs.services import archival
from agentdocs.services import bindings as binding_service
from config.celery import app as celery_app
from tests.conftest import need_service

pytestmark = [pytest.mark.celery_worker, pytest.mark.redis, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parent.parent
WORKER_START_TIMEOUT = 60
ARCHIVE_TIMEOUT = 90


def _redis_ping(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{db['USER']}{password}@{host}:{port}/{db['NAME']}"


def _wait_until(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"Timed out after {timeout:.0f}s waiting for {what}")


class Worker:
    """One `celery worker` process group, started and ended by this test only."""

    def __init__(self, env: dict[str, str], queue: str, log: Path) -> None:
        self.env, self.queue, self.log_path = env, queue, log
        self.process: subprocess.Popen | None = None
        self.hostname = ""

    def start(self, *, concurrency: int = 1, env: dict[str, str] | None = None) -> None:
        self.hostname = f"agentdocs-test-{uuid.uuid4().hex[:8]}@%h"
        self.log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--queues",
                self.queue,
                "--hostname",
                self.hostname,
                "--concurrency",
                str(concurrency),
                "--pool",
                "prefork",
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env={**self.env, **(env or {})},
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so the pool dies with it
        )

    def kill(self) -> None:
        """SIGKILL the whole group: no warm shutdown, no chance to acknowledge anything."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


@pytest.fixture
def worker_setup(settings, tmp_path, transactional_db) -> Iterator[Callable[[], Worker]]:
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the worker process must share the test database; set DATABASE_URL to PostgreSQL",
    )
    redis_url = django_settings.CELERY_BROKER_URL
    need_service(
        "Redis",
        bool(redis_url) and _redis_ping(redis_url),
        "set REDIS_URL to a running Redis for the Celery broker",
    )
    media = tmp_path / "media"
    media.mkdir()
    settings.MEDIA_ROOT = media
    queue = f"agentdocs-test-{uuid.uuid4().hex[:12]}"
    saved = (celery_app.conf.task_default_queue, celery_app.conf.task_always_eager)
    celery_app.conf.task_default_queue = queue
    celery_app.conf.task_always_eager = False
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": django_settings.REDIS_URL,
        "CELERY_BROKER_URL": redis_url,
        "MEDIA_ROOT": str(media),
        "PYTHONPATH": str(ROOT),
    }
    workers: list[Worker] = []

    def start(concurrency: int = 1, **settings_env: str) -> Worker:
        worker = Worker(env, queue, tmp_path / "worker.log")
        worker.start(concurrency=concurrency, env=settings_env)
        workers.append(worker)
        return worker

    try:
        yield start
    finally:
        for worker in workers:
            worker.kill()
        celery_app.conf.task_default_queue, celery_app.conf.task_always_eager = saved
        _forget_queue(redis_url, queue)


def _forget_queue(redis_url: str, queue: str) -> None:
    """Leave no message of ours in Redis, queued or waiting unacknowledged."""
    import redis

    client = redis.Redis.from_url(redis_url)
    client.delete(queue)
    for tag, payload in client.hgetall("unacked").items():
        try:
            routing_key = json.loads(payload)[2]
        except (ValueError, IndexError, TypeError):
            continue
        if routing_key == queue:
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)


def _bind(project, user, process: str) -> int:
    # The transactional database commits for real, so on_commit enqueues to Redis.
    return binding_service.binding_create(
        tenant=project.tenant,
        project=project,
        user=user,
        process=process,
        manifest={"local": ["AGENTS.md"]},
    ).record.pk


def _archived(record_ids: list[int]) -> int:
    return BindingRecord.objects.filter(pk__in=record_ids, archived_at__isnull=False).count()


def _assert_archives_complete(media: Path, record_ids: list[int]) -> None:
    records = BindingRecord.objects.filter(pk__in=record_ids).select_related("tenant", "project")
    for record in records:
        content = (media / record.archive_path).read_bytes()
        assert hashlib.sha256(content).hexdigest() == record.archive_sha256
        assert json.loads(content) == {"id": record.pk, **record.record}
    # One archive per record: no copy under another name from a repeated task.
    assert sorted(p.name for p in media.rglob("*.json")) == sorted(f"{i}.json" for i in record_ids)


def test_a_worker_archives_a_binding_after_commit(
    worker_setup, api, writer, project, make_document, settings
):
    make_document(project, "AGENTS.md", "# Agents\n")
    worker = worker_setup()
    response = api(writer).post(
        "/api/v1/tenants/acme/projects/web/bindings/",
        {"process": "worker-run", "manifest": {"local": ["AGENTS.md"]}},
        format="json",
    )
    assert response.status_code == 201, response.content
    record_id = response.json()["id"]
    _wait_until(
        lambda: _archived([record_id]) == 1,
        timeout=WORKER_START_TIMEOUT + ARCHIVE_TIMEOUT,
        what=f"the worker to archive record {record_id}. Worker log:\n{worker.log_text()}",
    )
    _assert_archives_complete(Path(settings.MEDIA_ROOT), [record_id])


def test_a_worker_killed_mid_batch_loses_nothing_once_the_sweep_runs(
    worker_setup, writer, project, make_document, settings
):
    make_document(project, "AGENTS.md", "# Agents\n")
    # Enqueued while no worker runs: the batch waits in Redis.
    record_ids = [_bind(project, writer, f"batch-{i}") for i in range(300)]
    # Batches of one record, so that it can be killed halfway through the backlog.
    first = worker_setup(AGENTDOCS_ARCHIVE_BATCH_SIZE="1")
    _wait_until(
        lambda: _archived(record_ids) >= 20,
        timeout=WORKER_START_TIMEOUT + ARCHIVE_TIMEOUT,
        what=f"the first worker to start archiving. Worker log:\n{first.log_text()}",
    )
    first.kill()
    done_at_kill = _archived(record_ids)
    assert done_at_kill < len(record_ids), "the worker finished before it could be killed"

    second = worker_setup()
    # The sweep re-enqueues every record still unarchived, whatever the broker kept:
    # the message the killed worker held unacknowledged is not redelivered for an hour.
    archival.archive_sweep(older_than=timedelta(0), limit=len(record_ids))
    _wait_until(
        lambda: _archived(record_ids) == len(record_ids),
        timeout=ARCHIVE_TIMEOUT,
        what=f"the sweep to complete the batch. Worker log:\n{second.log_text()}",
    )
    _assert_archives_complete(Path(settings.MEDIA_ROOT), record_ids)


def test_a_worker_drains_a_backlog_in_batches_one_update_each(
    worker_setup, writer, project, make_document, settings
):
    make_document(project, "AGENTS.md", "# Agents\n")
    # Bound while no worker runs: one drain task waits in Redis for all of them.
    record_ids = [_bind(project, writer, f"backlog-{i}") for i in range(120)]
    worker = worker_setup(AGENTDOCS_ARCHIVE_BATCH_SIZE="50")
    _wait_until(
        lambda: _archived(record_ids) == len(record_ids),
        timeout=WORKER_START_TIMEOUT + ARCHIVE_TIMEOUT,
        what=f"the worker to drain the backlog. Worker log:\n{worker.log_text()}",
    )
    _assert_archives_complete(Path(settings.MEDIA_ROOT), record_ids)
    # Each batch's archive fields are set by one UPDATE, at one time: 50, 50 and 20.
    times = BindingRecord.objects.filter(pk__in=record_ids).values_list("archived_at", flat=True)
    assert sorted(Counter(times).values()) == [20, 50, 50]


def test_a_worker_verifies_and_exports_the_audit_chain(
    worker_setup, api, admin, project, make_document, settings
):
    """The audit chain's tasks (issue 34): a verification and an export asked for
    through the API are run by the worker; the export's file, written by the worker into
    the shared media storage, is what the request would have streamed."""
    make_document(project, "agent.md", "# Rules\n")
    client = api(admin)
    settings.AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS = 10_000
    lines = client.get("/api/v1/tenants/acme/audit/export", HTTP_ACCEPT="application/jsonl")
    streamed = b"".join(lines.streaming_content)
    worker = worker_setup()

    verification = client.post("/api/v1/tenants/acme/audit/verify")
    export = client.post("/api/v1/tenants/acme/audit/export")
    assert verification.status_code == export.status_code == 202

    def done(location: str) -> bool:
        return client.get(location).json()["state"] in ("done", "failed")

    for response in (verification, export):
        _wait_until(
            lambda response=response: done(response["Location"]),
            timeout=WORKER_START_TIMEOUT + ARCHIVE_TIMEOUT,
            what=f"the worker to finish {response['Location']}. Worker log:\n{worker.log_text()}",
        )
    report = client.get(verification["Location"]).json()["report"]
    assert report["ok"] is True, report
    status = client.get(export["Location"]).json()
    assert status["state"] == "done", status
    assert status["sha256"] == hashlib.sha256(streamed).hexdigest()
    download = client.get(status["download"])
    assert b"".join(download.streaming_content) == streamed

"""Celery on RabbitMQ: binding records bound through the API are archived by a worker.

Everything is a real process: gunicorn serves the API and enqueues the archival on
RabbitMQ once the record is committed; `celery -A config worker` takes it from there
and writes the archive into the storage both share. Both use the test database
(committed data: this test uses the transactional database) and a queue of their
own (`CELERY_TASK_DEFAULT_QUEUE`), deleted afterwards.

RabbitMQ is found at AGENTDOCS_TEST_RABBITMQ_URL (`.ci/run` exports it), else at
amqp://guest:guest@127.0.0.1:5672//.
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
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

from agentdocs.models import BindingRecord
from tests.app_servers import ROOT, AppServer, app_environment, seed
from tests.conftest import need_service

pytestmark = [
    pytest.mark.rabbitmq,
    pytest.mark.celery_worker,
    pytest.mark.postgres,
    pytest.mark.slow,
]

RABBITMQ_URL = (
    os.environ.get("AGENTDOCS_TEST_RABBITMQ_URL") or "amqp://guest:guest@127.0.0.1:5672//"
)
ARCHIVE_TIMEOUT = 120


def _rabbitmq_answers(url: str) -> bool:
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=3) as broker:
            broker.ensure_connection(max_retries=1)
        return True
    except Exception:  # any failure to connect means "not available"
        return False


def _shown(url: str) -> str:
    """The URL with its password masked, for messages."""
    from kombu import Connection

    return str(Connection(url).as_uri())


def _delete_queue(url: str, queue: str) -> None:
    from kombu import Connection

    with Connection(url, connect_timeout=3) as broker:
        broker.default_channel.queue_delete(queue)


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{db['USER']}{password}@{host}:{port}/{db['NAME']}"


@pytest.fixture
def on_rabbitmq(transactional_db, tmp_path) -> Iterator[tuple[AppServer, Path, Path]]:
    """The app server and a worker on a queue of RabbitMQ's; (server, media, worker log)."""
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the app server and the worker share the test database; set DATABASE_URL to PostgreSQL",
    )
    need_service(
        "RabbitMQ",
        _rabbitmq_answers(RABBITMQ_URL),
        f"nothing answers at {_shown(RABBITMQ_URL)}; start it (rabbitmq-server -detached) or set "
        "AGENTDOCS_TEST_RABBITMQ_URL",
    )
    queue = f"agentdocs-test-{uuid.uuid4().hex[:12]}"
    env = app_environment(
        tmp_path,
        DATABASE_URL=_database_url(),
        CACHE_DIR=str(tmp_path / "cache"),
        CELERY_BROKER_URL=RABBITMQ_URL,
        CELERY_TASK_DEFAULT_QUEUE=queue,
    )
    media = Path(env["MEDIA_ROOT"])
    media.mkdir()
    log = tmp_path / "worker.log"
    server = AppServer(env, tmp_path, name="web")
    with log.open("ab") as output:
        worker = subprocess.Popen(
            [
                *(sys.executable, "-m", "celery", "-A", "config", "worker", "--queues", queue),
                *("--hostname", f"{queue}@%h", "--concurrency", "1", "--loglevel", "INFO"),
                *("--without-gossip", "--without-mingle"),
            ],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        server.start(workers=1)
        yield server, media, log
    finally:
        server.stop()
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)
        _delete_queue(RABBITMQ_URL, queue)


def test_binding_records_are_archived_by_a_worker_on_rabbitmq(on_rabbitmq):
    server, media, log = on_rabbitmq
    cast = seed()
    bindings = f"/api/v1/tenants/{cast.tenant}/projects/{cast.project}/bindings/"
    record_ids = []
    for number in range(3):
        response = server.call(
            "POST",
            bindings,
            cast.tokens["writer"],
            {"process": f"rabbit-run-{number}", "manifest": {"local": ["agent.md"]}},
        )
        assert response.status_code == 201, response.text
        record_ids.append(response.json()["id"])

    deadline = time.monotonic() + ARCHIVE_TIMEOUT
    archived = BindingRecord.objects.filter(pk__in=record_ids, archived_at__isnull=False)
    while archived.count() < len(record_ids):
        assert time.monotonic() < deadline, f"not archived in time. Worker log:\n{log.read_text()}"
        time.sleep(0.3)

    for record in BindingRecord.objects.filter(pk__in=record_ids):
        content = (media / record.archive_path).read_bytes()
        assert hashlib.sha256(content).hexdigest() == record.archive_sha256
        assert json.loads(content) == {"id": record.pk, **record.record}
    assert "Connected to amqp://" in log.read_text()  # the worker's broker was RabbitMQ

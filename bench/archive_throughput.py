#!/usr/bin/env python3
"""How many binding records per second one Celery worker archives.

Needs PostgreSQL and Redis (the same ones the worker tests use):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentdocs \\
    REDIS_URL=redis://127.0.0.1:6379/0 \\
    .venv/bin/python bench/archive_throughput.py [--records 1000] [--concurrency 1 2]

It creates a throwaway database (``test_<name>``, dropped afterwards), binds
``--records`` records while no worker runs (so the batch waits in Redis on a
queue of its own), then starts one ``celery -A config worker`` and waits until
every record is archived. Throughput is counted between the first and the last
``archived_at``, so the worker's start-up is not part of it; the wall time from
start is printed too. It is a benchmark, not a test: it always exits 0 unless
something breaks.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument(
        "--prefetch-multiplier",
        type=int,
        default=None,
        help="the worker's --prefetch-multiplier (default: the settings')",
    )
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres") or not os.environ.get(
        "REDIS_URL"
    ):
        raise SystemExit("Set DATABASE_URL (PostgreSQL) and REDIS_URL: the worker needs both.")

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from config.celery import app as celery_app

    media = Path(tempfile.mkdtemp(prefix="agentdocs-bench-media-"))
    settings.MEDIA_ROOT = media
    old_name = connection.settings_dict["NAME"]
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        for concurrency in args.concurrency:
            queue = f"agentdocs-bench-{uuid.uuid4().hex[:12]}"
            celery_app.conf.task_default_queue = queue
            celery_app.conf.task_always_eager = False
            run(
                args.records,
                concurrency,
                queue,
                test_name,
                media,
                args.timeout,
                args.prefetch_multiplier,
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(
    records: int,
    concurrency: int,
    queue: str,
    db_name: str,
    media: Path,
    timeout: float,
    prefetch: int | None = None,
):
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.db.models import Max, Min

    from agentdocs.models import BindingRecord
    from agentdocs.services import bindings as binding_service
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenants as tenant_service

    suffix = uuid.uuid4().hex[:8]
    user = get_user_model().objects.create_user(username=f"bench-{suffix}")
    tenant = tenant_service.tenant_create(slug=f"bench-{suffix}", name="Bench", user=user)
    project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=user)
    for i in range(5):
        document_service.document_create(
            project=project, path=f"doc-{i}.md", body=f"# Doc {i}\n" + "text\n" * 200, user=user
        )
    manifest = {"local": [f"doc-{i}.md" for i in range(5)]}
    started = time.monotonic()
    ids = [
        binding_service.binding_create(
            tenant=tenant, project=project, user=user, process=f"run-{i}", manifest=manifest
        ).record.pk
        for i in range(records)
    ]
    bind_seconds = time.monotonic() - started

    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db_name}",
        "MEDIA_ROOT": str(media),
        "PYTHONPATH": str(ROOT),
        "LOG_LEVEL": "WARNING",
    }
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--queues",
            queue,
            "--concurrency",
            str(concurrency),
            "--pool",
            "prefork",
            "--loglevel",
            "WARNING",
            "--hostname",
            f"bench-{suffix}@%h",
            "--without-gossip",
            "--without-mingle",
            *(["--prefetch-multiplier", str(prefetch)] if prefetch else []),
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    worker_started = time.monotonic()
    try:
        pending = BindingRecord.objects.filter(pk__in=ids, archived_at__isnull=True)
        while pending.exists():
            if time.monotonic() - worker_started > timeout:
                raise SystemExit(f"Not every record was archived within {timeout:.0f}s.")
            time.sleep(0.25)
        wall = time.monotonic() - worker_started
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)
    span = BindingRecord.objects.filter(pk__in=ids).aggregate(
        first=Min("archived_at"), last=Max("archived_at")
    )
    seconds = (span["last"] - span["first"]).total_seconds()
    rate = (records - 1) / seconds if seconds > 0 else float("inf")
    # The rate in each quarter of the run, in the order the records were archived: a
    # rate that falls within one run is a cost that grows as the backlog is worked off.
    times = sorted(BindingRecord.objects.filter(pk__in=ids).values_list("archived_at", flat=True))
    quarter = len(times) // 4
    spans = (
        [
            max((times[(q + 1) * quarter - 1] - times[q * quarter]).total_seconds(), 1e-6)
            for q in range(4)
        ]
        if quarter > 1
        else []
    )
    quarters = [f"{quarter / span:.0f}" for span in spans] if quarter > 1 else []
    print(
        f"concurrency {concurrency}: {records} records archived, "
        f"{rate:.0f} records/s between first and last archive ({seconds:.2f}s); "
        f"{wall:.2f}s wall from worker start; binding them took {bind_seconds:.2f}s "
        f"({records / bind_seconds:.0f} binds/s in one process); by quarter: "
        f"{', '.join(quarters)} records/s",
        flush=True,
    )


if __name__ == "__main__":
    main()

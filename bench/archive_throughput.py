#!/usr/bin/env python3
"""How many binding records per second one Celery worker archives.

Needs PostgreSQL and Redis (the same ones the worker tests use):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentdocs \\
    REDIS_URL=redis://127.0.0.1:6379/0 \\
    .venv/bin/python bench/archive_throughput.py [--records 1000 10000] [--concurrency 2]
        [--mode per-record batch] [--batch-size 500] [--drains 2] [--per-record-sample 5000]

It creates a throwaway database (``test_<name>``, dropped afterwards). For each size,
concurrency and mode it makes ``--records`` binding records while no worker runs (one
through the binding service, the rest bulk-inserted copies of it, so 100,000 take
seconds, not the binding service's minutes), then enqueues their archival, starts one
``celery -A config worker`` and waits until every record is archived:

- ``per-record``: one ``archive_binding_record`` task per record, as every bind
  enqueued before batching (the task is kept for messages already queued);
- ``batch``: what a bind enqueues now, one drain (``archive_pending_binding_records``),
  which archives the backlog in batches of ``--batch-size`` and hands on to
  ``--drains`` drains that run at once (``AGENTDOCS_ARCHIVE_DRAINS``), each handing on
  to its next while its batch was full.

``--per-record-sample N`` has the per-record mode archive only the oldest N records of
the backlog (one task each; the backlog is still ``--records`` long), for sizes where
one task per record would take an hour; the batch mode always archives all of them.

Throughput is counted between the first and the last ``archived_at`` (a batch's records
share one), over the records archived after the first ones, so the worker's start-up is
not part of it; the wall time from the worker's start is printed too. It is a
benchmark, not a test: it always exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[1000])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[2])
    parser.add_argument(
        "--mode", nargs="+", choices=("per-record", "batch"), default=["per-record", "batch"]
    )
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--drains", type=int, default=2, help="AGENTDOCS_ARCHIVE_DRAINS")
    parser.add_argument(
        "--per-record-sample",
        type=int,
        default=None,
        help="per-record mode: archive only the oldest N records of the backlog",
    )
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument(
        "--prefetch-multiplier",
        type=int,
        default=None,
        help="the worker's --prefetch-multiplier (default: the settings')",
    )
    args = parser.parse_args(argv)
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
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    try:
        for records in args.records:
            for concurrency in args.concurrency:
                for mode in args.mode:
                    queue = f"agentdocs-bench-{uuid.uuid4().hex[:12]}"
                    celery_app.conf.task_default_queue = queue
                    celery_app.conf.task_always_eager = False
                    run(
                        records,
                        concurrency,
                        queue,
                        test_name,
                        media,
                        args.timeout,
                        args.prefetch_multiplier,
                        mode=mode,
                        batch_size=args.batch_size,
                        drains=args.drains,
                        sample=args.per_record_sample,
                    )
    finally:
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        shutil.rmtree(media, ignore_errors=True)
        connection.creation.destroy_test_db(old_name, verbosity=0)


def _bulk_records(tenant, project, user, records: int) -> list[int]:
    """``records`` unarchived binding records: one bound through the service, the rest
    bulk-inserted copies of it (each with its own process and time)."""
    from datetime import timedelta

    from django.utils import timezone

    from agentdocs.models import BindingRecord
    from agentdocs.services import bindings as binding_service

    manifest = {"local": [f"doc-{i}.md" for i in range(5)]}
    first = binding_service.binding_create(
        tenant=tenant, project=project, user=user, process="run-0", manifest=manifest
    ).record
    now = timezone.now()
    copies = []
    for i in range(1, records):
        record = dict(first.record)
        record["process"] = f"run-{i}"
        copies.append(
            BindingRecord(
                tenant=tenant,
                project=project,
                process=f"run-{i}",
                created_by=user,
                created_at=now + timedelta(microseconds=i),
                schema=first.schema,
                record=record,
                problem_count=first.problem_count,
                memory_block_sha256=first.memory_block_sha256,
                signature=first.signature,
            )
        )
    made = BindingRecord.objects.bulk_create(copies, batch_size=2000)
    return [first.pk, *(record.pk for record in made)]


def run(
    records: int,
    concurrency: int,
    queue: str,
    db_name: str,
    media: Path,
    timeout: float,
    prefetch: int | None = None,
    *,
    mode: str = "batch",
    batch_size: int = 500,
    drains: int = 2,
    sample: int | None = None,
):
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.db.models import Max, Min

    from agentdocs.models import BindingRecord
    from agentdocs.services import archival
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service
    from config.celery import app as celery_app

    suffix = uuid.uuid4().hex[:8]
    user = get_user_model().objects.create_user(username=f"bench-{suffix}")
    tenant = tenant_service.tenant_create(slug=f"bench-{suffix}", name="Bench", user=user)
    project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=user)
    for i in range(5):
        document_service.document_create(
            project=project, path=f"doc-{i}.md", body=f"# Doc {i}\n" + "text\n" * 200, user=user
        )
    # Whatever earlier runs left unarchived is archived first (by the drain), so count ours.
    BindingRecord.objects.filter(archived_at__isnull=True).update(
        archived_at=django_now(), archive_path="-", archive_sha256="-"
    )
    started = time.monotonic()
    ids = _bulk_records(tenant, project, user, records)
    seed_seconds = time.monotonic() - started
    # The first record's bind already enqueued a drain (on commit, outside a transaction).
    if mode == "per-record":
        _forget(queue)
        ids = ids[:sample] if sample else ids
        for record_id in ids:
            celery_app.send_task(archival.ARCHIVE_TASK, args=(record_id,))
    else:
        _forget(queue)
        from django.core.cache import cache

        cache.delete(archival.ARCHIVE_PENDING_KEY.format(queue=queue))
        archival.binding_record_archive_enqueue(record_id=ids[-1])

    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db_name}",
        "MEDIA_ROOT": str(media),
        "PYTHONPATH": str(ROOT),
        "LOG_LEVEL": "WARNING",
        "AGENTDOCS_ARCHIVE_BATCH_SIZE": str(batch_size),
        "AGENTDOCS_ARCHIVE_DRAINS": str(drains),
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
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    # The run's records: its project's, up to the last it waits for (ids ascend).
    ours = BindingRecord.objects.filter(project=project, pk__lte=ids[-1])
    try:
        pending = ours.filter(archived_at__isnull=True)
        while pending.exists():
            if time.monotonic() - worker_started > timeout:
                raise SystemExit(f"Not every record was archived within {timeout:.0f}s.")
            time.sleep(0.25)
        wall = time.monotonic() - worker_started
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)
    span = ours.aggregate(first=Min("archived_at"), last=Max("archived_at"))
    seconds = (span["last"] - span["first"]).total_seconds()
    # The records archived after the first UPDATE (a batch's share its time).
    after_first = ours.filter(archived_at__gt=span["first"]).count()
    rate = after_first / seconds if seconds > 0 else float("inf")
    # The rate in each quarter of the run, in the order the records were archived: a
    # rate that falls within one run is a cost that grows as the backlog is worked off.
    times = sorted(ours.values_list("archived_at", flat=True))
    quarter = len(times) // 4
    spans = (
        [
            max((times[(q + 1) * quarter - 1] - times[q * quarter]).total_seconds(), 1e-6)
            for q in range(4)
        ]
        if quarter > 1 and mode == "per-record"
        else []
    )
    batches = len(set(times))
    quarters = [f"{quarter / span:.0f}" for span in spans] if quarter > 1 else []
    print(
        f"{mode}, concurrency {concurrency}: {len(ids)} records archived"
        f"{f' (of a backlog of {records})' if len(ids) < records else ''}, "
        f"{rate:.0f} records/s between first and last archive ({seconds:.2f}s); "
        f"{wall:.2f}s wall from worker start ({len(ids) / wall:.0f} records/s); "
        f"seeding took {seed_seconds:.2f}s; {batches} UPDATEs; by quarter: "
        f"{', '.join(quarters) or '-'} records/s; load average at worker start {load}",
        flush=True,
    )


def django_now():
    from django.utils import timezone

    return timezone.now()


def _forget(queue: str) -> None:
    """Empty our queue in Redis (the first record's bind enqueued a drain there)."""
    import redis

    redis.Redis.from_url(os.environ.get("CELERY_BROKER_URL") or os.environ["REDIS_URL"]).delete(
        queue
    )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What verifying and exporting a long history chain costs a request (issue 34): a
tenant of ``--rows`` chained history rows (100,000 by default), its verification asked
for through the API (the request hands it to a task and answers 202), the task walking
the chain (rows a second), a short chain verified within the request; the same for the
export (the requests that start it, the task writing the file and the memory it holds, a
short chain streamed within the request), and the file's download.

    .venv/bin/python bench/audit.py [--rows 100000] [--sync-rows 500] [--rounds 2]
                                    [--postgres URL | --sqlite]

The tenant is built with bulk inserts (its history rows chained as the services chain
theirs): versions of `web/agent.md` of about 800 bytes each (the size that made the
export 5.7 MB at 7,230 rows) and one `.AGENTS/` document per ten rows. Requests go
through the whole Django stack with an admin's API token. The task
is sent to an in-memory broker (no worker takes it), so the request's time is the
request's own; then the task is run here, timed.

PostgreSQL by default (the database `agentdocs_bench_audit` is created and dropped on
`--postgres`, default postgres://postgres@127.0.0.1:5432/postgres); `--sqlite` uses a
throwaway file. It exits 1 when a request answers another status than it should, or
when the chain does not verify; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
DATABASE = "agentdocs_bench_audit"
VERSION_BYTES = 800
BATCH = 2000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="history rows in the chain")
    parser.add_argument(
        "--sync-rows", type=int, default=500, help="the short chain verified in the request"
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--sqlite", action="store_true", help="a throwaway SQLite file instead")
    args = parser.parse_args()

    from bench.common import in_process_database, load_average

    print(f"load average at the start: {load_average()}")
    try:
        with in_process_database(name=DATABASE, admin_url=args.postgres, sqlite=args.sqlite):
            failures = _measure(args)
    finally:
        print(f"load average at the end: {load_average()}")
    sys.exit(1 if failures else 0)


def _tenant(slug: str, rows: int, admin):
    """A tenant of ``rows`` chained history rows, admin its admin: a project `web` whose
    `agent.md` has the versions, and one `.AGENTS/` document per ten rows, each with
    its first version. Rows go in with `bulk_create`, chained first as the services
    chain theirs (`audit_chain.history_rows_link`); no events, which this does not read."""
    import hashlib

    from django.db import transaction
    from django.utils import timezone

    from agentdocs.management.commands.seed_large_tenant import filler_text
    from agentdocs.models import AuditChainHead, ChangeType, Document
    from agentdocs.services import audit_chain
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service

    tenant = tenant_service.tenant_create(slug=slug, name=slug.title(), user=admin)
    web = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
    agent = document_service.document_create(
        project=web, path="agent.md", body="# Rules\n", user=admin
    )
    history = Document.history.model
    now = timezone.now()
    text = filler_text(VERSION_BYTES, seed=1)

    def version(document, number: int, body: str):
        return history(
            id=document.pk,
            project_id=document.project_id,
            path=document.path,
            body=body,
            sha256=hashlib.sha256(body.encode()).hexdigest(),
            size=len(body.encode()),
            version=number,
            updated_by=admin,
            updated_at=now,
            history_date=now,
            history_type="+" if number == 1 else "~",
            history_user=admin,
            history_change_reason="bench",
            change_type=ChangeType.CREATED if number == 1 else ChangeType.WRITTEN,
        )

    left = rows - AuditChainHead.objects.get(tenant=tenant).seq
    documents = left // 10
    with transaction.atomic():
        made = Document.objects.bulk_create(
            [
                Document(
                    project=web,
                    path=f".AGENTS/doc{n:05}.md",
                    body=text,
                    sha256=hashlib.sha256(text.encode()).hexdigest(),
                    size=len(text.encode()),
                    version=1,
                    updated_by=admin,
                    updated_at=now,
                )
                for n in range(documents)
            ],
            batch_size=BATCH,
        )
        rows_made = [version(document, 1, text) for document in made]
        bodies = [f"{text}\n<!-- revision {n} -->\n" for n in range(2, left - documents + 2)]
        rows_made += [version(agent, n, body) for n, body in enumerate(bodies, start=2)]
        audit_chain.history_rows_link(tenant_id=tenant.pk, rows=rows_made)
        history.objects.bulk_create(rows_made, batch_size=BATCH)
        if bodies:
            last = rows_made[-1]
            Document.objects.filter(pk=agent.pk).update(
                body=last.body, sha256=last.sha256, size=last.size, version=last.version
            )
    return tenant


def _measure(args: argparse.Namespace) -> int:
    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from agentdocs.models import AuditChainHead, AuditExportRun, AuditVerification
    from agentdocs.services import tokens as token_service
    from agentdocs.tasks import export_audit_chain, verify_audit_chain
    from bench.common import in_process_cast
    from config.celery import app as celery_app

    failures = 0
    admin, _reader, _acme = in_process_cast()
    started = time.perf_counter()
    big = _tenant("big", args.rows, admin)
    small = _tenant("small", args.sync_rows, admin)
    seeded = time.perf_counter() - started
    length = AuditChainHead.objects.get(tenant=big).seq
    short = AuditChainHead.objects.get(tenant=small).seq
    print(
        f"database: {connection.vendor}; chain of {length} rows (and {short}), seeded in "
        f"{seeded:.1f} s; {args.rounds} rounds"
    )

    key = token_service.token_create(user=admin, name="audit", scopes=["read", "admin"]).key
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    # The task goes to a broker no worker reads: the request's time is its own.
    celery_app.conf.task_always_eager = False
    celery_app.conf.broker_url = "memory://"
    settings.AGENTDOCS_AUDIT_VERIFY_SYNC_ROWS = max(short, args.sync_rows)

    def timed(method: str, path: str, expect: int) -> float:
        nonlocal failures
        began = time.perf_counter()
        response = getattr(client, method)(path)
        seconds = time.perf_counter() - began
        if response.status_code != expect:
            print(f"{method.upper()} {path}: {response.status_code}, not {expect}")
            failures += 1
        return seconds

    results: dict[str, list[float]] = {}
    verify, sync_verify = "/api/v1/tenants/big/audit/verify", "/api/v1/tenants/small/audit/verify"
    for _ in range(args.rounds):
        AuditVerification.objects.all().delete()
        results.setdefault(f"GET verify, {length} rows (202)", []).append(timed("get", verify, 202))
        AuditVerification.objects.all().delete()
        results.setdefault(f"POST verify, {length} rows (202)", []).append(
            timed("post", verify, 202)
        )
        results.setdefault(f"GET verify, {short} rows (200, in the request)", []).append(
            timed("get", sync_verify, 200)
        )
    for name, values in results.items():
        print(
            f"{name:44}median {statistics.median(values) * 1000:8.1f} ms, "
            f"max {max(values) * 1000:8.1f} ms"
        )

    # The task, run here as a worker runs it.
    AuditVerification.objects.all().delete()
    verification_id = client.post(verify).json()["id"]
    began = time.perf_counter()
    verify_audit_chain(verification_id)
    walked = time.perf_counter() - began
    verification = AuditVerification.objects.get(pk=verification_id)
    report = verification.report or {}
    print(
        f"verify task: {verification.checked} rows in {walked:.2f} s, "
        f"{verification.checked / walked:,.0f} rows/s; ok={report.get('ok')}"
    )
    if not report.get("ok"):
        print(f"the chain does not verify: {report}")
        failures += 1

    # The export: the requests that start it (202) and a short chain streamed within
    # the request (200), the task writing the file, then the file's download.
    settings.AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS = max(short, args.sync_rows)
    export, sync_export = "/api/v1/tenants/big/audit/export", "/api/v1/tenants/small/audit/export"
    results = {}
    for _ in range(args.rounds):
        AuditExportRun.objects.all().delete()
        results.setdefault(f"GET export, {length} rows (202)", []).append(timed("get", export, 202))
        AuditExportRun.objects.all().delete()
        results.setdefault(f"POST export, {length} rows (202)", []).append(
            timed("post", export, 202)
        )
        began = time.perf_counter()
        response = client.get(sync_export, HTTP_ACCEPT="application/jsonl")
        streamed = b"".join(response.streaming_content)
        results.setdefault(f"GET export, {short} rows (200, streamed)", []).append(
            time.perf_counter() - began
        )
        streamed_lines = streamed.count(b"\n")
        if response.status_code != 200 or streamed_lines != short + 1:
            print(f"short export: {response.status_code}, {streamed_lines} lines")
            failures += 1
    for name, values in results.items():
        print(
            f"{name:44}median {statistics.median(values) * 1000:8.1f} ms, "
            f"max {max(values) * 1000:8.1f} ms"
        )

    AuditExportRun.objects.all().delete()
    run_id = client.post(export).json()["id"]
    gc.collect()
    tracemalloc.start()
    began = time.perf_counter()
    export_audit_chain(run_id)
    wrote = time.perf_counter() - began
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    run = AuditExportRun.objects.get(pk=run_id)
    print(
        f"export task: {run.written} rows, {run.bytes / 1e6:.1f} MB in {wrote:.2f} s "
        f"(traced), {run.written / wrote:,.0f} rows/s, at most {peak:.1f} MB held; "
        f"state {run.state}"
    )
    if run.state != "done" or run.written != length:
        print(f"export task: {run.state} {run.error}, {run.written} rows")
        failures += 1
    download = f"/api/v1/tenants/big/audit/exports/{run_id}/download"
    for _ in range(args.rounds):
        began = time.perf_counter()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(download, HTTP_ACCEPT="application/jsonl")
            size = sum(len(chunk) for chunk in response.streaming_content)
        took = time.perf_counter() - began
        print(
            f"GET download, {length} rows: {size / 1e6:.1f} MB in {took * 1000:.1f} ms "
            f"(read through Django; gunicorn sends the file with sendfile), "
            f"{len(queries)} queries"
        )
        if response.status_code != 200 or size != run.bytes:
            print(f"download: {response.status_code}, {size} bytes of {run.bytes}")
            failures += 1
    return failures


if __name__ == "__main__":
    main()

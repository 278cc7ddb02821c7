#!/usr/bin/env python3
"""What verifying and exporting a long history chain costs a request (issue 34): a
tenant of ``--rows`` chained history rows (100,000 by default), its verification asked
for through the API (the request hands it to a task and answers 202), the task walking
the chain (rows a second), a short chain verified within the request, and the export's
time to its first byte, to its last, and the memory it holds.

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
TRACED_LINES = 20_000


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
    from agentdocs.services import tenants as tenant_service

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

    from agentdocs.models import AuditChainHead, AuditVerification
    from agentdocs.services import tokens as token_service
    from agentdocs.tasks import verify_audit_chain
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

    # The export: time to the first byte and to the last, bytes, and memory held.
    export = "/api/v1/tenants/big/audit/export"
    for round_ in range(args.rounds + 1):
        gc.collect()
        # A last round measures memory (slower, so not timed) over the first lines.
        tracing = round_ == args.rounds
        if tracing:
            tracemalloc.start()
        began = time.perf_counter()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(export, HTTP_ACCEPT="application/jsonl")
            chunks = iter(response.streaming_content)
            first = next(chunks)
            first_byte = time.perf_counter() - began
            size, lines = len(first), first.count(b"\n")
            for chunk in chunks:
                size += len(chunk)
                lines += chunk.count(b"\n")
                if tracing and lines >= TRACED_LINES:
                    response.close()
                    break
        total = time.perf_counter() - began
        if tracing:
            peak = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            print(
                f"GET export, {length} rows: at most {peak:.1f} MB held while it streams "
                f"(its first {lines} lines)"
            )
            continue
        print(
            f"GET export, {length} rows: first byte {first_byte * 1000:.1f} ms, last "
            f"{total:.2f} s, {size / 1e6:.1f} MB in {lines} lines, {len(queries)} queries"
        )
        if response.status_code != 200 or lines != length + 1:
            print(f"export: {response.status_code}, {lines} lines")
            failures += 1
    return failures


if __name__ == "__main__":
    main()

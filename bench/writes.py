"""Document writes at the database's pace: the chain's cost, and concurrent writers.

In-process: a fresh database (PostgreSQL by default, `agentdocs_bench_writes`, created
and dropped) with `--tenants` tenants (8), each with a project and one document per
writer. Then:

1. **One write against a plain INSERT of the same rows**: `document_write` with the
   history chain (**chained**), the same with the chain's receivers disconnected
   (**unchained**), and, for the floor, the rows a write leaves written directly: the
   document's UPDATE and its history row's INSERT in one transaction (**plain**). Each
   side `--writes` times per round, the sides taking turns in batches of 10; the
   median per-write time and the medians of the rounds' ratios, and the queries of
   each side.
2. **Concurrent writers**: `--writers` (8) processes, each writing its own document
   `--concurrent-writes` times through `document_write` (chained), all in **one
   tenant** (they queue on its chain head) and then each in **its own tenant**:
   writes per second over the whole run, p50 and p99 per write. Every tenant's chain
   is then verified (`audit_chain_verify`): the run stops with exit 1 if one is broken.

    .venv/bin/python bench/writes.py [--writes 200] [--rounds 3] [--writers 8]
        [--concurrent-writes 100] [--postgres URL]

The concurrent part needs PostgreSQL (SQLite has one writer at a time). Talks to
127.0.0.1 only. See bench/README.md.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
DATABASE = "agentdocs_bench_writes"
BATCH = 10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=200, help="writes per side and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--writers", type=int, default=8, help="concurrent writer processes")
    parser.add_argument("--tenants", type=int, default=8)
    parser.add_argument("--concurrent-writes", type=int, default=100, help="per writer")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default=DATABASE)
    args = parser.parse_args(argv)

    from bench.common import in_process_database, load_average

    print(f"load average at the start {load_average()}")
    with in_process_database(name=args.database, admin_url=args.postgres, sqlite=False):
        ok = _measure(args)
    print(f"load average now {load_average()}")
    return 0 if ok else 1


def _chain(on: bool) -> None:
    from simple_history.signals import post_create_historical_record, pre_create_historical_record

    from agentdocs.services import audit_chain

    for signal, receiver, uid in (
        (pre_create_historical_record, audit_chain.history_row_link, "agentdocs.audit_chain"),
        (
            post_create_historical_record,
            audit_chain.history_row_link_after_insert,
            "agentdocs.audit_chain.late",
        ),
    ):
        if on:
            signal.connect(receiver, dispatch_uid=uid)
        else:
            signal.disconnect(dispatch_uid=uid)


def _per_op(run: Callable[[int], None], count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        run(i)
    return (time.perf_counter() - started) / count


def _seed(args: argparse.Namespace) -> tuple[object, list[dict[str, int]]]:
    """The admin, and per tenant its id and the ids of its writers' documents."""
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service
    from bench.common import in_process_cast

    admin, _, first = in_process_cast()
    # The last one is the single writes' (whose unchained and plain rows are outside its
    # chain); the concurrent writers write in the others, whose chains are verified.
    tenants = [first] + [
        tenant_service.tenant_create(slug=f"tenant-{i}", name=f"Tenant {i}", user=admin)
        for i in range(1, args.tenants + 1)
    ]
    seeded = []
    for tenant in tenants:
        project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
        documents = [
            document_service.document_create(
                project=project, path=f"notes-{w}.md", body="v1\n" + "x" * 1500, user=admin
            ).pk
            for w in range(max(args.writers, 3))
        ]
        seeded.append({"tenant": tenant.pk, "documents": documents})  # type: ignore[dict-item]
    return admin, seeded


def _write_once(document_id: int, user_id: int, text: str) -> None:
    from django.contrib.auth import get_user_model

    from agentdocs.models import Document
    from agentdocs.services import documents as document_service

    document = Document.objects.select_related("project__tenant").get(pk=document_id)
    document_service.document_write(
        document=document,
        body=text,
        base_version=document.version,
        user=get_user_model()(pk=user_id),
        reason="bench",
    )


def _writer(job: tuple[int, int, int, str]) -> list[float]:
    """One writer process: its document written ``count`` times; seconds per write."""
    from django.db import connections

    document_id, user_id, count, name = job
    connections.close_all()  # the parent's connection is not this process's to use
    times = []
    for i in range(count):
        started = time.perf_counter()
        _write_once(document_id, user_id, f"{name} {i}\n" + "y" * 1500)
        times.append(time.perf_counter() - started)
    connections.close_all()
    return times


def _concurrent(jobs: list[tuple[int, int, int, str]]) -> tuple[float, list[float]]:
    from django.db import connections

    connections.close_all()
    context = multiprocessing.get_context("fork")
    started = time.perf_counter()
    with context.Pool(len(jobs)) as pool:
        results = pool.map(_writer, jobs)
    wall = time.perf_counter() - started
    return wall, sorted(t for times in results for t in times)


def _percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def _measure(args: argparse.Namespace) -> bool:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from agentdocs.core.bindings import sha256_hex
    from agentdocs.models import Document, Tenant
    from agentdocs.services import audit_chain

    admin, seeded = _seed(args)
    sides_tenant = seeded.pop()
    chained, unchained, plain = sides_tenant["documents"][:3]  # type: ignore[index]
    history = Document.history.model

    def write(document_id: int) -> Callable[[int], None]:
        return lambda i: _write_once(document_id, admin.pk, f"side {i}\n" + "z" * 1500)  # type: ignore[attr-defined]

    template = history.objects.filter(id=plain).latest("history_id")
    row_fields = [f.attname for f in history._meta.concrete_fields if f.attname != "history_id"]

    def plain_write(i: int) -> None:
        # The rows a write leaves, written directly: the document moved on (its version,
        # body, digest and size), and a copy of its history row with the same values.
        body = f"side {i}\n" + "z" * 1500
        digest, size = sha256_hex(body.encode()), len(body.encode())
        with transaction.atomic():
            version = Document.objects.values_list("version", flat=True).get(pk=plain) + 1
            Document.objects.filter(pk=plain).update(
                body=body, version=version, sha256=digest, size=size, updated_at=timezone.now()
            )
            values = {name: getattr(template, name) for name in row_fields}
            values.update(body=body, version=version, sha256=digest, size=size)
            # Unchained, so the head's trigger (migration 0026) passes it by.
            values.update(chain_tenant=None, chain_seq=None, chain_sha256=None)
            values.update(history_date=timezone.now(), updated_at=timezone.now())
            history.objects.create(**values)

    sides = {"chained": write(chained), "unchained": write(unchained), "plain": plain_write}
    results: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        # The sides take turns in batches of BATCH writes, so a change of the shared
        # machine's load within a round falls on all of them alike.
        spent = dict.fromkeys(sides, 0.0)
        for start in range(0, args.writes, BATCH):
            count = min(BATCH, args.writes - start)
            for side, run in sides.items():
                _chain(side == "chained")
                turn = functools.partial(lambda i, run, start: run(start + i), run=run, start=start)
                spent[side] += _per_op(turn, count) * count
        for side in sides:
            results[side].append(spent[side] / args.writes)
    _chain(True)
    print(f"database: {connection.vendor}; {args.rounds} rounds of {args.writes} writes per side")
    print(f"{'one write':<14}{'median ms':>11}{'best ms':>9}{'queries':>9}")
    for side, run in sides.items():
        _chain(side == "chained")
        with CaptureQueriesContext(connection) as queries:
            run(10**6)
        values = results[side]
        print(
            f"{side:<14}{statistics.median(values) * 1000:>11.3f}{min(values) * 1000:>9.3f}"
            f"{len(queries):>9}"
        )
    _chain(True)
    for slow, fast in (("chained", "unchained"), ("chained", "plain"), ("unchained", "plain")):
        ratios = [a / b for a, b in zip(results[slow], results[fast], strict=True)]
        print(f"{slow} / {fast}: {statistics.median(ratios):.3f} (median of rounds)")

    writers = args.writers
    one_tenant = seeded[0]["documents"][:writers]  # type: ignore[index]
    groups = {
        "one tenant": [
            (d, admin.pk, args.concurrent_writes, f"w{n}") for n, d in enumerate(one_tenant)
        ],  # type: ignore[attr-defined]
        f"{min(writers, args.tenants)} tenants": [
            (
                seeded[n % len(seeded)]["documents"][n // len(seeded)],
                admin.pk,
                args.concurrent_writes,
                f"t{n}",
            )  # type: ignore[index, attr-defined]
            for n in range(writers)
        ],
    }
    print()
    print(
        f"{writers} concurrent writers{'':<6}{'writes':>8}{'writes/s':>10}"
        f"{'p50 ms':>8}{'p99 ms':>8}"
    )
    for name, jobs in groups.items():
        wall, times = _concurrent(jobs)
        print(
            f"{name:<26}{len(times):>8}{len(times) / wall:>10.1f}"
            f"{_percentile(times, 0.5) * 1000:>8.2f}{_percentile(times, 0.99) * 1000:>8.2f}"
        )
    ok = True
    for tenant in Tenant.objects.exclude(pk=sides_tenant["tenant"]).order_by("pk"):
        report = audit_chain.audit_chain_verify(tenant=tenant)
        ok = ok and bool(report["ok"])
    print(f"every tenant's chain verified after the run: ok={ok}")
    return ok


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What evidence costs (issue 30): a document write with and without the history
chain, and a Memory Block render with and without its signature, measured in one run.

    .venv/bin/python bench/evidence.py [--writes 200] [--renders 300] [--rounds 5]
                                       [--postgres URL | --sqlite]

Each round runs both sides of each pair one after the other, so the ratio of one run
is what counts (the machine's load moves both). "Without" is today's code with the
one hook taken out for that side only: the chain's receivers disconnected, the
render's signature replaced by a constant. Writes go through `document_write`; renders
through the whole Django stack (`POST .../memory-block/`, a reader's API token, text).

PostgreSQL by default (the database `agentdocs_bench_evidence` is created and dropped
on `--postgres`, default postgres://postgres@127.0.0.1:5432/postgres), where the
chain's row lock is real; `--sqlite` uses a throwaway file. It asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
DATABASE = "agentdocs_bench_evidence"


def _per_op(run: Callable[[int], None], count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        run(i)
    return (time.perf_counter() - started) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=200, help="document writes per side")
    parser.add_argument("--renders", type=int, default=300, help="renders per side")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--sqlite", action="store_true", help="a throwaway SQLite file instead")
    args = parser.parse_args()

    from bench.common import in_process_database

    with in_process_database(name=DATABASE, admin_url=args.postgres, sqlite=args.sqlite):
        _measure(args)


def _measure(args: argparse.Namespace) -> None:
    from django.db import connection
    from django.test import Client
    from simple_history.signals import post_create_historical_record, pre_create_historical_record

    from agentdocs.api import memory_block as memory_block_api
    from agentdocs.models import Document
    from agentdocs.services import audit_chain
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service
    from agentdocs.services import tokens as token_service
    from bench.common import in_process_cast

    admin, reader, tenant = in_process_cast()
    project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
    for i in range(7):
        document_service.document_create(
            project=project, path=f".AGENTS/notes-{i}.md", body="x" * 2000, user=admin
        )
    documents = {
        side: document_service.document_create(
            project=project, path=f"{side}.md", body="v1\n", user=admin, reason="bench"
        )
        for side in ("chained", "unchained")
    }
    document_service.document_create(
        project=project, path="agent.md", body="# Rules\n" + "be kind\n" * 200, user=admin
    )
    key = token_service.token_create(user=reader, name="r", scopes=["read", "render"]).key
    client = Client(HTTP_AUTHORIZATION=f"Token {key}", HTTP_ACCEPT="text/plain")
    url = "/api/v1/tenants/acme/projects/web/memory-block/"
    sign = memory_block_api.memory_block_sign

    def write(side: str) -> Callable[[int], None]:
        def run(i: int) -> None:
            document = documents[side]
            documents[side] = document_service.document_write(
                document=document,
                body=f"{side} {i}\n",
                base_version=document.version,
                user=admin,
                reason="bench",
            ).document

        return run

    def render(i: int) -> None:
        response = client.post(url, {"process": f"p-{i % 8}"}, content_type="application/json")
        assert response.status_code == 200, response.content

    def chain(on: bool) -> None:
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

    render(0)  # the signing key is made and loaded, as on a server after its first render
    results: dict[str, list[float]] = {
        "write chained": [],
        "write unchained": [],
        "render signed": [],
        "render unsigned": [],
    }
    for _ in range(args.rounds):
        chain(True)
        results["write chained"].append(_per_op(write("chained"), args.writes))
        chain(False)
        results["write unchained"].append(_per_op(write("unchained"), args.writes))
        chain(True)
        memory_block_api.memory_block_sign = sign  # type: ignore[attr-defined]
        results["render signed"].append(_per_op(render, args.renders))
        memory_block_api.memory_block_sign = lambda **_: "unsigned"  # type: ignore[attr-defined]
        results["render unsigned"].append(_per_op(render, args.renders))
        memory_block_api.memory_block_sign = sign  # type: ignore[attr-defined]

    print(f"database: {connection.vendor}; {args.rounds} rounds")
    print(f"{'':18}{'median ms/op':>14}{'min ms/op':>12}")
    for name, values in results.items():
        print(f"{name:18}{statistics.median(values) * 1000:>14.3f}{min(values) * 1000:>12.3f}")
    for slow, fast in (("write chained", "write unchained"), ("render signed", "render unsigned")):
        ratios = [a / b for a, b in zip(results[slow], results[fast], strict=True)]
        print(f"{slow} / {fast.split()[1]}: {statistics.median(ratios):.3f} (median of rounds)")
    # Deterministic beside the timings: the SQL each side sends per write and per render.
    from django.test.utils import CaptureQueriesContext

    for name, on, run in (
        ("write chained", True, write("chained")),
        ("write unchained", False, write("unchained")),
        ("render signed", True, render),
    ):
        chain(on)
        with CaptureQueriesContext(connection) as queries:
            run(0)
        print(f"{name}: {len(queries)} queries")
    chain(True)
    # And the chain's own work per history row, in Python: the row's canonical JSON
    # and its sha256 link (the rest is the head's lock and update, two queries).
    row = Document.history.model.objects.latest("history_id")
    started = time.perf_counter()
    for _ in range(2000):
        audit_chain.chain_link(
            "0" * 64, model="agentdocs.historicaldocument", row=audit_chain.row_values(row)
        )
    print(f"link one history row: {(time.perf_counter() - started) / 2000 * 1e6:.1f} µs")
    report = audit_chain.audit_chain_verify(tenant=tenant)
    # The unchained writes are history rows outside the chain (what the measurement
    # removed), so the verification reports the first of them: `unlinked`.
    broken = report["broken_at"]
    finding = f", first finding: {broken['reason']}" if broken else ""
    print(f"chain after the run: {report['checked']} rows walked, ok={report['ok']}{finding}")


if __name__ == "__main__":
    main()

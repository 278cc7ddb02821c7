#!/usr/bin/env python3
"""What comparing cohorts costs (issue 39): `GET .../outcomes/compare` over a project
with `--outcomes` runs, each with one `task_success` outcome and one `cost_usd`, by
label, by recipe and by the version of `agent.md`, through the whole Django stack.

    .venv/bin/python bench/outcomes.py [--outcomes 100000] [--requests 5]
                                       [--postgres URL | --sqlite]

The runs (binding records) and outcomes are written in bulk (`bulk_create`: the
seeding is not what is measured, and its outcomes' history rows are not written). Each
run reads `agent.md` at one of four versions, by one of two labels (`canary`: a tenth of
the runs, `production`) and one of three recipes. It prints the median and best
milliseconds per request and the queries each sends (the same whatever the runs), and
the outcomes' count; it asserts the cohorts add up to the runs. PostgreSQL by default
(the database `agentdocs_bench_outcomes` is created and dropped through `--postgres`);
`--sqlite` uses a throwaway file.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
DATABASE = "agentdocs_bench_outcomes"
BATCH = 5000
QUESTIONS = {
    "label": "metric=task_success&by=label",
    "recipe": "metric=cost_usd&by=recipe&lower_is_better=true",
    "version": "metric=task_success&by=version&document=agent.md",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outcomes", type=int, default=100_000, help="runs, one outcome each")
    parser.add_argument("--requests", type=int, default=5, help="requests per question")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--sqlite", action="store_true", help="a throwaway SQLite file instead")
    parser.add_argument("--explain", action="store_true", help="print the queries' plans")
    args = parser.parse_args()

    from bench.common import in_process_database, load_average

    print(f"load average at the start: {load_average()}")
    try:
        with in_process_database(name=DATABASE, admin_url=args.postgres, sqlite=args.sqlite):
            _measure(args)
    finally:
        print(f"load average at the end: {load_average()}")


def _seed(project, user, runs: int) -> None:
    from django.utils import timezone

    from agentdocs.core.cohorts import run_cohorts
    from agentdocs.models import BindingRecord, Outcome

    now = timezone.now()
    for start in range(0, runs, BATCH):
        records = []
        for index in range(start, min(start + BATCH, runs)):
            block = {
                "recipe": ("lean", "full", "coder")[index % 3],
                "label": "canary" if index % 10 == 0 else "production",
                "layers": [{"kind": "agent", "path": "agent.md", "version": 1 + index % 4}],
            }
            record = {"context": [], "memory_block": block}
            records.append(
                BindingRecord(
                    tenant=project.tenant,
                    project=project,
                    process=f"run-{index}",
                    created_by=user,
                    created_at=now,
                    schema="context-binding/v1",
                    record=record,
                    problem_count=0,
                    **run_cohorts(record),
                )
            )
        made = BindingRecord.objects.bulk_create(records)
        outcomes = []
        for offset, record in enumerate(made):
            index = start + offset
            success = (index * 7919) % 100 < (80 if index % 10 == 0 else 70)
            for name, value, is_bool in (
                ("task_success", 1.0 if success else 0.0, True),
                ("cost_usd", 0.2 + (index % 17) / 100, False),
            ):
                outcomes.append(
                    Outcome(
                        tenant=project.tenant,
                        project=project,
                        binding=record,
                        process=record.process,
                        name=name,
                        value=value,
                        is_bool=is_bool,
                        reported_by=user,
                        reported_at=now,
                    )
                )
        Outcome.objects.bulk_create(outcomes)


def _measure(args: argparse.Namespace) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from agentdocs.models import Outcome
    from agentdocs.services import tenancy as tenant_service
    from agentdocs.services import tokens as token_service

    admin = get_user_model().objects.create_user(username="bench-admin", password=None)
    tenant = tenant_service.tenant_create(slug="bench", name="Bench", user=admin)
    project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
    started = time.perf_counter()
    _seed(project, admin, args.outcomes)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # as autovacuum would after such a load
            cursor.execute("ANALYZE")
    print(
        f"seeded {args.outcomes:,} runs and {Outcome.objects.count():,} outcomes "
        f"in {time.perf_counter() - started:.1f} s ({connection.vendor})"
    )
    key = token_service.token_create(user=admin, name="bench", scopes=["read"]).key
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    url = "/api/v1/tenants/bench/projects/web/outcomes/compare?"
    for name, query in QUESTIONS.items():
        response = client.get(url + query)  # the first: statsmodels' import, warm caches
        assert response.status_code == 200, response.content[:500]
        answer = response.json()
        assert sum(cohort["runs"] for cohort in answer["cohorts"]) == args.outcomes, answer
        timings = []
        for _ in range(args.requests):
            with CaptureQueriesContext(connection) as queries:
                began = time.perf_counter()
                client.get(url + query)
                timings.append((time.perf_counter() - began) * 1000)
        verdicts = ", ".join(
            f"{cohort['cohort']}: {cohort['verdict']}" for cohort in answer["cohorts"]
        )
        if args.explain and connection.vendor == "postgresql":
            for query in queries.captured_queries[1:2]:
                with connection.cursor() as cursor:
                    cursor.execute("EXPLAIN ANALYZE " + query["sql"])
                    print("\n".join(row[0] for row in cursor.fetchall()))
        print(
            f"compare by {name}: median {statistics.median(timings):.0f} ms, best "
            f"{min(timings):.0f} ms, {len(queries)} queries; {verdicts}"
        )


if __name__ == "__main__":
    main()

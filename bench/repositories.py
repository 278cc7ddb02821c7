#!/usr/bin/env python3
"""What the repositories list costs (issue 28): `GET .../repositories/` with 1, 10 and
100 repositories, each one's state computed against the server's export now, as ratios
to the 1-repository list, with the render cache off and on, in one run.

    .venv/bin/python bench/repositories.py [--requests 50] [--rounds 5]
                                           [--postgres URL | --sqlite]

Three projects hold the same eight documents (an `agent.md` and seven `.AGENTS/`
documents of 2 KB) and 1, 10 and 100 repositories, each made by a report as
`agentdocs sync` makes it (`POST .../repositories/` with a reader's `render` token,
holding the server's export of the moment, so its baseline is kept); then `agent.md`
is written once in every project, so every repository is `behind` and its `behind_by`
is computed on each list. The list is read through the whole Django stack by a
reader's API token (`?page_size=100`, one page). The six sides (three sizes, cache off
and on) run one after the other in every round; it prints the median and best
milliseconds per list, the medians of the rounds' ratios to the 1-repository list, the
milliseconds each repository beyond the first adds, and the queries each side sends
(deterministic).

PostgreSQL by default (the database `agentdocs_bench_repositories` is created and
dropped on `--postgres`, default postgres://postgres@127.0.0.1:5432/postgres);
`--sqlite` uses a throwaway file. It asserts nothing about time.
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
DATABASE = "agentdocs_bench_repositories"
SIZES = (1, 10, 100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=50, help="lists per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--sqlite", action="store_true", help="a throwaway SQLite file instead")
    args = parser.parse_args()

    from bench.common import in_process_database, load_average

    print(f"load average at the start: {load_average()}")
    try:
        with in_process_database(name=DATABASE, admin_url=args.postgres, sqlite=args.sqlite):
            _measure(args)
    finally:
        print(f"load average at the end: {load_average()}")


def _per_op(run: Callable[[], None], count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        run()
    return (time.perf_counter() - started) / count


def _measure(args: argparse.Namespace) -> None:
    from django.db import connection
    from django.test import Client, override_settings
    from django.test.utils import CaptureQueriesContext

    from agentdocs.services import documents as document_service
    from agentdocs.services import tenants as tenant_service
    from agentdocs.services import tokens as token_service
    from agentdocs.services.export import export_build
    from bench.common import in_process_cast

    admin, reader, tenant = in_process_cast()
    render_key = token_service.token_create(user=reader, name="ci", scopes=["render"]).key
    read_key = token_service.token_create(user=reader, name="r", scopes=["read"]).key
    reporter = Client(HTTP_AUTHORIZATION=f"Token {render_key}")
    lister = Client(HTTP_AUTHORIZATION=f"Token {read_key}")

    urls: dict[int, str] = {}
    for size in SIZES:
        project = tenant_service.project_create(
            tenant=tenant, slug=f"p{size}", name=f"{size} repositories", user=admin
        )
        for i in range(7):
            document_service.document_create(
                project=project, path=f".AGENTS/notes-{i}.md", body="x" * 2000, user=admin
            )
        agent = document_service.document_create(
            project=project, path="agent.md", body="# Rules\n" + "be kind\n" * 200, user=admin
        )
        url = f"/api/v1/tenants/{tenant.slug}/projects/{project.slug}/repositories/"
        sha = export_build(project=project, format="agents-md").export_sha256
        for i in range(size):
            response = reporter.post(
                url,
                {
                    "kind": "sync",
                    "remote": f"https://example.com/acme/repo-{i}.git",
                    "branch": "main",
                    "commit": f"{i:040x}",
                    "formats": "agents-md",
                    "export_sha256": sha,
                    "files": {"AGENTS.md": "in-sync"},
                },
                content_type="application/json",
            )
            assert response.status_code == 201, response.content
            assert response.json()["state"] == "in-sync", response.content
        document_service.document_write(
            document=agent,
            body="# Rules\n" + "be kinder\n" * 200,
            base_version=agent.version,
            user=admin,
            reason="bench",
        )
        urls[size] = f"{url}?page_size=100"

    def listing(size: int) -> Callable[[], None]:
        def run() -> None:
            response = lister.get(urls[size])
            assert response.status_code == 200, response.content
            body = response.json()
            assert body["count"] == size and len(body["results"]) == size, body
            assert all(row["state"] == "behind" for row in body["results"]), body

        return run

    sides = [(size, cache) for cache in (False, True) for size in SIZES]
    for size, cache in sides:  # every side answers as it should before anything is timed
        with override_settings(AGENTDOCS_RENDER_CACHE=cache):
            listing(size)()
    behind = lister.get(urls[1]).json()["results"][0]["behind_by"]
    print(f"every repository behind, e.g. behind_by {behind}")

    results: dict[tuple[int, bool], list[float]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for size, cache in sides:
            with override_settings(AGENTDOCS_RENDER_CACHE=cache):
                results[(size, cache)].append(_per_op(listing(size), args.requests))

    queries: dict[tuple[int, bool], int] = {}
    for size, cache in sides:
        with override_settings(AGENTDOCS_RENDER_CACHE=cache):
            run = listing(size)
            run()  # the cache holds the render's rows, as it would between lists
            with CaptureQueriesContext(connection) as captured:
                run()
        queries[(size, cache)] = len(captured)

    print(f"database: {connection.vendor}; {args.rounds} rounds of {args.requests} lists per side")
    print(f"{'':36}{'median ms':>10}{'best ms':>9}{'× 1 repo':>10}{'queries':>9}")
    for size, cache in sides:
        values = results[(size, cache)]
        ratios = [a / b for a, b in zip(values, results[(1, cache)], strict=True)]
        title = f"{size} repositories (render cache {'on' if cache else 'off'})"
        print(
            f"{title:36}{statistics.median(values) * 1000:>10.3f}{min(values) * 1000:>9.3f}"
            f"{statistics.median(ratios):>10.3f}{queries[(size, cache)]:>9}"
        )
    for cache in (False, True):
        extra = [
            (big - one) / (SIZES[-1] - 1)
            for big, one in zip(results[(SIZES[-1], cache)], results[(1, cache)], strict=True)
        ]
        print(
            f"each repository beyond the first, render cache {'on' if cache else 'off'}: "
            f"{statistics.median(extra) * 1000:.3f} ms (median of rounds)"
        )


if __name__ == "__main__":
    main()

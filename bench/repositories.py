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

With `--bounds`, the bounds of issue 34 instead: one page of 200 repositories (a
reader's `render` token reported each) whose reports name the same six formats in the
same order (the control), each in a new order, and each a different set of three
formats, with the cap of exports per request (`AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST`)
and without it (as before the cap); the milliseconds per list, the exports it built and
the repositories it listed `not-computed`. Then a repository with 30 checks, each of
the most files of the longest paths (`AGENTDOCS_REPOSITORY_MAX_FILES` of
`AGENTDOCS_REPOSITORY_MAX_PATH` bytes): the bytes and milliseconds of its detail and of
each page of its checks; and what a report of 500 paths of 1 KiB is answered.

    .venv/bin/python bench/repositories.py --bounds [--requests 5] [--rounds 3]

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
from typing import Any

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
    parser.add_argument(
        "--bounds", action="store_true", help="the bounds of issue 34 (a page of 200, a detail)"
    )
    args = parser.parse_args()

    from bench.common import in_process_database, load_average

    print(f"load average at the start: {load_average()}")
    try:
        with in_process_database(name=DATABASE, admin_url=args.postgres, sqlite=args.sqlite):
            _bounds(args) if args.bounds else _measure(args)
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

    from agentdocs.selectors.export import export_build
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service
    from agentdocs.services import tokens as token_service
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


def _project_with_documents(tenant: Any, admin: Any, slug: str, name: str) -> Any:
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service

    project = tenant_service.project_create(tenant=tenant, slug=slug, name=name, user=admin)
    for i in range(7):
        document_service.document_create(
            project=project, path=f".AGENTS/notes-{i}.md", body="x" * 2000, user=admin
        )
    document_service.document_create(
        project=project, path="agent.md", body="# Rules\n" + "be kind\n" * 200, user=admin
    )
    return project


def _bounds(args: argparse.Namespace) -> None:
    import itertools
    import json
    import random

    from django.conf import settings
    from django.test import Client, override_settings

    from agentdocs.core.targets import EXPORT_FORMATS
    from agentdocs.services import tokens as token_service
    from bench.common import in_process_cast

    admin, reader, tenant = in_process_cast()
    render_key = token_service.token_create(user=reader, name="ci", scopes=["render"]).key
    read_key = token_service.token_create(user=reader, name="r", scopes=["read"]).key
    reporter = Client(HTTP_AUTHORIZATION=f"Token {render_key}")
    lister = Client(HTTP_AUTHORIZATION=f"Token {read_key}")
    size = 200
    six = list(EXPORT_FORMATS[:6])
    orders = list(itertools.permutations(six))
    random.Random(34).shuffle(orders)
    sets = list(itertools.combinations([f for f in EXPORT_FORMATS if f != "all"], 3))
    random.Random(34).shuffle(sets)
    kinds = {
        "the same formats (control)": [list(six)] * size,
        "each a new order": [list(order) for order in orders[:size]],
        "each a new set": [list(formats) for formats in sets[:size]],
    }

    def report(url: str, index: int, formats: list[str], files: dict[str, str]) -> dict:
        response = reporter.post(
            url,
            {
                "kind": "sync",
                "remote": f"https://example.com/acme/repo-{index}.git",
                "branch": "main",
                "commit": f"{index:040x}",
                "formats": formats,
                "export_sha256": "0" * 64,
                "files": files,
            },
            content_type="application/json",
        )
        assert response.status_code in (200, 201), response.content
        return response.json()

    urls: dict[str, str] = {}
    for number, (kind, formats_of) in enumerate(kinds.items()):
        project = _project_with_documents(tenant, admin, f"p{number}", kind)
        url = f"/api/v1/tenants/{tenant.slug}/projects/{project.slug}/repositories/"
        for index, formats in enumerate(formats_of):
            report(url, index, formats, {"AGENTS.md": "in-sync"})
        urls[kind] = f"{url}?page_size={size}"

    cap = settings.AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST
    sides = [(kind, capped) for kind in kinds for capped in (True, False)]

    def listing(kind: str) -> Callable[[], dict]:
        def run() -> dict:
            response = lister.get(urls[kind])
            assert response.status_code == 200, response.content
            body = response.json()
            assert len(body["results"]) == size, body["count"]
            return body

        return run

    def limits(capped: bool) -> override_settings:
        return override_settings(AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST=cap if capped else 10**6)

    shapes: dict[tuple[str, bool], tuple[int, int]] = {}
    for kind, capped in sides:
        with limits(capped):
            rows = listing(kind)()["results"]
        skipped = sum(row["state"] == "not-computed" for row in rows)
        built = len({tuple(row["formats"]) for row in rows if row["state"] != "not-computed"})
        shapes[(kind, capped)] = (built, skipped)
    times: dict[tuple[str, bool], list[float]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for kind, capped in sides:
            with limits(capped):
                times[(kind, capped)].append(_per_op(listing(kind), args.requests))
    print(
        f"a page of {size} repositories; {args.rounds} rounds of {args.requests} lists per "
        f"side; cap AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST={cap}"
    )
    print(f"{'':44}{'median ms':>10}{'best ms':>9}{'exports':>9}{'not-computed':>14}")
    for kind, capped in sides:
        values = times[(kind, capped)]
        built, skipped = shapes[(kind, capped)]
        title = f"{kind}, {'capped' if capped else 'no cap'}"
        print(
            f"{title:44}{statistics.median(values) * 1000:>10.1f}{min(values) * 1000:>9.1f}"
            f"{built:>9}{skipped:>14}"
        )

    # A repository with 30 checks of the most files of the longest paths.
    max_files = settings.AGENTDOCS_REPOSITORY_MAX_FILES
    max_path = settings.AGENTDOCS_REPOSITORY_MAX_PATH
    project = _project_with_documents(tenant, admin, "detail", "30 checks")
    url = f"/api/v1/tenants/{tenant.slug}/projects/{project.slug}/repositories/"
    biggest = {
        f"{index:04d}/" + "p" * (max_path - 5): "edited-locally" for index in range(max_files)
    }
    for _ in range(30):
        created = report(url, 0, ["agents-md"], biggest)
    detail_url = created["url"]
    detail_bytes = len(lister.get(detail_url).content)
    detail_ms = statistics.median(
        _per_op(lambda: lister.get(detail_url), args.requests) for _ in range(args.rounds)
    )
    pages, page_url = [], f"{detail_url}/checks/"
    while page_url:
        response = lister.get(page_url)
        assert response.status_code == 200, response.content
        pages.append(len(response.content))
        page_url = response.json()["next"]
    print(
        f"a repository with 30 checks of {max_files} paths of {max_path} bytes: detail "
        f"{detail_bytes:,} bytes, {detail_ms * 1000:.1f} ms (median); its checks in "
        f"{len(pages)} pages of at most {max(pages):,} bytes"
    )
    big = {f"{index:03d}/" + "q" * 1020: "extra" for index in range(500)}
    refused = reporter.post(
        url,
        json.dumps(
            {
                "kind": "sync",
                "remote": "https://example.com/acme/big.git",
                "formats": "agents-md",
                "export_sha256": "0" * 64,
                "files": big,
            }
        ),
        content_type="application/json",
    )
    body = refused.json()
    print(
        f"a report of 500 paths of 1 KiB: {refused.status_code} {body.get('error')} naming "
        f"{body.get('field')!r}, limit {body.get('limit')}"
    )


if __name__ == "__main__":
    main()

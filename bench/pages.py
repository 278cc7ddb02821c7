"""Measure how long the browser pages take to render, with Django's test client.

Loads the demo data (`manage.py seed_demo`) into a fresh database, signs in as
the demo admin and requests every main page many times, printing the median,
p95 and worst time per page and its SQL query count. Then it writes many more
versions of `agent.md` and measures again, to show the pages do not slow down
as history grows.

    .venv/bin/python bench/pages.py [--requests 200] [--extra-versions 200]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentdocs_bench_pages \\
        .venv/bin/python bench/pages.py

Without DATABASE_URL a throwaway SQLite file under the system's temp folder is
used; the demo database is never touched. The test client runs the whole
Django stack (middleware, sessions, permissions, queries, templates) without a
network socket: these are server-side render times, not page-load times.
It is a measurement, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PAGES = [
    ("home", "/"),
    ("tenant", "/t/demo/"),
    ("project", "/t/demo/website/"),
    ("document", "/t/demo/website/doc/agent.md"),
    ("old version", "/t/demo/website/doc/agent.md?version=1"),
    ("edit", "/t/demo/website/edit/agent.md"),
    ("history", "/t/demo/website/history/agent.md"),
    ("diff (last two)", "/t/demo/website/diff/agent.md"),
    ("diff (first→last)", "/t/demo/website/diff/agent.md?from=1"),
    ("revert confirm", "/t/demo/website/revert/agent.md?version=1"),
    ("_vance edit + reach", "/t/demo/_vance/edit/agent.md"),
    ("memory block", "/t/demo/website/memory-block/"),
    ("settings", "/t/demo/website/settings/"),
    ("recipes", "/t/demo/-/recipes/"),
    ("bindings", "/t/demo/website/bindings/"),
]


def prepare_environment(name: str = "pages") -> str:
    """Point Django at DATABASE_URL, or else at a fresh throwaway SQLite file named for
    the benchmark; the demo database is never touched."""
    if not os.environ.get("DATABASE_URL"):
        path = Path(tempfile.gettempdir()) / f"agentdocs-bench-{name}.sqlite3"
        path.unlink(missing_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
    return os.environ["DATABASE_URL"]


def _measure(client, url: str, requests: int) -> tuple[list[float], int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(5):  # warm caches, template loaders, connection
        client.get(url)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    query_count = len(queries)
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}")
    timings = []
    for _ in range(requests):
        start = time.perf_counter()
        client.get(url)
        timings.append((time.perf_counter() - start) * 1000)
    return timings, query_count


def _report(title: str, client, requests: int) -> None:
    print(f"\n{title}")
    print(f"{'page':<22}{'median ms':>10}{'p95 ms':>9}{'max ms':>9}{'queries':>9}")
    for name, url in PAGES:
        timings, queries = _measure(client, url, requests)
        timings.sort()
        p95 = timings[min(len(timings) - 1, int(len(timings) * 0.95))]
        print(
            f"{name:<22}{statistics.median(timings):>10.2f}{p95:>9.2f}"
            f"{timings[-1]:>9.2f}{queries:>9}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="timed requests per page")
    parser.add_argument(
        "--extra-versions", type=int, default=200, help="versions of agent.md to add, then re-run"
    )
    args = parser.parse_args()
    database = prepare_environment()
    # WhiteNoise warns that collectstatic has not run; static files are not measured here.
    warnings.filterwarnings("ignore", message="No directory at", module="django.core.handlers")

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment

    from agentdocs.models import Document
    from agentdocs.services import documents as document_service

    setup_test_environment()  # the test client's hooks; DEBUG stays off
    call_command("migrate", verbosity=0)
    call_command("seed_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    admin = get_user_model().objects.get(username="admin")
    client = Client()
    client.force_login(admin)

    document = Document.objects.get(
        project__tenant__slug="demo", project__slug="website", path="agent.md"
    )
    print(f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]} ({database})")
    print(f"DEBUG={settings.DEBUG}; {args.requests} timed requests per page after 5 warm-up ones")
    _report(f"Demo data (agent.md at version {document.version})", client, args.requests)

    # Each version changes one line and keeps the size: only the length of history grows.
    base = document.body
    for n in range(args.extra_versions):
        document = document_service.document_write(
            document=document,
            body=f"{base}\n- Benchmark revision {n:06d}.\n",
            base_version=document.version,
            user=admin,
            reason=f"benchmark version {n}",
        ).document
    _report(
        f"After {args.extra_versions} more versions (agent.md at version {document.version})",
        client,
        args.requests,
    )


if __name__ == "__main__":
    main()

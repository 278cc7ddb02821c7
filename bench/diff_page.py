"""Measure what one view of a diff costs when two versions differ everywhere.

Two 256 KiB versions (``"a\\nb\\n" * 65000``, then ``"b\\na\\n" * 65000``) differ on
every line. This prints the time and the size of the response for the diff page,
the revert page, the API diff and the unified-diff download, first with a cold
cache and then warm, each beside the same request on a small document (a
three-line edit) and their ratio.

    .venv/bin/python bench/diff_page.py [--repeat 5]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentdocs_bench_diff \\
        .venv/bin/python bench/diff_page.py

Without DATABASE_URL a throwaway SQLite file under the system's temp folder is
used. The test client runs the whole Django stack (middleware, sessions,
permissions, queries, templates) without a network socket: these are server-side
times. It is a measurement, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.pages import prepare_environment  # noqa: E402

BIG_OLD = "a\nb\n" * 65000
BIG_NEW = "b\na\n" * 65000
SMALL_OLD = "# Rules\n\n- Use tabs.\n- Run the tests.\n"
SMALL_NEW = "# Rules\n\n- Use spaces.\n- Run the tests.\n- Ask first.\n"


def _timed(client, url: str) -> tuple[float, int]:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}")
    return elapsed, len(response.content)


def _measure(client, url: str, repeat: int) -> tuple[float, float, int]:
    """Cold time (empty cache), warm median time, response size."""
    from django.core.cache import cache

    cache.clear()
    cold, size = _timed(client, url)
    warm = [_timed(client, url)[0] for _ in range(repeat)]
    return cold, statistics.median(warm), size


def _size(size: int) -> str:
    return f"{size / 1024:.1f} KiB" if size < 1024 * 1024 else f"{size / 1024 / 1024:.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="warm requests per URL")
    args = parser.parse_args()
    database = prepare_environment("diff-page")
    warnings.filterwarnings("ignore", message="No directory at", module="django.core.handlers")

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import NoReverseMatch, reverse
    from rest_framework.test import APIClient

    from agentdocs.models import Role
    from agentdocs.services import documents as document_service
    from agentdocs.services import tenancy as tenant_service
    from agentdocs.services import tokens as token_service

    setup_test_environment()
    call_command("migrate", verbosity=0)
    users = get_user_model().objects
    admin = users.create_user(username="bench-admin", password="x")
    users.create_user(username="bench-reader", password="x")
    reader = users.get(username="bench-reader")
    tenant = tenant_service.tenant_create(slug="bench", name="Bench", user=admin)
    tenant_service.membership_set(
        tenant=tenant, username="bench-reader", role=Role.READER, actor=admin
    )
    project = tenant_service.project_create(tenant=tenant, slug="web", name="Web", user=admin)
    for path, old, new in (("big.md", BIG_OLD, BIG_NEW), ("small.md", SMALL_OLD, SMALL_NEW)):
        document = document_service.document_create(
            project=project, path=path, body=old, user=admin, reason="v1"
        )
        document_service.document_write(
            document=document, body=new, base_version=1, user=admin, reason="v2"
        )

    page_reader = Client()
    page_reader.force_login(reader)
    page_admin = Client()
    page_admin.force_login(admin)
    api_reader = APIClient()
    key = token_service.token_create(user=reader, name="bench", scopes=["read"]).key
    api_reader.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    base = "/t/bench/web"
    api_base = "/api/v1/tenants/bench/projects/web"
    rows = [
        ("diff page (reader)", page_reader, f"{base}/diff/{{path}}?from=1&to=2"),
        ("revert page (admin)", page_admin, f"{base}/revert/{{path}}?version=1"),
        ("API diff (reader)", api_reader, f"{api_base}/diff/{{path}}?from=1&to=2"),
    ]
    try:  # the download is new: a tree from before it has none
        reverse("document-diff-download", kwargs={"tenant": "t", "project": "p", "path": "x"})
        rows.append(
            ("diff download (reader)", page_reader, f"{base}/diff-download/{{path}}?from=1&to=2")
        )
    except NoReverseMatch:
        pass

    print(f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]} ({database})")
    print(f"big: 2 x {len(BIG_OLD.encode()) / 1024:.0f} KiB, every line changed")
    print(f"cold = first request, empty cache; warm = median of {args.repeat} more")
    print(
        f"{'request':<24}{'big cold':>10}{'big warm':>10}{'big size':>11}"
        f"{'small warm':>12}{'small size':>12}{'time ×':>9}{'size ×':>9}"
    )
    for name, client, url in rows:
        cold, warm, size = _measure(client, url.format(path="big.md"), args.repeat)
        _, small_warm, small_size = _measure(client, url.format(path="small.md"), args.repeat)
        print(
            f"{name:<24}{cold * 1000:>8.0f}ms{warm * 1000:>8.0f}ms{_size(size):>11}"
            f"{small_warm * 1000:>10.1f}ms{_size(small_size):>12}"
            f"{cold / small_warm:>9.0f}{size / small_size:>9.1f}"
        )


if __name__ == "__main__":
    main()

"""The embedded default's render: the disk cache every process shares vs the old
per-process local-memory cache, in one run.

    .venv/bin/python bench/shared_cache.py [--requests 400] [--rounds 5]

A fresh SQLite database in a temporary folder, migrated and seeded as the HTTP
benchmarks seed theirs (`memory_block_seed.py`); then, in this one process and with
the rounds interleaved, the Memory Block render through Django's whole request stack
(test client, token authentication, middleware) under each cache:

- `locmem`: `LocMemCache` with the render cache off, the embedded default before
  issue 25 (each worker process kept its own read state and counts);
- `disk`: `agentdocs.cache.DiskCache` with the render cache on, the default now;
- `disk-nocache`: the disk cache with the render cache off, to show what the render
  cache itself saves or costs on SQLite.

Each is measured as one agent process's later turns (`stubs`, the read state read
and left as it is) and as a new process on every request (`full`, a new read state
written). The rate limits count every render (two counters), as in production. It
prints the median time per request of each, and each cache's ratio to `locmem`'s
(the figure to read: both were measured in the same run, on the same machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import app_environment, migrate_and_seed

# As bench/memory_block.py sends: a 1 KB CLAUDE.md.
CLIENT_DOCUMENT = (
    "# This machine\n\n" + "- The staging box is staging-3; never deploy from here.\n" * 16
)
CACHES = ("locmem", "disk", "disk-nocache")
SCENARIOS = ("stubs", "full")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400, help="per cache, scenario, round")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="agentdocs-bench-shared-cache-"))
    env = app_environment(f"sqlite:///{folder / 'agentdocs.sqlite3'}", None)
    env.update(CACHE_DIR=str(folder / "cache"), ALLOWED_HOSTS="testserver")
    env.update(STATIC_ROOT=str(folder / "static"), MEDIA_ROOT=str(folder / "media"))
    (folder / "static").mkdir()
    seeded = migrate_and_seed(env)
    os.environ.update(env)

    import django

    django.setup()
    from django.test import Client
    from django.test.utils import override_settings

    from agentdocs.selectors import render_cache as render_cache_reads

    caches = {
        "locmem": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "disk": {"BACKEND": "agentdocs.cache.DiskCache", "LOCATION": str(folder / "cache")},
    }
    configurations = {
        "locmem": {"CACHES": {"default": caches["locmem"]}, "AGENTDOCS_RENDER_CACHE": False},
        "disk": {"CACHES": {"default": caches["disk"]}, "AGENTDOCS_RENDER_CACHE": True},
        "disk-nocache": {"CACHES": {"default": caches["disk"]}, "AGENTDOCS_RENDER_CACHE": False},
    }
    url = f"/api/v1/tenants/{seeded['tenant']}/projects/{seeded['project']}/memory-block/"
    client = Client(HTTP_AUTHORIZATION=f"Token {seeded['token']}")
    document = {"name": "CLAUDE.md", "body": CLIENT_DOCUMENT}

    def render(process: str) -> None:
        body = {"process": process, "recipe": "coder", "profile": "cli"}
        response = client.post(
            url, json.dumps({**body, "client_document": document}), "application/json"
        )
        if response.status_code != 200:
            raise SystemExit(f"render answered {response.status_code}: {response.content!r}")

    timings: dict[tuple[str, str], list[float]] = {}
    for number in range(options.rounds):
        for name in CACHES:
            with override_settings(**configurations[name]):
                render_cache_reads.local_clear()
                for scenario in SCENARIOS:
                    turns = f"turns-{name}-{number}"
                    render(turns)  # the first turn, full, and the render cache filled
                    started = time.perf_counter()
                    for n in range(options.requests):
                        render(turns if scenario == "stubs" else f"new-{name}-{number}-{n}")
                    elapsed = time.perf_counter() - started
                    timings.setdefault((name, scenario), []).append(elapsed / options.requests)

    print(f"{options.rounds} rounds x {options.requests} renders, SQLite, in-process")
    print(f"{'cache':14} {'scenario':8} {'median ms':>10} {'ratio to locmem':>16}")
    for scenario in SCENARIOS:
        base = statistics.median(timings[("locmem", scenario)])
        for name in CACHES:
            median = statistics.median(timings[(name, scenario)])
            print(f"{name:14} {scenario:8} {median * 1000:10.3f} {median / base:16.2f}")


if __name__ == "__main__":
    main()

"""A large tenant against a small one: the same requests, timed side by side.

Seeds one PostgreSQL database with two tenants made the same way by
`memory_block_seed.py` (`bench`, the small one, and `large`), then makes `large`
large with `manage.py seed_large_tenant` (bulk inserts: 1,000 projects, 10,000
`.AGENTS/` documents in the project `big`, 10,000 versions of `web/agent.md`, 100,000
binding records in `web`), serves the app with gunicorn and Redis, and sends each
request to the small and the large tenant alternately, one at a time, `--repeat`
times each. Prints the median and p90 of both and their ratio (target: at most 1.5).

    .venv/bin/python bench/large_tenant.py [--repeat 100] [--projects 1000] ...

Traffic goes to 127.0.0.1 only. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    PYTHON,
    REPO,
    app_environment,
    database_url,
    drop_database,
    load_average,
    local_only,
    migrate_and_seed,
    recreate_database,
    request_once,
    run_script,
    serve,
    stop,
)

TARGET = 1.5


def _endpoints(record: dict[str, int]) -> dict[str, tuple[str, str, object, str]]:
    """name -> (method, path with {t}, JSON body or None, "api" or "page")."""
    api = "/api/v1/tenants/{t}/projects/web"
    return {
        "render (turns)": ("POST", f"{api}/memory-block/", {"process": "bench-turns"}, "api"),
        "document GET": ("GET", f"{api}/documents/agent.md", None, "api"),
        "document 304": ("GET304", f"{api}/documents/agent.md", None, "api"),
        "history API": ("GET", f"{api}/history/agent.md", None, "api"),
        "history API, page 2": ("GET", f"{api}/history/agent.md?page=2", None, "api"),
        "history page": ("GET", "/t/{t}/web/history/agent.md", None, "page"),
        "history page 2": ("GET", "/t/{t}/web/history/agent.md?page=2", None, "page"),
        "project page": ("GET", "/t/{t}/big/", None, "page"),
        "tenant page": ("GET", "/t/{t}/", None, "page"),
        "bind": ("POST", f"{api}/bindings/", {"process": "b", "manifest": {"local": []}}, "api"),
        "outdated": ("GET", f"{api}/bindings/{{r}}/outdated", None, "api"),
        "bindings list": ("GET", f"{api}/bindings/", None, "api"),
        "activity": ("GET", "/api/v1/tenants/{t}/activity/", None, "api"),
        "activity, project web": ("GET", "/api/v1/tenants/{t}/activity/?project=web", None, "api"),
        "activity, documents": ("GET", "/api/v1/tenants/{t}/activity/?kind=document", None, "api"),
        "activity page": ("GET", "/t/{t}/-/activity/", None, "page"),
        # Every one of `big`'s documents matches "many"; one document matches "overview".
        "search, every document": ("GET", "/api/v1/tenants/{t}/search/?q=many", None, "api"),
        "search, one document": ("GET", "/api/v1/tenants/{t}/search/?q=overview", None, "api"),
        # Beyond the target, for the record: the last page costs its offset, and a render
        # of the project holding 10,000 context documents lists every one it drops.
        "history API, last page": ("GET", f"{api}/history/agent.md?page={{last}}", None, "api"),
        "render of big": (
            "POST",
            "/api/v1/tenants/{t}/projects/big/memory-block/",
            {"process": "bench-big"},
            "api",
        ),
    }


def _seed(args: argparse.Namespace, env: dict[str, str]) -> dict[str, dict[str, str]]:
    print(f"database {args.database}: creating, migrating, seeding")
    recreate_database(args.postgres, args.database)
    tenants = {
        "small": migrate_and_seed(env),
        "large": run_script("memory_block_seed.py", env, "large"),
    }
    for seeded in tenants.values():  # both tenants' `big` project and binding records
        size = (
            [args.projects, args.documents, args.versions, args.records]
            if seeded["tenant"] == "large"
            # The small tenant fills every page the requests show (100 projects and
            # documents, 50 versions and records), so a ratio is what size costs
            # beyond a page, not how many rows a page holds.
            else [args.small, args.small, args.small, args.small]
        )
        began = time.monotonic()
        output = subprocess.run(
            [PYTHON, "manage.py", "seed_large_tenant", seeded["tenant"]]
            + [
                f"--{name}={value}"
                for name, value in zip(
                    ("projects", "documents", "versions", "records"), size, strict=True
                )
            ],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        summary = dict(item.split("=") for item in output.split())
        seeded["record"] = summary["template_record"]
        seeded["last"] = str(-(-int(summary["agent_versions"]) // 50))
        print(f"{seeded['tenant']}: {output} ({time.monotonic() - began:.1f} s)")
    subprocess.run(
        [
            PYTHON,
            "manage.py",
            "shell",
            "-c",
            "from django.db import connection; connection.cursor().execute('VACUUM ANALYZE')",
        ],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
    )
    return tenants


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=100, help="requests per tenant (100)")
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--documents", type=int, default=10000)
    parser.add_argument("--versions", type=int, default=10000)
    parser.add_argument("--records", type=int, default=100000)
    parser.add_argument("--small", type=int, default=120, help="the small tenant's sizes (120)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="agentdocs_bench_large")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="time against the database a --keep-database run left (no seeding)",
    )
    parser.add_argument("--only", action="append", default=[], help="time only these requests")
    args = parser.parse_args(argv)
    local_only(args.postgres, args.redis_url)
    env = app_environment(database_url(args.postgres, args.database), args.redis_url)
    seeded_file = Path(tempfile.gettempdir()) / f"{args.database}.json"
    server = None
    try:
        if args.reuse:
            kept = json.loads(seeded_file.read_text())
            tenants = kept["tenants"]
            env["SECRET_KEY"] = kept["secret_key"]  # the seeded sessions are signed with it
        else:
            tenants = _seed(args, env)
            kept = {"tenants": tenants, "secret_key": env["SECRET_KEY"]}
            seeded_file.write_text(json.dumps(kept))
        server, port = serve(env, tenants["small"]["token"], workers=args.workers)
        print(f"gunicorn: {args.workers} workers; load average {load_average()}")
        endpoints = {
            name: endpoint
            for name, endpoint in _endpoints({}).items()
            if not args.only or name in args.only
        }
        timings: dict[str, dict[str, list[float]]] = {}
        for name, (method, template, body, kind) in endpoints.items():
            timings[name] = {"small": [], "large": []}
            etags: dict[str, str] = {}
            for turn in range(args.repeat + 2):  # two warm-up turns
                for size, seeded in tenants.items():
                    path = template.format(
                        t=seeded["tenant"], r=seeded["record"], last=seeded["last"]
                    )
                    headers = {"Accept": "application/json"}
                    if kind == "api":
                        headers["Authorization"] = f"Token {seeded['token']}"
                    else:
                        headers["Cookie"] = f"sessionid={seeded['session']}"
                    verb = "GET" if method == "GET304" else method
                    if method == "GET304" and size in etags:
                        headers["If-None-Match"] = etags[size]
                    data = None
                    if body is not None:
                        headers["Content-Type"] = "application/json"
                        data = json.dumps(body)
                    began = time.perf_counter()
                    status, response_headers, _ = request_once(port, verb, path, headers, data)
                    elapsed = (time.perf_counter() - began) * 1000
                    if status >= 300 and status != 304:  # a page's redirect: not signed in
                        raise SystemExit(f"{name} ({size}): HTTP {status} for {path}")
                    if method == "GET304":
                        etags[size] = response_headers.get("ETag", "")
                    if turn >= 2:
                        timings[name][size].append(elapsed)
        print()
        print(
            f"{'request':<24}{'small p50':>10}{'large p50':>10}{'× p50':>7}{'small p90':>10}"
            f"{'large p90':>10}{'× p90':>7}"
        )
        for name, sizes in timings.items():
            small, large = sizes["small"], sizes["large"]
            p50s, p50l = statistics.median(small), statistics.median(large)
            p90s = statistics.quantiles(small, n=10)[-1]
            p90l = statistics.quantiles(large, n=10)[-1]
            verdict = "" if p50l / p50s <= TARGET else "  over 1.5"
            print(
                f"{name:<24}{p50s:>9.2f}ms{p50l:>8.2f}ms{p50l / p50s:>7.2f}{p90s:>8.2f}ms"
                f"{p90l:>8.2f}ms{p90l / p90s:>7.2f}{verdict}"
            )
        print(f"\nload average {load_average()}")
    finally:
        if server is not None:
            stop(server)
        if not (args.keep_database or args.reuse):
            drop_database(args.postgres, args.database)
    return 0


if __name__ == "__main__":
    sys.exit(main())

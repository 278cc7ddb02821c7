"""Where a render's milliseconds go, next to ping's: cProfile over the WSGI application.

Seeds a fresh PostgreSQL database as `memory_block.py` does, then, in this process,
with production settings and Redis, calls the WSGI application directly (no HTTP,
no gunicorn) for `--requests` requests of each scenario, timing each and profiling
them with cProfile. Prints the mean server-side time of each scenario beside ping's
and, with `--profile SCENARIO`, the functions it spends its time in.

    .venv/bin/python bench/profile_render.py [--requests 2000] [--profile ping,full]

`--profile` takes one scenario or several, comma-separated: each is profiled in the
same run, and besides each profile a table gives, per request and side by side, the
parts of a request a render adds to or shares with ping's (authentication, the
render's cache round trip, the read-state write, the body's validation, composing,
the signature, JSON encoding, the connection's health check).

Talks to 127.0.0.1 only. See bench/README.md.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    app_environment,
    database_url,
    drop_database,
    local_only,
    migrate_and_seed,
    recreate_database,
)
from bench.memory_block import CLIENT_DOCUMENT

# In every process id: read states outlive a run in Redis (and a new database numbers its
# tenant, project and token as the last did), so a "full" render of a run minutes after
# another must not find that one's read state and send stubs.
RUN = f"{os.getpid()}-{int(time.time())}"

# The parts of a request the side-by-side table shows: (label, file suffix, function).
PARTS = (
    ("whole request (WSGI)", "django/core/handlers/wsgi.py", "__call__"),
    ("middleware and dispatch", "", ""),
    ("authentication (token, access)", "agentdocs/api/authentication.py", "authenticate"),
    ("connection health check", "django/db/backends/base/base.py", "close_if_health_check_failed"),
    ("validating the body", "agentdocs/api/serializers.py", "validated"),
    ("cache round trip (rows, read state, limits)", "agentdocs/cache.py", "get_many_and_counts"),
    ("composing the block and account", "agentdocs/core/memory_block.py", "compose_memory_block"),
    ("read-state write (unanswered)", "agentdocs/cache.py", "set_unanswered"),
    ("signature (Ed25519, claim)", "agentdocs/services/signing.py", "memory_block_sign"),
    ("JSON encoding", "agentdocs/api/renderers.py", "render"),
    ("the view itself", "rest_framework/views.py", "dispatch"),
)


def parts_of(stats: pstats.Stats, requests: int) -> dict[str, float]:
    """Cumulative milliseconds per request of each of PARTS in ``stats``."""
    found: dict[str, float] = {}
    for (filename, _, function), row in stats.stats.items():  # type: ignore[attr-defined]
        cumulative = row[3]
        for label, suffix, name in PARTS:
            if suffix and filename.endswith(suffix) and function == name:
                found[label] = found.get(label, 0.0) + cumulative / requests * 1000
    whole, view = found.get(PARTS[0][0], 0.0), found.get("the view itself", 0.0)
    found["middleware and dispatch"] = whole - view
    return found


def wsgi_request(method: str, path: str, headers: dict[str, str], body: bytes = b"") -> dict:
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_HOST": "127.0.0.1",
    }
    for name, value in headers.items():
        key = name.upper().replace("-", "_")
        environ[key if key == "CONTENT_TYPE" else f"HTTP_{key}"] = value
    return environ


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="per scenario and round")
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds (1)")
    parser.add_argument(
        "--only", default="", help="the scenarios to run, comma-separated (all; ping always)"
    )
    parser.add_argument(
        "--profile", default="", help="scenarios to profile, comma-separated (ping,full)"
    )
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument(
        "--timer",
        choices=("cpu", "wall"),
        default="cpu",
        help="what the profiles count: this process's CPU time (cpu, the default: on a "
        "shared machine the wall clock mostly measures the other processes) or wall time",
    )
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="agentdocs_bench_profile")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    args = parser.parse_args(argv)
    local_only(args.postgres, args.redis_url)
    env = app_environment(database_url(args.postgres, args.database), args.redis_url)
    recreate_database(args.postgres, args.database)
    try:
        seeded = migrate_and_seed(env)
        os.environ.update(env)
        import django

        django.setup()
        from django.core.wsgi import get_wsgi_application

        application = get_wsgi_application()
        auth = {"Authorization": f"Token {seeded['token']}", "Accept": "application/json"}
        base = f"/api/v1/tenants/{seeded['tenant']}/projects/{seeded['project']}"
        render_body = {
            "recipe": "coder",
            "profile": "cli",
            "client_document": {"name": "CLAUDE.md", "body": CLIENT_DOCUMENT},
        }
        statuses: list[str] = []

        def call(method: str, path: str, headers: dict, body: bytes = b"") -> tuple[str, dict]:
            statuses.clear()
            got: dict[str, str] = {}

            def start_response(status: str, response_headers: list, exc_info=None):
                statuses.append(status)
                got.update(response_headers)

            result = application(wsgi_request(method, path, headers, body), start_response)
            b"".join(result)
            if hasattr(result, "close"):
                result.close()
            return statuses[0], got

        _, preview_headers = call("GET", f"{base}/memory-block/", auth)
        _, document_headers = call("GET", f"{base}/documents/{seeded['document']}", auth)
        post_headers = {**auth, "Content-Type": "application/json"}
        scenarios = {
            "ping": lambda n: call("GET", "/api/v1/ping", auth),
            "stubs": lambda n: call(
                "POST",
                f"{base}/memory-block/",
                post_headers,
                json.dumps({**render_body, "process": f"profile-stubs-{RUN}"}).encode(),
            ),
            "full": lambda n: call(
                "POST",
                f"{base}/memory-block/",
                post_headers,
                json.dumps({**render_body, "process": f"profile-full-{RUN}-{n}"}).encode(),
            ),
            "preview304": lambda n: call(
                "GET",
                f"{base}/memory-block/",
                {**auth, "If-None-Match": preview_headers["ETag"]},
            ),
            "document304": lambda n: call(
                "GET",
                f"{base}/documents/{seeded['document']}",
                {**auth, "If-None-Match": document_headers["ETag"]},
            ),
        }
        mcp_headers = {
            "Authorization": f"Bearer {seeded['token']}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }

        def mcp_call(process: str) -> bytes:
            arguments = {"process": process, "recipe": "coder", "profile": "cli"}
            call = {"name": "get_memory_block", "arguments": arguments}
            return json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
            ).encode()

        mcp_path = f"/mcp/{seeded['tenant']}/{seeded['project']}/"
        scenarios["mcp"] = lambda n: call(
            "POST", mcp_path, mcp_headers, mcp_call(f"profile-mcp-{RUN}")
        )
        scenarios["mcpfull"] = lambda n: call(
            "POST", mcp_path, mcp_headers, mcp_call(f"profile-mcp-full-{RUN}-{n}")
        )
        expected = {"preview304": "304", "document304": "304"}
        for name, scenario in scenarios.items():  # warm-up, and check the answers
            for n in range(50):
                status, _ = scenario(-n - 1)
                if not status.startswith(expected.get(name, "200")):
                    raise SystemExit(f"{name}: {status}")
        wanted = [name for name in args.only.split(",") if name] or list(scenarios)
        unknown = sorted(set(wanted) - set(scenarios))
        if unknown:
            raise SystemExit(f"--only: no scenario {', '.join(unknown)} ({', '.join(scenarios)})")
        if "ping" not in wanted:
            wanted.insert(0, "ping")
        elapsed = dict.fromkeys(wanted, 0.0)
        used = dict.fromkeys(wanted, 0.0)
        profiled = [name for name in args.profile.split(",") if name]
        timer = time.process_time if args.timer == "cpu" else time.perf_counter
        profilers = {name: cProfile.Profile(timer) for name in profiled if name in wanted}
        # Alternating rounds: a change of the machine's load falls on every scenario alike.
        for round_number in range(args.rounds):
            for name in wanted:
                scenario, profiler = scenarios[name], profilers.get(name)
                first = round_number * args.requests
                began, began_cpu = time.perf_counter(), time.process_time()
                if profiler:
                    profiler.enable()
                for n in range(first, first + args.requests):
                    scenario(n)
                if profiler:
                    profiler.disable()
                elapsed[name] += time.perf_counter() - began
                used[name] += time.process_time() - began_cpu
        total = args.requests * args.rounds
        means = {name: seconds / total * 1000 for name, seconds in elapsed.items()}
        cpu = {name: seconds / total * 1000 for name, seconds in used.items()}
        parts: dict[str, dict[str, float]] = {}
        for name, profiler in profilers.items():
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats("cumulative").print_stats(args.top)
            stats.sort_stats("tottime").print_stats(args.top)
            print(f"=== profile of {name} ===")
            print(out.getvalue())
            parts[name] = parts_of(stats, total)
        if parts:
            # Profiled milliseconds (cProfile inflates Python-heavy parts): compare the
            # columns with each other, not with the unprofiled times below.
            names = list(parts)
            print(
                f"{args.timer + ' time, profiled ms per request':<46}"
                + "".join(f"{n:>12}" for n in names)
            )
            for label, _, _ in PARTS:
                print(f"{label:<46}" + "".join(f"{parts[n].get(label, 0.0):>12.3f}" for n in names))
            print()
        # Wall time includes waiting for PostgreSQL and Redis; CPU time is this process's
        # own work, which a shared machine's load barely moves.
        print(
            f"{'scenario':<14}{'ms/request':>12}{'− ping ms':>11}{'ping/x':>8}"
            f"{'CPU ms':>9}{'− ping':>9}{'ping/x':>8}"
        )
        for name, mean in means.items():
            print(
                f"{name:<14}{mean:>12.3f}{mean - means['ping']:>11.3f}{means['ping'] / mean:>8.2f}"
                f"{cpu[name]:>9.3f}{cpu[name] - cpu['ping']:>9.3f}{cpu['ping'] / cpu[name]:>8.2f}"
            )
        print(f"load average {os.getloadavg()[0]:.2f}")
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(args.postgres, args.database)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark the Memory Block render and the conditional GETs against `GET /api/v1/ping`.

Serves the app with gunicorn on PostgreSQL and Redis (both on 127.0.0.1), seeds a
fresh database, then drives, in the same run and in alternating rounds with the same
number of concurrent client processes:

- `GET /api/v1/ping`, the trivial authenticated request every ratio is taken against;
- `POST .../memory-block/` as an agent process's later turns (the stubs);
- the same with a new agent process on every request (the full text each time);
- `GET .../memory-block/` with `If-None-Match` answering 304 (the preview);
- `GET .../documents/agent.md` with `If-None-Match` answering 304;
- the render as a stateless MCP `tools/call
  get_memory_block` to `/mcp/T/P/`, as later turns (`mcp`) and as a new process each
  time (`mcpfull`), so the REST and MCP renders are measured side by side against one
  ping.

Prints requests per second and p50/p99 for each, their ratios to ping's (throughput
and p99) per round and overall, and the load average.

    .venv/bin/python bench/memory_block.py [--concurrency 8] [--seconds 4] [--rounds 3]

Traffic goes to 127.0.0.1 only; every phase is bounded in time and in requests.
See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    CPU_GROUPS,
    PhaseResult,
    WrkResult,
    app_environment,
    cpu_sample,
    cpu_used,
    database_url,
    drop_database,
    load_average,
    local_only,
    migrate_and_seed,
    recreate_database,
    request_once,
    run_phase,
    run_wrk_phase,
    serve,
    stop,
)

CLIENT_DOCUMENT = (
    "# This machine\n\n" + "- The staging box is staging-3; never deploy from here.\n" * 16
)
# The scenarios, in the order of a round, with their targets (× ping's throughput;
# issue 40's: every agent-facing request at ping's, p99 at most 1.2× ping's).
SCENARIOS = {
    "ping": ("GET /api/v1/ping", None),
    "stubs": ("POST memory-block (stubs)", 0.95),
    "full": ("POST memory-block (full)", 0.95),
    "preview304": ("GET memory-block 304", 0.95),
    "document304": ("GET document 304", 0.95),
    "mcp": ("MCP get_memory_block (stubs)", 0.95),
    "mcpfull": ("MCP get_memory_block (full)", 0.95),
}
P99_TARGET = 1.2
# In every process id: read states outlive a run in Redis (and a new database numbers its
# tenant, project and token as the last did), so a "full" render of a run minutes after
# another must not find that one's read state and send stubs.
RUN = f"{os.getpid()}-{int(time.time())}"


# Seconds of warm-up per scenario, by client, unless `--warm-up` says.
WARM_UP = {"python": 1.5, "wrk": 2.0}


def _requests(seeded: dict, port: int, concurrency: int, round_name: str) -> dict[str, list]:
    """Each scenario's requests, one per client process."""
    auth = {"Authorization": f"Token {seeded['token']}", "Accept": "application/json"}
    base = f"/api/v1/tenants/{seeded['tenant']}/projects/{seeded['project']}"
    render_path = f"{base}/memory-block/"
    document_path = f"{base}/documents/{seeded['document']}"

    def render(client: int, *, new_process_each_time: bool) -> dict:
        # One agent process per client: its first turn is full, later turns get stubs,
        # as a real process's turns do; or a new process on each request ("{n}").
        process = f"bench-{RUN}-{round_name}-{client}" + ("-{n}" if new_process_each_time else "")
        body = {
            "process": process,
            "recipe": "coder",
            "profile": "cli",
            "client_document": {"name": "CLAUDE.md", "body": CLIENT_DOCUMENT},
        }
        return {
            "method": "POST",
            "path": render_path,
            "headers": {**auth, "Content-Type": "application/json"},
            "body": json.dumps(body),
        }

    def conditional(path: str) -> dict:
        status, headers, _ = request_once(port, "GET", path, auth)
        etag = headers.get("ETag")
        if status != 200 or not etag:
            raise SystemExit(f"GET {path}: HTTP {status}, no ETag to send back")
        return {
            "method": "GET",
            "path": path,
            "headers": {**auth, "If-None-Match": etag},
            "body": None,
            "expect": 304,
        }

    def mcp_call(client: int, *, new_process_each_time: bool) -> dict:
        # The same turns as a stateless `tools/call get_memory_block` to `/mcp/T/P/` (the
        # tool's arguments: no client document).
        process = f"bench-mcp-{RUN}-{round_name}-{client}" + (
            "-{n}" if new_process_each_time else ""
        )
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "get_memory_block",
                "arguments": {"process": process, "recipe": "coder", "profile": "cli"},
            },
        }
        return {
            "method": "POST",
            "path": f"/mcp/{seeded['tenant']}/{seeded['project']}/",
            "headers": {
                "Authorization": f"Bearer {seeded['token']}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
            "body": json.dumps(call),
        }

    def checked_mcp(requests: list[dict]) -> list[dict]:
        first = requests[0]
        body = (first["body"] or "").replace("{n}", "check")
        status, _, answer = request_once(port, "POST", first["path"], first["headers"], body)
        if status != 200 or b'"result"' not in answer or b'"isError":true' in answer:
            raise SystemExit(f"MCP get_memory_block: HTTP {status}, {answer[:300]!r}")
        return requests

    preview = conditional(render_path)
    document = conditional(document_path)
    ping = {"method": "GET", "path": "/api/v1/ping", "body": None, "headers": auth}
    return {
        "ping": [ping] * concurrency,
        "stubs": [render(c, new_process_each_time=False) for c in range(concurrency)],
        "full": [render(c, new_process_each_time=True) for c in range(concurrency)],
        "preview304": [preview] * concurrency,
        "document304": [document] * concurrency,
        "mcp": checked_mcp([mcp_call(c, new_process_each_time=False) for c in range(concurrency)]),
        "mcpfull": checked_mcp(
            [mcp_call(c, new_process_each_time=True) for c in range(concurrency)]
        ),
    }


def report(
    totals: dict[str, PhaseResult | WrkResult], round_ratios: dict[str, list[float]]
) -> None:
    ping = totals["ping"]
    print()
    print(
        f"{'scenario':<28}{'requests':>9}{'errors':>7}{'rps':>9}{'p50 ms':>8}{'p99 ms':>8}"
        f"{'× rps':>8}{'× p99':>7}{'median ×':>10}  target"
    )
    for scenario, result in totals.items():
        rps_ratio = result.rps / ping.rps if ping.rps else 0.0
        p99_ratio = result.percentile(0.99) / ping.percentile(0.99)
        name, target = SCENARIOS[scenario]
        median = statistics.median(round_ratios[scenario]) if round_ratios[scenario] else 1.0
        if target is None:
            verdict = ""
        else:
            met = rps_ratio >= target and p99_ratio <= P99_TARGET
            verdict = f"≥{target:.2f}, p99 ≤{P99_TARGET}: {'met' if met else 'NOT MET'}"
        print(
            f"{name:<28}{result.requests:>9}{result.errors:>7}{result.rps:>9.1f}"
            f"{result.percentile(0.50):>8.2f}{result.percentile(0.99):>8.2f}"
            f"{rps_ratio:>8.2f}{p99_ratio:>7.2f}{median:>10.2f}  {verdict}"
        )


def report_cpu(
    totals: dict[str, PhaseResult | WrkResult], cpu: dict[str, dict[str, float]]
) -> None:
    """CPU per request by process group, over all rounds. Everything shares the
    machine's cores, so when they are busy, throughput follows the whole machine's CPU
    per request (``all``): ping's ``all`` over a scenario's is the ratio to expect."""
    if not cpu.get("ping"):
        return
    print()
    print(
        f"{'CPU µs per request':<28}"
        + "".join(f"{group:>9}" for group in (*CPU_GROUPS, "all"))
        + f"{'ping all ÷ all':>16}"
    )
    ping_all = cpu["ping"]["all"] / max(1, totals["ping"].requests)
    for scenario, used in cpu.items():
        count = max(1, totals[scenario].requests)
        each = {group: seconds / count * 1e6 for group, seconds in used.items()}
        print(
            f"{SCENARIOS[scenario][0]:<28}"
            + "".join(f"{each.get(group, 0.0):>9.0f}" for group in (*CPU_GROUPS, "all"))
            + f"{ping_all * 1e6 / each['all'] if each.get('all') else 0.0:>16.2f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=8, help="client processes (8)")
    parser.add_argument("--seconds", type=float, default=4.0, help="per phase (4)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every scenario (3)")
    parser.add_argument(
        "--warm-up",
        type=float,
        default=None,
        help="seconds of warm-up per scenario before the rounds (1.5, with wrk 2)",
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="gunicorn workers (2, as issue 16 measures)"
    )
    parser.add_argument("--threads", type=int, default=1, help="threads per worker (1: sync)")
    parser.add_argument("--max-requests", type=int, default=200_000, help="cap per phase (200000)")
    parser.add_argument(
        "--only",
        default=",".join(SCENARIOS),
        help=f"comma-separated scenarios to run besides ping ({','.join(SCENARIOS)})",
    )
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="agentdocs_bench")
    parser.add_argument(
        "--database-options",
        default="",
        help="query string for the app's DATABASE_URL, e.g. server_side_binding=true",
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument(
        "--client",
        choices=("python", "wrk"),
        default="wrk" if shutil.which("wrk") else "python",
        help="the load generator: wrk (Debian's `wrk`, the default when installed), as the "
        "issue measured, or Python client processes",
    )
    args = parser.parse_args(argv)
    scenarios = ["ping"] + [s for s in args.only.split(",") if s in SCENARIOS and s != "ping"]

    local_only(args.postgres, args.redis_url)
    env = app_environment(
        database_url(args.postgres, args.database, args.database_options), args.redis_url
    )
    print(f"database {args.database}: creating, migrating, seeding")
    recreate_database(args.postgres, args.database)
    server = None
    try:
        seeded = migrate_and_seed(env, collectstatic=True)
        server, port = serve(env, seeded["token"], workers=args.workers, threads=args.threads)
        load_before = load_average()
        mode = "threads" if args.threads > 1 else "sync"
        clients = "wrk connections" if args.client == "wrk" else "client processes"
        print(
            f"gunicorn: {args.workers} {mode} workers on 127.0.0.1:{port}; "
            f"{args.concurrency} {clients}; "
            f"{args.rounds} rounds of "
            f"{args.seconds:g} s per scenario; load average {load_before}"
        )
        warm = _requests(seeded, port, args.concurrency, "warm-up")
        warm_up = args.warm_up if args.warm_up is not None else WARM_UP[args.client]
        for scenario in scenarios:
            if args.client == "python":
                run_phase("warm-up", port, warm[scenario], warm_up, args.max_requests)
            else:
                run_wrk_phase("warm-up", port, warm[scenario], warm_up)
        totals: dict[str, PhaseResult | WrkResult] = {
            s: PhaseResult(SCENARIOS[s][0], 0, [], 0)
            if args.client == "python"
            else WrkResult(SCENARIOS[s][0], 0, 0, 0, [], [])
            for s in scenarios
        }
        round_ratios: dict[str, list[float]] = {s: [] for s in scenarios}
        cpu: dict[str, dict[str, float]] = {s: {} for s in scenarios}
        for round_number in range(args.rounds):
            requests = _requests(seeded, port, args.concurrency, str(round_number))
            results = {}
            for s in scenarios:
                before = cpu_sample(server.pid)
                results[s] = (
                    run_phase(s, port, requests[s], args.seconds, args.max_requests)
                    if args.client == "python"
                    else run_wrk_phase(s, port, requests[s], args.seconds)
                )
                for group, seconds in cpu_used(before, cpu_sample(server.pid)).items():
                    cpu[s][group] = cpu[s].get(group, 0.0) + seconds
            ping_rps = results["ping"].rps
            line = [f"ping {ping_rps:.0f} rps"]
            for scenario, result in results.items():
                round_ratios[scenario].append(result.rps / ping_rps if ping_rps else 0.0)
                totals[scenario] = totals[scenario].merge(result)
                if scenario != "ping":
                    line.append(f"{scenario} {round_ratios[scenario][-1]:.2f}")
            print(f"round {round_number + 1}: " + ", ".join(line))
        report(totals, round_ratios)
        report_cpu(totals, cpu)
        print(f"load average at the start {load_before}, now {load_average()}")
        print(f"(cores: {os.cpu_count()})")
    finally:
        if server is not None:
            stop(server)
        if not args.keep_database:
            drop_database(args.postgres, args.database)
    return 0


if __name__ == "__main__":
    sys.exit(main())

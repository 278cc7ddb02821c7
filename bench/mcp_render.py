"""Benchmark `get_memory_block` through the MCP servers against the direct REST call.

Two modes. `--wrk` is the throughput measure (issue 27): gunicorn (2 sync workers) on
PostgreSQL and Redis, wrk with 8 connections, alternating rounds in one run of
`GET /api/v1/ping`, the REST render (`POST .../memory-block/`, a process's later turns)
and the same turns as a stateless `tools/call get_memory_block` to `/mcp/T/P/`; it prints
each one's throughput and p99, their ratios to ping's, and the MCP call's to the REST
render's. Targets: the MCP call at >= 0.95x the REST render's throughput (issue 35), and
at >= 0.95x ping's throughput with p99 <= 1.2x ping's (issue 40, as `memory_block.py`).

    .venv/bin/python bench/mcp_render.py --wrk [--seconds 4] [--rounds 3]

The default mode is the latency of one call at a time:

The three paths render the same Memory Block on the same server in the same run, one
call at a time, alternating: the direct `POST .../memory-block/` (`requests`,
`Accept: text/plain`, as the MCP server sends it), the MCP tool call made by the
SDK's own client to `python -m agentdocs.cli mcp` over stdio, and the same call to
the web app's `/mcp/` over Streamable HTTP. Prints the median and p95 of each and
their ratios (MCP / REST): the cost of the stdio hop (or of the HTTP endpoint's
per-request server), JSON-RPC and the SDK.

    .venv/bin/python bench/mcp_render.py [--calls 300] [--full]
    .venv/bin/python bench/mcp_render.py --url URL --token TOKEN --tenant T --project P

Without --url it starts its own server: a fresh SQLite database in a temporary
folder, migrated and seeded by `memory_block_seed.py` (`bench/common.py`), served
by gunicorn (one sync worker, production settings, DEBUG=0) on a free port of
127.0.0.1, stopped at the end. Traffic goes to that server only. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

# Run as a script, this file's folder comes first on sys.path and this file would be
# imported as the SDK's `mcp`: drop the folder before importing it.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).parent]

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from bench.common import (  # noqa: E402
    HOST,
    WrkResult,
    app_environment,
    database_url,
    drop_database,
    load_average,
    local_only,
    migrate_and_seed,
    recreate_database,
    run_wrk_phase,
    serve,
    stop,
)

# The wrk scenarios, in the order of a round: (name, target × ping's throughput).
SCENARIOS = {
    "ping": ("GET /api/v1/ping", None),
    "rest": ("POST memory-block (stubs)", None),
    "mcp": ("MCP tools/call get_memory_block", 0.95),
}
P99_TARGET = 1.2
# The MCP tool call against the REST render it wraps (issue 35).
MCP_TO_REST_TARGET = 0.95


def start_server(folder: Path) -> tuple[subprocess.Popen, dict[str, str]]:
    """Migrate and seed a SQLite database in ``folder``, serve it; the server and the
    connection values."""
    env = app_environment(f"sqlite:///{folder / 'bench.sqlite3'}", redis_url=None)
    seeded = migrate_and_seed(env)
    server, port = serve(env, seeded["token"], workers=1)
    return server, {"url": f"http://{HOST}:{port}", **seeded}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def measure(target: dict[str, str], calls: int, full: bool) -> dict[str, list[float]]:
    """Alternate a direct render and a tool call, ``calls`` of each; milliseconds."""
    session = requests.Session()
    session.headers.update(Authorization=f"Bearer {target['token']}", Accept="text/plain")
    render_url = (
        f"{target['url'].rstrip('/')}/api/v1/tenants/{target['tenant']}"
        f"/projects/{target['project']}/memory-block/"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(PYTHONPATH=str(REPO), AGENTDOCS_TOKEN=target["token"])
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agentdocs.cli",
            "mcp",
            "--tenant",
            target["tenant"],
            "--project",
            target["project"],
            "--url",
            target["url"],
        ],
        env=env,
        cwd=str(REPO),
    )
    mcp_url = f"{target['url'].rstrip('/')}/mcp/{target['tenant']}/{target['project']}/"
    timings: dict[str, list[float]] = {"rest": [], "mcp": [], "http": [], "startup": []}
    started = time.perf_counter()
    async with Client(parameters, mode="legacy") as client:  # type: ignore[arg-type]
        timings["startup"].append((time.perf_counter() - started) * 1000)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {target['token']}"}) as http,
            Client(
                streamable_http_client(mcp_url, http_client=http),  # type: ignore[arg-type]
                mode="legacy",
            ) as http_client,
        ):
            await _alternate(session, render_url, client, http_client, calls, full, timings)
    return timings


async def _alternate(
    session: requests.Session,
    render_url: str,
    client: Client,
    http_client: Client,
    calls: int,
    full: bool,
    timings: dict[str, list[float]],
) -> None:
    """Alternate a direct render and a tool call over each transport, one at a time."""
    rest_process, mcp_process = f"bench-rest-{os.getpid()}", f"bench-mcp-{os.getpid()}"
    http_process = f"bench-http-{os.getpid()}"
    for turn in range(calls + 1):  # the first of each is a warm-up
        begin = time.perf_counter()
        response = session.post(
            render_url, json={"process": rest_process, "reset": full}, timeout=30
        )
        rest = (time.perf_counter() - begin) * 1000
        if response.status_code != 200:
            raise SystemExit(f"REST render: HTTP {response.status_code} {response.text}")
        begin = time.perf_counter()
        result = await client.call_tool("get_memory_block", {"process": mcp_process, "reset": full})
        tool = (time.perf_counter() - begin) * 1000
        if result.is_error:
            raise SystemExit(f"get_memory_block: {result.content}")
        begin = time.perf_counter()
        result = await http_client.call_tool(
            "get_memory_block", {"process": http_process, "reset": full}
        )
        over_http = (time.perf_counter() - begin) * 1000
        if result.is_error:
            raise SystemExit(f"get_memory_block over HTTP: {result.content}")
        if turn:
            timings["rest"].append(rest)
            timings["mcp"].append(tool)
            timings["http"].append(over_http)


def report(timings: dict[str, list[float]], calls: int, full: bool) -> None:
    rest, tool, over_http = timings["rest"], timings["mcp"], timings["http"]
    turns = "full renders (reset every call)" if full else "per-process turns (stubs)"
    print(f"{calls} calls each, alternating, {turns}")
    print(f"{'path':<34} {'median':>9} {'p95':>9}")
    for name, values in (
        ("REST POST .../memory-block/", rest),
        ("MCP get_memory_block (stdio)", tool),
        ("MCP get_memory_block (HTTP /mcp/)", over_http),
    ):
        print(f"{name:<34} {statistics.median(values):>7.2f}ms {percentile(values, 0.95):>7.2f}ms")
    for transport, values in (("stdio", tool), ("HTTP", over_http)):
        print(
            f"ratio MCP ({transport})/REST: median "
            f"{statistics.median(values) / statistics.median(rest):.2f}, "
            f"p95 {percentile(values, 0.95) / percentile(rest, 0.95):.2f}; "
            f"hop {statistics.median(values) - statistics.median(rest):+.2f} ms (median)"
        )
    print(f"MCP server start and initialize: {timings['startup'][0]:.0f} ms")


def _wrk_requests(seeded: dict[str, str], round_name: str) -> dict[str, list[dict]]:
    """Each scenario's request (one agent process per scenario and round, so after its
    first turn every call is a later turn: the stubs, as an agent's turns are)."""
    tenant, project = seeded["tenant"], seeded["project"]
    json_headers = {"Content-Type": "application/json", "Accept": "application/json"}
    arguments = {"process": f"bench-{round_name}", "recipe": "coder", "profile": "cli"}
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "get_memory_block",
            "arguments": {**arguments, "process": f"bench-mcp-{round_name}"},
        },
    }
    return {
        "ping": [
            {
                "method": "GET",
                "path": "/api/v1/ping",
                "body": None,
                "headers": {"Authorization": f"Token {seeded['token']}"},
            }
        ],
        "rest": [
            {
                "method": "POST",
                "path": f"/api/v1/tenants/{tenant}/projects/{project}/memory-block/",
                "headers": {**json_headers, "Authorization": f"Token {seeded['token']}"},
                "body": json.dumps({**arguments, "process": f"bench-rest-{round_name}"}),
            }
        ],
        "mcp": [
            {
                "method": "POST",
                "path": f"/mcp/{tenant}/{project}/",
                "headers": {
                    **json_headers,
                    "Accept": "application/json, text/event-stream",
                    "Authorization": f"Bearer {seeded['token']}",
                },
                "body": json.dumps(call),
            }
        ],
    }


def run_wrk(args: argparse.Namespace) -> int:
    """Throughput and p99 of the REST render and the MCP tool call against ping's."""
    if shutil.which("wrk") is None:
        raise SystemExit("--wrk needs Debian's wrk (apt-get install wrk)")
    local_only(args.postgres, args.redis_url)
    env = app_environment(database_url(args.postgres, args.database), args.redis_url)
    print(f"database {args.database}: creating, migrating, seeding")
    recreate_database(args.postgres, args.database)
    server = None
    try:
        seeded = migrate_and_seed(env, collectstatic=True)
        server, port = serve(env, seeded["token"], workers=args.workers)
        load_before = load_average()
        print(
            f"gunicorn: {args.workers} sync workers on {HOST}:{port}, PostgreSQL and Redis; "
            f"wrk, {args.concurrency} connections; {args.rounds} rounds of {args.seconds:g} s "
            f"per scenario; load average {load_before}"
        )
        for warm in _wrk_requests(seeded, "warm").values():
            run_wrk_phase("warm-up", port, warm * args.concurrency, 2)
        totals = {s: WrkResult(SCENARIOS[s][0], 0, 0, 0, [], []) for s in SCENARIOS}
        for round_number in range(args.rounds):
            # A round's processes have had their first (full) turn in its own warm-up.
            requests = _wrk_requests(seeded, str(round_number))
            for scenario in ("rest", "mcp"):
                run_wrk_phase("warm-up", port, requests[scenario], 1)
            results = {
                s: run_wrk_phase(s, port, requests[s] * args.concurrency, args.seconds)
                for s in SCENARIOS
            }
            ping = results["ping"]
            print(
                f"round {round_number + 1}: ping {ping.rps:.0f} rps, "
                + ", ".join(
                    f"{s} {results[s].rps / ping.rps:.2f}x rps, "
                    f"{results[s].percentile(0.99) / ping.percentile(0.99):.2f}x p99"
                    for s in ("rest", "mcp")
                )
                + f"; mcp {results['mcp'].rps / max(results['rest'].rps, 1e-9):.2f}x rest"
            )
            for s, result in results.items():
                totals[s] = totals[s].merge(result)
        ping = totals["ping"]
        print()
        print(
            f"{'scenario':<34}{'requests':>9}{'errors':>7}{'rps':>9}{'p50 ms':>8}"
            f"{'p99 ms':>8}{'x rps':>7}{'x p99':>7}  target"
        )
        for scenario, result in totals.items():
            name, target = SCENARIOS[scenario]
            rps_ratio = result.rps / ping.rps if ping.rps else 0.0
            p99_ratio = result.percentile(0.99) / ping.percentile(0.99)
            verdict = ""
            if target is not None:
                met = rps_ratio >= target and p99_ratio <= P99_TARGET
                verdict = f">={target:g}x rps, p99 <={P99_TARGET}x: {'met' if met else 'NOT MET'}"
            print(
                f"{name:<34}{result.requests:>9}{result.errors:>7}{result.rps:>9.1f}"
                f"{result.percentile(0.5):>8.2f}{result.percentile(0.99):>8.2f}"
                f"{rps_ratio:>7.2f}{p99_ratio:>7.2f}  {verdict}"
            )
        mcp_to_rest = totals["mcp"].rps / totals["rest"].rps if totals["rest"].rps else 0.0
        met = mcp_to_rest >= MCP_TO_REST_TARGET
        print(
            f"MCP tools/call / REST render: {mcp_to_rest:.2f}x rps "
            f"(>={MCP_TO_REST_TARGET}x: {'met' if met else 'NOT MET'})"
        )
        print(f"load average at the start {load_before}, now {load_average()}")
    finally:
        if server is not None:
            stop(server)
        if not args.keep_database:
            drop_database(args.postgres, args.database)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls of each path (300)")
    parser.add_argument("--full", action="store_true", help="reset=true on every call")
    parser.add_argument("--url", help="an agentdocs server to use instead of starting one")
    parser.add_argument("--token", default=os.environ.get("AGENTDOCS_TOKEN"))
    parser.add_argument("--tenant")
    parser.add_argument("--project")
    parser.add_argument("--wrk", action="store_true", help="throughput against ping, with wrk")
    parser.add_argument("--concurrency", type=int, default=8, help="--wrk: connections (8)")
    parser.add_argument("--seconds", type=float, default=4.0, help="--wrk: per phase (4)")
    parser.add_argument("--rounds", type=int, default=3, help="--wrk: rounds (3)")
    parser.add_argument("--workers", type=int, default=2, help="--wrk: gunicorn workers (2)")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="agentdocs_bench_mcp")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--keep-database", action="store_true")
    args = parser.parse_args(argv)
    if args.wrk:
        return run_wrk(args)
    if args.url:
        if not (args.token and args.tenant and args.project):
            parser.error("--url needs --token (or AGENTDOCS_TOKEN), --tenant and --project")
        target = {
            "url": args.url,
            "token": args.token,
            "tenant": args.tenant,
            "project": args.project,
        }
        report(asyncio.run(measure(target, args.calls, args.full)), args.calls, args.full)
        return 0
    with tempfile.TemporaryDirectory(prefix="agentdocs-bench-mcp-") as folder:
        server, target = start_server(Path(folder))
        try:
            print(f"gunicorn (1 sync worker, SQLite) on {target['url']}")
            report(asyncio.run(measure(target, args.calls, args.full)), args.calls, args.full)
        finally:
            stop(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())

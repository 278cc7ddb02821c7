"""Benchmark `get_memory_block` through the MCP servers against the direct REST call.

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
import os
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

import httpx  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from bench.common import (  # noqa: E402
    HOST,
    app_environment,
    migrate_and_seed,
    serve,
    stop,
)


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
    async with (
        stdio_client(parameters) as (read, write),
        ClientSession(read, write) as client,
        httpx.AsyncClient(headers={"Authorization": f"Bearer {target['token']}"}) as http,
        streamable_http_client(mcp_url, http_client=http) as (http_read, http_write, _),
        ClientSession(http_read, http_write) as http_client,
    ):
        await client.initialize()
        timings["startup"].append((time.perf_counter() - started) * 1000)
        await http_client.initialize()
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
            result = await client.call_tool(
                "get_memory_block", {"process": mcp_process, "reset": full}
            )
            tool = (time.perf_counter() - begin) * 1000
            if result.isError:
                raise SystemExit(f"get_memory_block: {result.content}")
            begin = time.perf_counter()
            result = await http_client.call_tool(
                "get_memory_block", {"process": http_process, "reset": full}
            )
            over_http = (time.perf_counter() - begin) * 1000
            if result.isError:
                raise SystemExit(f"get_memory_block over HTTP: {result.content}")
            if turn:
                timings["rest"].append(rest)
                timings["mcp"].append(tool)
                timings["http"].append(over_http)
    return timings


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls of each path (300)")
    parser.add_argument("--full", action="store_true", help="reset=true on every call")
    parser.add_argument("--url", help="an agentdocs server to use instead of starting one")
    parser.add_argument("--token", default=os.environ.get("AGENTDOCS_TOKEN"))
    parser.add_argument("--tenant")
    parser.add_argument("--project")
    args = parser.parse_args(argv)
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

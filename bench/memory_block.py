"""Benchmark the Memory Block render against `GET /api/v1/ping`.

Serves the app with gunicorn on PostgreSQL and Redis (both on 127.0.0.1),
seeds a fresh database, then drives `POST .../memory-block/` and
`GET /api/v1/ping` in the same run, alternating rounds, with the same number
of concurrent client processes. Prints requests per second for both, their
ratio (target: the render reaches at least 70% of ping) and p50/p99 latency.

    .venv/bin/python bench/memory_block.py [--concurrency 8] [--seconds 6] [--rounds 5]

Traffic goes to 127.0.0.1 only; every phase is bounded in time and in
requests. See bench/README.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
CLIENT_DOCUMENT = (
    "# This machine\n\n" + "- The staging box is staging-3; never deploy from here.\n" * 16
)


@dataclass
class PhaseResult:
    name: str
    seconds: float
    latencies_ms: list[float]
    errors: int

    @property
    def requests(self) -> int:
        return len(self.latencies_ms)

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, fraction: float) -> float:
        if not self.latencies_ms:
            return float("nan")
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]

    def merge(self, other: PhaseResult) -> PhaseResult:
        return PhaseResult(
            self.name,
            self.seconds + other.seconds,
            self.latencies_ms + other.latencies_ms,
            self.errors + other.errors,
        )


# The load driver: one process per concurrent client, one connection each.


def _client(
    port: int,
    request: dict,
    start_at: float,
    stop_at: float,
    max_requests: int,
    results: multiprocessing.Queue,
) -> None:
    connection = http.client.HTTPConnection(HOST, port, timeout=30)
    latencies: list[float] = []
    errors = 0
    body = request["body"].encode("utf-8") if request["body"] is not None else None
    while time.monotonic() < start_at:
        time.sleep(0.001)
    while len(latencies) + errors < max_requests:
        began = time.monotonic()
        if began >= stop_at:
            break
        try:
            connection.request(
                request["method"], request["path"], body=body, headers=request["headers"]
            )
            response = connection.getresponse()
            response.read()
            ok = response.status == 200
        except (OSError, http.client.HTTPException):
            connection.close()
            ok = False
        finished = time.monotonic()
        if finished > stop_at:
            break  # only requests that completed inside the phase count
        if ok:
            latencies.append((finished - began) * 1000)
        else:
            errors += 1
    connection.close()
    results.put((latencies, errors))


def run_phase(
    name: str, port: int, requests: list[dict], seconds: float, max_requests: int
) -> PhaseResult:
    results: multiprocessing.Queue = multiprocessing.Queue()
    start_at = time.monotonic() + 0.5  # let every client process start first
    stop_at = start_at + seconds
    per_client = max(1, max_requests // len(requests))
    clients = [
        multiprocessing.Process(
            target=_client, args=(port, request, start_at, stop_at, per_client, results)
        )
        for request in requests
    ]
    for client in clients:
        client.start()
    latencies: list[float] = []
    errors = 0
    for _ in clients:
        client_latencies, client_errors = results.get(timeout=seconds + 60)
        latencies += client_latencies
        errors += client_errors
    for client in clients:
        client.join(timeout=10)
    return PhaseResult(name, seconds, latencies, errors)


# The server and its data


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((HOST, port)) == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def recreate_database(admin_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def drop_database(admin_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')


def app_environment(database_url: str, redis_url: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        CACHE_KEY_PREFIX="agentdocs-bench",
        SECRET_KEY=secrets.token_urlsafe(48),
        DEBUG="0",
        SECURE_SSL_REDIRECT="0",
        ALLOWED_HOSTS=HOST,
        DATABASE_CONN_MAX_AGE="600",
        AGENTDOCS_READ_STATE_TTL_SECONDS="900",
        # The limiter still counts every render (its cost is part of the figure), but
        # one benchmark token must never reach the limit.
        AGENTDOCS_RATE_LIMIT_RENDER="1000000000/min",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="config.settings",
        PYTHONPATH=str(REPO),
    )
    return env


def wait_until_serving(port: int, token: str, server: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with code {server.returncode}")
        try:
            connection = http.client.HTTPConnection(HOST, port, timeout=2)
            connection.request("GET", "/api/v1/ping", headers={"Authorization": f"Token {token}"})
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"gunicorn did not answer on port {port} within {timeout:.0f} s")


def stop(server: subprocess.Popen) -> None:
    if server.poll() is not None:
        return
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


# The report


def report(ping: PhaseResult, render: PhaseResult, target: float) -> float:
    ratio = render.rps / ping.rps if ping.rps else 0.0
    print()
    print(f"{'endpoint':<24}{'requests':>10}{'errors':>8}{'rps':>10}{'p50 ms':>10}{'p99 ms':>10}")
    for result in (ping, render):
        print(
            f"{result.name:<24}{result.requests:>10}{result.errors:>8}{result.rps:>10.1f}"
            f"{result.percentile(0.50):>10.2f}{result.percentile(0.99):>10.2f}"
        )
    verdict = "meets" if ratio >= target else "BELOW"
    print(f"\nrender/ping throughput: {ratio:.2f} ({verdict} the target of {target:.2f})")
    return ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=8, help="client processes (8)")
    parser.add_argument("--seconds", type=float, default=6.0, help="per phase (6)")
    parser.add_argument("--rounds", type=int, default=5, help="ping/render rounds (5)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (4)")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker (1: sync)")
    parser.add_argument("--max-requests", type=int, default=200_000, help="cap per phase (200000)")
    parser.add_argument(
        "--full",
        action="store_true",
        help="send reset with every render, so each one sends the full text (no dedup)",
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
    parser.add_argument("--target", type=float, default=0.70)
    args = parser.parse_args(argv)

    for url in (args.postgres, args.redis_url):
        parts = urlsplit(url)
        if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise SystemExit(f"{url}: this benchmark only talks to this machine")
        if not port_open(parts.port):
            raise SystemExit(f"nothing listens on {parts.hostname}:{parts.port} ({url})")

    python = sys.executable
    database_url = (
        urlsplit(args.postgres)
        ._replace(path=f"/{args.database}", query=args.database_options)
        .geturl()
    )
    env = app_environment(database_url, args.redis_url)
    print(f"database {args.database}: creating, migrating, seeding")
    recreate_database(args.postgres, args.database)
    server = None
    try:
        for command in (["migrate"], ["collectstatic"]):  # as the production image does
            subprocess.run(
                [python, "manage.py", *command, "--noinput", "-v", "0"],
                cwd=REPO,
                env=env,
                check=True,
            )
        seeded = json.loads(
            subprocess.run(
                [python, str(REPO / "bench" / "memory_block_seed.py")],
                cwd=REPO,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        port = free_port()
        gunicorn = Path(python).with_name("gunicorn")
        command = [
            str(gunicorn),
            "config.wsgi:application",
            "--bind",
            f"{HOST}:{port}",
            "--workers",
            str(args.workers),
            "--log-level",
            "warning",
        ]
        if args.threads > 1:
            command += ["--worker-class", "gthread", "--threads", str(args.threads)]
        server = subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True)
        wait_until_serving(port, seeded["token"], server, timeout=60)

        auth = {"Authorization": f"Token {seeded['token']}", "Accept": "application/json"}
        ping = {"method": "GET", "path": "/api/v1/ping", "body": None, "headers": auth}
        render_path = (
            f"/api/v1/tenants/{seeded['tenant']}/projects/{seeded['project']}/memory-block/"
        )

        def renders(round_name: str) -> list[dict]:
            return [
                {
                    "method": "POST",
                    "path": render_path,
                    "headers": {**auth, "Content-Type": "application/json"},
                    "body": json.dumps(
                        {
                            # One agent process per client: its first turn is full, later
                            # turns get stubs, as a real process's turns do.
                            "process": f"bench-{round_name}-{client}",
                            "recipe": "coder",
                            "profile": "cli",
                            "client_document": {"name": "CLAUDE.md", "body": CLIENT_DOCUMENT},
                            "reset": args.full,
                        }
                    ),
                }
                for client in range(args.concurrency)
            ]

        load_before = os.getloadavg()[0]
        mode = "threads" if args.threads > 1 else "sync"
        kind = "full (reset)" if args.full else "per-process turns"
        print(
            f"gunicorn: {args.workers} {mode} workers on 127.0.0.1:{port}; "
            f"{args.concurrency} client processes; {args.rounds} rounds of "
            f"{args.seconds:.0f} s per endpoint; renders: {kind}"
        )
        run_phase("warm-up", port, [ping] * args.concurrency, 2, args.max_requests)
        run_phase("warm-up", port, renders("warm-up"), 2, args.max_requests)
        ping_total = PhaseResult("GET /api/v1/ping", 0, [], 0)
        render_total = PhaseResult("POST memory-block", 0, [], 0)
        ratios = []
        for round_number in range(args.rounds):
            ping_round = run_phase(
                "ping", port, [ping] * args.concurrency, args.seconds, args.max_requests
            )
            render_round = run_phase(
                "render", port, renders(str(round_number)), args.seconds, args.max_requests
            )
            ratios.append(render_round.rps / ping_round.rps if ping_round.rps else 0.0)
            print(
                f"round {round_number + 1}: ping {ping_round.rps:.1f} rps, "
                f"render {render_round.rps:.1f} rps, ratio {ratios[-1]:.2f}"
            )
            ping_total = ping_total.merge(ping_round)
            render_total = render_total.merge(render_round)
        report(ping_total, render_total, args.target)
        print(
            f"median ratio of the rounds: {statistics.median(ratios):.2f}; "
            f"load average now {os.getloadavg()[0]:.2f} (was {load_before:.2f} at the start)"
        )
    finally:
        if server is not None:
            stop(server)
        if not args.keep_database:
            drop_database(args.postgres, args.database)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the HTTP benchmarks share: a fresh database, the seed, gunicorn, the load driver.

`bench/memory_block.py`, `bench/large_tenant.py` and `bench/mcp_render.py` each migrate a
database, seed it with `memory_block_seed.py` (a tenant, a project, documents,
settings, a recipe and a reader's `render` token), serve it with gunicorn on a free
port of 127.0.0.1 and stop it at the end; the first two also drive it with
concurrent client processes in alternating phases. Traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import multiprocessing
import os
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
PYTHON = sys.executable


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


# The load driver: one process per concurrent client, one connection each. A request
# is a dict: method, path, headers, body (None, or text in which "{n}" becomes the
# client's request counter, so each request can name a new agent process) and
# expect (the status that counts as a success, 200 unless said).


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
    template = request["body"]
    counted = template is not None and "{n}" in template
    fixed = template.encode("utf-8") if template is not None and not counted else None
    expect = request.get("expect", 200)
    n = 0
    while time.monotonic() < start_at:
        time.sleep(0.001)
    while len(latencies) + errors < max_requests:
        began = time.monotonic()
        if began >= stop_at:
            break
        body = template.replace("{n}", str(n)).encode("utf-8") if counted else fixed
        n += 1
        try:
            connection.request(
                request["method"], request["path"], body=body, headers=request["headers"]
            )
            response = connection.getresponse()
            response.read()
            ok = response.status == expect
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
    """Each request of ``requests`` sent over and over by its own client process."""
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


def request_once(port: int, method: str, path: str, headers: dict, body: str | None = None):
    """One request; (status, headers, body bytes)."""
    connection = http.client.HTTPConnection(HOST, port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


# Where the machine's CPU went during a phase (Linux: /proc). With every process of
# the benchmark on one machine, throughput is bound by the CPU all of them spend per
# request, not only the app's: a costlier SQL statement shows in PostgreSQL's share.

CPU_GROUPS = ("app", "postgres", "redis", "client", "rest")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _process_cpu() -> list[tuple[int, int, str, float]]:
    """(pid, parent pid, command name, CPU seconds) of every process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        seconds = (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime
        found.append((int(entry), int(fields[1]), name, seconds))
    return found


def cpu_sample(server_pid: int) -> dict[str, float] | None:
    """CPU seconds used so far: by gunicorn (``server_pid`` and its workers), PostgreSQL,
    Redis, this script's finished children (wrk or the client processes) and the whole
    machine (``all``, from /proc/stat); None where there is no /proc."""
    if not Path("/proc/stat").exists():
        return None
    sample = dict.fromkeys(CPU_GROUPS, 0.0)
    for pid, parent, name, seconds in _process_cpu():
        if server_pid in (pid, parent):
            sample["app"] += seconds
        elif name.startswith("postgres"):
            sample["postgres"] += seconds
        elif name.startswith("redis-server"):
            sample["redis"] += seconds
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    sample["client"] = children.ru_utime + children.ru_stime
    ticks = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    sample["all"] = (sum(ticks) - ticks[3] - ticks[4]) / _TICK  # not idle, not I/O wait
    return sample


def cpu_used(before: dict[str, float] | None, after: dict[str, float] | None) -> dict[str, float]:
    """The CPU seconds each group used between two samples; ``rest`` is what the machine
    used beside them (the kernel's network work among it)."""
    if before is None or after is None:
        return {}
    used = {group: after[group] - before[group] for group in (*CPU_GROUPS[:-1], "all")}
    used["rest"] = max(0.0, used["all"] - sum(used[group] for group in CPU_GROUPS[:-1]))
    return used


# The server and its data


def local_only(*urls: str) -> None:
    for url in urls:
        parts = urlsplit(url)
        if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise SystemExit(f"{url}: the benchmarks only talk to this machine")
        if not port_open(parts.port or 0):
            raise SystemExit(f"nothing listens on {parts.hostname}:{parts.port} ({url})")


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((HOST, port)) == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


# A migrated database to copy instead of starting empty: the test suite's template
# (tests/conftest.py names it here under pytest-xdist), so a benchmark's smoke run
# (tests/test_benchmarks_run.py) finds its migrations applied, as a copy takes a second
# and the migrations many. Unset, as when a person runs a benchmark, nothing changes.
TEMPLATE_VARIABLE = "AGENTDOCS_TEST_TEMPLATE_DATABASE"


# The same for a SQLite file: a migrated one the tests made (tests/conftest.py,
# `migrated_sqlite`), copied where a smoke run's new database goes.
SQLITE_TEMPLATE_VARIABLE = "AGENTDOCS_TEST_TEMPLATE_SQLITE"


def copy_sqlite_template(url: str) -> None:
    """Start the SQLite database ``url`` names as a copy of the migrated template, when
    the tests name one and the file is not there yet; migrate then finds nothing to do."""
    template = os.environ.get(SQLITE_TEMPLATE_VARIABLE)
    if template and url.startswith("sqlite:///"):
        target = Path(url.removeprefix("sqlite:///"))
        if not target.exists():
            shutil.copyfile(template, target)


def recreate_database(admin_url: str, name: str) -> None:
    import psycopg

    template = os.environ.get(TEMPLATE_VARIABLE)
    copy = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"{copy}')


def drop_database(admin_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')


def database_url(admin_url: str, name: str, options: str = "") -> str:
    return urlsplit(admin_url)._replace(path=f"/{name}", query=options).geturl()


def app_environment(database_url: str, redis_url: str | None) -> dict[str, str]:
    """Production settings (DEBUG=0) on the given database and, when named, Redis."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    for name in ("REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    env.update(
        DATABASE_URL=database_url,
        SECRET_KEY=secrets.token_urlsafe(48),
        DEBUG="0",
        SECURE_SSL_REDIRECT="0",
        ALLOWED_HOSTS=HOST,
        # The limiter still counts every render (its cost is part of the figure), but
        # one benchmark token, and its person, must never reach a limit.
        AGENTDOCS_RATE_LIMIT_RENDER="1000000000/min",
        AGENTDOCS_RATE_LIMIT_RENDER_PER_USER="1000000000/min",
        AGENTDOCS_RATE_LIMIT_BIND="1000000000/min",
        AGENTDOCS_RATE_LIMIT_BIND_PER_USER="1000000000/min",
        AGENTDOCS_RATE_LIMIT_PREVIEW_PER_USER="1000000000/min",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="config.settings",
        PYTHONPATH=str(REPO),
    )
    if not redis_url:  # the file cache in a folder of this run's own, not the checkout's
        env["CACHE_DIR"] = tempfile.mkdtemp(prefix="agentdocs-bench-cache-")
    if redis_url:
        env.update(
            REDIS_URL=redis_url,
            CACHE_KEY_PREFIX="agentdocs-bench",
            DATABASE_CONN_MAX_AGE="600",
            AGENTDOCS_READ_STATE_TTL_SECONDS="900",
        )
    return env


def migrate_and_seed(env: dict[str, str], *, collectstatic: bool = False) -> dict[str, str]:
    """Migrate the database ``env`` names and seed it (`memory_block_seed.py`): the
    token, tenant, project and document path the benchmarks use."""
    commands = [["migrate"], ["collectstatic"]] if collectstatic else [["migrate"]]
    copy_sqlite_template(env["DATABASE_URL"])
    for command in commands:  # as the production image does
        subprocess.run(
            [PYTHON, "manage.py", *command, "--noinput", "-v", "0"], cwd=REPO, env=env, check=True
        )
    return run_script("memory_block_seed.py", env)


def run_script(name: str, env: dict[str, str], *args: str) -> dict:
    """Run a Django-side script of bench/ with ``env``; the JSON it prints."""
    result = subprocess.run(
        [PYTHON, str(REPO / "bench" / name), *args],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def serve(
    env: dict[str, str], token: str, *, workers: int, threads: int = 1
) -> tuple[subprocess.Popen, int]:
    """gunicorn on a free port of 127.0.0.1, once it answers ping; (server, port)."""
    port = free_port()
    command = [
        str(Path(PYTHON).with_name("gunicorn")),
        "config.wsgi:application",
        "--bind",
        f"{HOST}:{port}",
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]
    if threads > 1:
        command += ["--worker-class", "gthread", "--threads", str(threads)]
    server = subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True)
    try:
        wait_until_serving(port, token, server, timeout=60)
    except SystemExit:
        stop(server)
        raise
    return server, port


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


# The same phases driven by wrk (`--client wrk`), as the issue measured them: a C load
# generator whose own cost per request is far below a Python client's, so a larger
# answer (a full render's 20 KB) is not also charged to the client processes that
# share the machine's cores with the server. The requests are the same dicts; one
# wrk thread per core, `concurrency` connections.

_WRK_SCRIPT = """
local method, path, template, expect = %(method)s, %(path)s, %(body)s, %(expect)d
local headers = %(headers)s
local counted = template ~= nil and string.find(template, "{n}", 1, true) ~= nil
local threads, next_id = {}, 1
function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end
n, bad = 0, 0  -- globals: done() reads each thread's `bad`
function request()
  n = n + 1
  local body = template
  if counted then
    body = string.gsub(template, "{n}", "w" .. id .. "-" .. n, 1)
  end
  return wrk.format(method, path, headers, body)
end
function response(status, headers, body)
  if status ~= expect then
    bad = bad + 1
  end
end
function done(summary, latency, requests)
  local unexpected = 0
  for _, thread in ipairs(threads) do
    unexpected = unexpected + thread:get("bad")
  end
  local e = summary.errors
  io.write(string.format(
    '\\nRESULT {"requests": %%d, "duration_us": %%d, "errors": %%d, '
      .. '"p50_us": %%d, "p99_us": %%d}\\n',
    summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout + unexpected,
    latency:percentile(50), latency:percentile(99)))
end
"""


def _lua(value: object) -> str:
    if value is None:
        return "nil"
    if isinstance(value, dict):
        return "{" + ", ".join(f"[{_lua(k)}] = {_lua(v)}" for k, v in value.items()) + "}"
    # A JSON string of this text (quotes, backslashes, \n, no \u escapes) is a Lua literal.
    return json.dumps(str(value), ensure_ascii=False)


@dataclass
class WrkResult:
    """One or more wrk phases: the request count over their time, and the median of
    their percentiles (wrk reports percentiles, not the latencies themselves)."""

    name: str
    seconds: float
    count: int
    errors: int
    p50s_ms: list[float]
    p99s_ms: list[float]

    @property
    def requests(self) -> int:
        return self.count

    @property
    def rps(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0

    def percentile(self, fraction: float) -> float:
        values = {0.5: self.p50s_ms, 0.99: self.p99s_ms}[fraction]
        ordered = sorted(values)
        return ordered[len(ordered) // 2] if ordered else float("nan")

    def merge(self, other: WrkResult) -> WrkResult:
        return WrkResult(
            self.name,
            self.seconds + other.seconds,
            self.count + other.count,
            self.errors + other.errors,
            self.p50s_ms + other.p50s_ms,
            self.p99s_ms + other.p99s_ms,
        )


def run_wrk_phase(name: str, port: int, requests: list[dict], seconds: float) -> WrkResult:
    """The phase's first request, sent by wrk over ``len(requests)`` connections ("{n}" in
    its body becomes a counter unique to each request, as the Python clients do)."""
    request = requests[0]
    script = _WRK_SCRIPT % {
        "method": _lua(request["method"]),
        "path": _lua(request["path"]),
        "body": _lua(request["body"]),
        "expect": request.get("expect", 200),
        "headers": _lua(request["headers"]),
    }
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as file:
        file.write(script)
    try:
        run = subprocess.run(
            [
                "wrk",
                f"--threads={min(len(requests), os.cpu_count() or 1)}",
                f"--connections={len(requests)}",
                f"--duration={max(1, round(seconds))}s",
                "--timeout=30s",
                f"--script={file.name}",
                f"http://{HOST}:{port}",
            ],
            capture_output=True,
            text=True,
            timeout=seconds + 60,
        )
    finally:
        os.unlink(file.name)
    if run.returncode != 0:
        raise SystemExit(f"wrk failed ({name}): {run.stderr.strip() or run.stdout}")
    line = next(line for line in run.stdout.splitlines() if line.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    return WrkResult(
        name,
        result["duration_us"] / 1e6,
        result["requests"],
        result["errors"],
        [result["p50_us"] / 1000],
        [result["p99_us"] / 1000],
    )


# In-process benchmarks (evidence.py, labels.py, repositories.py): Django in this
# process, on a throwaway database of their own.


@contextlib.contextmanager
def in_process_database(*, name: str, admin_url: str, sqlite: bool) -> Iterator[None]:
    """Django set up in this process and migrated on a fresh database: PostgreSQL
    ``name`` (made and dropped through ``admin_url``) or, with ``sqlite``, a file in a
    temporary folder. The cache is the process's own, tasks run in-process and rate
    limits are off, so nothing but the measured code shares the time."""
    folder = tempfile.mkdtemp(prefix=f"{name}-")
    if sqlite:
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/db.sqlite3"
        copy_sqlite_template(os.environ["DATABASE_URL"])
    else:
        recreate_database(admin_url, name)
        os.environ["DATABASE_URL"] = database_url(admin_url, name)
    for variable in ("REDIS_URL", "CELERY_BROKER_URL"):
        os.environ.pop(variable, None)
    os.environ["AGENTDOCS_RATE_LIMITS_ENABLED"] = "0"
    try:
        import logging
        import warnings

        import django
        from django.core.management import call_command

        django.setup()
        logging.disable(logging.WARNING)
        warnings.filterwarnings("ignore", message="No directory at")  # no collectstatic here
        call_command("migrate", verbosity=0)
        yield
    finally:
        if not sqlite:
            from django.db import connections

            connections.close_all()
            drop_database(admin_url, name)
        shutil.rmtree(folder, ignore_errors=True)


def in_process_cast() -> tuple[Any, Any, Any]:
    """The in-process benchmarks' cast: users admin and reader, and the tenant acme
    (admin its admin, reader a reader)."""
    from django.contrib.auth import get_user_model

    from agentdocs.models import Role
    from agentdocs.services import tenancy as tenant_service

    users = get_user_model()
    admin = users.objects.create_user(username="admin", password=None)
    reader = users.objects.create_user(username="reader", password=None)
    tenant = tenant_service.tenant_create(slug="acme", name="Acme", user=admin)
    tenant_service.membership_set(tenant=tenant, username="reader", role=Role.READER, actor=admin)
    return admin, reader, tenant

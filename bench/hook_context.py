"""`agentdocs hook context`'s wall time beside the floor it sits on, in the same run:
`python -c pass` and a plain HTTP GET of `/api/v1/ping`. Targets (issue 36): p50 at most
3x that pair's sum with the server up, and within `--timeout` plus 0.2 s with it down.

    .venv/bin/python bench/hook_context.py [--runs 20] [--timeout 3] [--also DIR]
    .venv/bin/python bench/hook_context.py --url URL --token T --tenant acme --project web

Without `--url` it migrates and seeds a SQLite database in a temporary folder
(`memory_block_seed.py`) and serves it with one gunicorn sync worker on 127.0.0.1, as
`bench/mcp_render.py` does. Each round runs, one after the other:

- `python -c pass`: a Python process that does nothing (the interpreter's start);
- `GET ping`: one `GET /api/v1/ping` over a new connection (`http.client`, in this
  process), the server's cheapest authenticated answer; and `GET ping (process)`: the
  same from a process of its own with `requests`, as a shell hook that curls would be;
- `hook startup`: the hook as Claude Code runs it at a session's start (`agentdocs hook
  context`, the script beside the interpreter; a new session: the full block rendered,
  its signature checked, the delivery bound);
- `hook resume`: the same session resumed (stubs).

The hook exits once its output is written and leaves the binding record's upload to a
detached child. On Linux the benchmark adopts those children (`PR_SET_CHILD_SUBREAPER`)
and waits for each before the next row, so that no bind runs beside a timed process:
`... bind after exit` is the time from the hook's exit to its child's.

Then the server is stopped and the hook runs against the same address, served from
the cache: `hook down` (nothing listens: refused at once) and `hook slow` (a socket that
accepts and never answers: the hook waits `--timeout`). Every hook run must exit 0 and
write one JSON line; the figures are p50 and p90 in milliseconds, the ratios, and the
load average at the start and the end; beside them each process's CPU time (user and
system, p50), which a loaded machine inflates far less than the wall time. Traffic goes
to 127.0.0.1 only.

The hook runs from bytecode, as an installed agentdocs does (pip compiles it at the
install): agentdocs is compiled first, and `PYTHONDONTWRITEBYTECODE` is not passed on.
`--no-bytecode` makes it compile every module from source at every start instead, as a
checkout whose environment sets that variable does. `--also DIR` times the hook of
another checkout of agentdocs (main, say) in the same rounds, against the same server,
so that a change is compared with what it changes in one run (`hook startup (DIR)`).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    HOST,
    REPO,
    app_environment,
    load_average,
    local_only,
    migrate_and_seed,
    serve,
    stop,
)

# The console script pip installs beside the interpreter (PYTHONPATH picks the checkout).
AGENTDOCS_SCRIPT = Path(sys.executable).with_name("agentdocs")
PR_SET_CHILD_SUBREAPER = 36


def _adopt_orphans() -> bool:
    """Become the parent of the processes our children leave behind (Linux), so that a
    hook's detached bind can be waited for."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _hook_orphans(server: subprocess.Popen | None) -> list[int]:
    """Our children other than the server: what the hooks left behind, running or done
    (a zombie's `stat` still names its parent, its `cmdline` is empty)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        pid = int(stat.parent.name)
        if parent == os.getpid() and (server is None or pid != server.pid):
            found.append(pid)
    return found


def _wait_for_bind(server: subprocess.Popen | None) -> float | None:
    """Seconds from now until the hook's detached bind is done; None when it left none."""
    started = time.perf_counter()
    orphans = _hook_orphans(server)
    for pid in orphans:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    return time.perf_counter() - started if orphans else None


def _run(
    argv: list[str], *, stdin: bytes = b"", env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess, float, float]:
    """The finished process, its wall time and its CPU time (user + system), in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result, elapsed, cpu


def _timed(argv: list[str], *, stdin: bytes = b"") -> tuple[float, float]:
    result, elapsed, cpu = _run(argv, stdin=stdin)
    if result.returncode != 0:
        raise SystemExit(f"{argv[-4:]} exited {result.returncode}: {result.stderr[-500:]!r}")
    return elapsed, cpu


def _hook(env: dict[str, str], session: str, source: str, timeout: float) -> tuple[float, float]:
    stdin = json.dumps(
        {"session_id": session, "hook_event_name": "SessionStart", "source": source}
    ).encode()
    argv = [sys.executable, "-m", "agentdocs.cli", "hook", "context", "--tool", "claude-code"]
    if AGENTDOCS_SCRIPT.is_file():  # what the installed hook runs: `agentdocs hook context`
        argv = [str(AGENTDOCS_SCRIPT), *argv[3:]]
    result, elapsed, cpu = _run([*argv, "--timeout", str(timeout)], stdin=stdin, env=env)
    lines = result.stdout.decode("utf-8").splitlines()
    if (
        result.returncode != 0
        or len(lines) != 1
        or "hookSpecificOutput" not in json.loads(lines[0])
    ):
        raise SystemExit(f"the hook's output is not the valid form: {result.stdout[-500:]!r}")
    return elapsed, cpu


def _ping(url: str, token: str) -> float:
    parts = urlsplit(url)
    started = time.perf_counter()
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    connection.request("GET", "/api/v1/ping", headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    response.read()
    connection.close()
    elapsed = time.perf_counter() - started
    if response.status != 200:
        raise SystemExit(f"ping answered {response.status}")
    return elapsed


def _ms(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] * 1000


def _hook_environment(
    target: dict[str, str], url: str, checkout: Path, *, bytecode: bool
) -> dict[str, str]:
    """The hook's environment: ``checkout``'s agentdocs, from its bytecode (compiled now)
    or compiled from source at every start, and a cache folder of its own."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        compileall.compile_dir(checkout / "agentdocs", quiet=1)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="agentdocs-bench-nopyc-")
    env.update(
        PYTHONPATH=str(checkout),
        AGENTDOCS_URL=url,
        AGENTDOCS_TOKEN=target["token"],
        AGENTDOCS_TENANT=target["tenant"],
        AGENTDOCS_PROJECT=target["project"],
        AGENTDOCS_CACHE_DIR=tempfile.mkdtemp(prefix="agentdocs-bench-hook-"),
    )
    return env


def measure(
    target: dict[str, str],
    runs: int,
    timeout: float,
    server=None,
    *,
    bytecode: bool = True,
    also: Path | None = None,
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall times of every row, and CPU times of the rows that are processes."""
    url = target["url"].rstrip("/")
    env = _hook_environment(target, url, REPO, bytecode=bytecode)
    other = _hook_environment(target, url, also, bytecode=bytecode) if also else None
    ping_process = (
        f"import requests; requests.get({url + '/api/v1/ping'!r}, "
        f"headers={{'Authorization': 'Bearer {target['token']}'}}, timeout=5).raise_for_status()"
    )
    rows: dict[str, list[float]] = {"python -c pass": [], "GET ping": []}
    cpu: dict[str, list[float]] = {"python -c pass": []}

    def add(name: str, timed: tuple[float, float]) -> None:
        rows.setdefault(name, []).append(timed[0])
        cpu.setdefault(name, []).append(timed[1])
        if name.startswith("hook") and adopted:
            bind = _wait_for_bind(server)
            if bind is not None:
                rows.setdefault(f"{name}: bind after exit", []).append(bind)

    adopted = _adopt_orphans()

    _hook(env, "bench-warm", "startup", timeout)  # the keys fetched once, as in use
    if other is not None:
        _hook(other, "bench-other-warm", "startup", timeout)
    _wait_for_bind(server)
    for run in range(runs):
        add("python -c pass", _timed([sys.executable, "-c", "pass"]))
        rows["GET ping"].append(_ping(url, target["token"]))
        add("GET ping (process)", _timed([sys.executable, "-c", ping_process]))
        add("hook startup", _hook(env, f"bench-{run}", "startup", timeout))
        add("hook resume", _hook(env, f"bench-{run}", "resume", timeout))
        if other is not None:
            for source in ("startup", "resume"):
                add(f"hook {source} ({also})", _hook(other, f"bench-other-{run}", source, timeout))
    if server is not None:
        stop(server)
        port = urlsplit(url).port
        for run in range(runs):
            add("hook down", _hook(env, f"bench-{run}", "compact", timeout))
        with socket.socket() as silent:
            silent.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            silent.bind((HOST, port))
            silent.listen(64)
            for run in range(max(3, runs // 4)):
                add("hook slow", _hook(env, f"bench-{run}", "compact", timeout))
    return rows, cpu


def report(rows: dict[str, list[float]], cpu: dict[str, list[float]], timeout: float) -> bool:
    width = max(22, *(len(name) + 2 for name in rows))
    print(f"{'':{width}}{'runs':>6}{'p50 ms':>10}{'p90 ms':>10}{'CPU p50 ms':>12}")
    for name, values in rows.items():
        used = f"{_ms(cpu[name], 0.5):>12.1f}" if name in cpu else f"{'-':>12}"
        wall = f"{_ms(values, 0.5):>10.1f}{_ms(values, 0.9):>10.1f}"
        print(f"{name:{width}}{len(values):>6}{wall}{used}")
    p50 = {name: statistics.median(values) for name, values in rows.items()}
    floor = p50["python -c pass"] + p50["GET ping"]
    ok = True
    hooks = [name for name in rows if name.startswith(("hook startup", "hook resume"))]
    for name in [name for name in hooks if name in cpu]:
        ratio = p50[name] / floor
        ok = ok and (ratio <= 3 or name not in ("hook startup", "hook resume"))
        cpu_ratio = statistics.median(cpu[name]) / statistics.median(cpu["python -c pass"])
        print(
            f"{name} / (python -c pass + GET ping): {ratio:.2f}x (target <= 3x; against the "
            f"ping process: {p50[name] / (p50['python -c pass'] + p50['GET ping (process)']):.2f}x;"
            f" CPU {cpu_ratio:.2f}x python -c pass's)"
        )
    for name in ("hook down", "hook slow"):
        if name in rows:
            worst = max(rows[name])
            ok = ok and worst <= timeout + 0.2
            print(
                f"{name}: p50 {p50[name]:.2f} s, worst {worst:.2f} s "
                f"(target <= --timeout {timeout:g} + 0.2 s)"
            )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="rounds (20)")
    parser.add_argument("--timeout", type=float, default=3.0, help="the hook's --timeout (3)")
    parser.add_argument("--url", help="an agentdocs server to use instead of starting one")
    parser.add_argument("--token", default=os.environ.get("AGENTDOCS_TOKEN"))
    parser.add_argument("--tenant")
    parser.add_argument("--project")
    parser.add_argument(
        "--also",
        type=Path,
        metavar="DIR",
        help="another checkout of agentdocs whose hook is timed in the same rounds",
    )
    parser.add_argument(
        "--no-bytecode",
        dest="bytecode",
        action="store_false",
        help="the hook compiles agentdocs from source at every start",
    )
    args = parser.parse_args(argv)
    load_before = load_average()
    if args.url:
        if not (args.token and args.tenant and args.project):
            parser.error("--url needs --token (or AGENTDOCS_TOKEN), --tenant and --project")
        local_only(args.url)
        target = {
            "url": args.url,
            "token": args.token,
            "tenant": args.tenant,
            "project": args.project,
        }
        rows = measure(target, args.runs, args.timeout, bytecode=args.bytecode, also=args.also)
        ok = report(*rows, args.timeout)
    else:
        with tempfile.TemporaryDirectory(prefix="agentdocs-bench-hook-") as folder:
            env = app_environment(f"sqlite:///{Path(folder) / 'bench.sqlite3'}", redis_url=None)
            seeded = migrate_and_seed(env)
            server, port = serve(env, seeded["token"], workers=1)
            target = {"url": f"http://{HOST}:{port}", **seeded}
            print(f"gunicorn (1 sync worker, SQLite) on {target['url']}")
            try:
                rows = measure(
                    target, args.runs, args.timeout, server, bytecode=args.bytecode, also=args.also
                )
                ok = report(*rows, args.timeout)
            finally:
                stop(server)
    print(f"load average at the start {load_before}, now {load_average()}")
    print("every target met" if ok else "a target was missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

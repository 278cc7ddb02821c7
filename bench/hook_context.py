"""`agentdocs hook context`'s wall time against a running server, beside the floor it
sits on: `python -c pass` and a plain HTTP GET of `/api/v1/ping` (both a process of their
own), in the same run. The target (docs/delivery.md): p50 at most 3x that pair's sum with
the server up, and within `--timeout` plus 0.2 s with it down.

    AGENTDOCS_URL=... AGENTDOCS_TOKEN=... AGENTDOCS_TENANT=acme AGENTDOCS_PROJECT=web \
        python bench/hook_context.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def _timed(argv: list[str], *, stdin: bytes = b"", env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    url = os.environ["AGENTDOCS_URL"].rstrip("/")
    cache = tempfile.mkdtemp(prefix="agentdocs-bench-")
    env = {**os.environ, "AGENTDOCS_CACHE_DIR": cache}
    ping = f"import requests; requests.get({url + '/api/v1/ping'!r}, timeout=5)"
    rows: dict[str, list[float]] = {"python -c pass": [], "GET ping": [], "hook up": []}
    for run in range(args.runs):
        rows["python -c pass"].append(_timed([sys.executable, "-c", "pass"]))
        rows["GET ping"].append(_timed([sys.executable, "-c", ping]))
        stdin = json.dumps(
            {"session_id": f"bench-{run}", "hook_event_name": "SessionStart", "source": "startup"}
        ).encode()
        hook = [sys.executable, "-m", "agentdocs.cli", "hook", "context", "--tool", "claude-code"]
        rows["hook up"].append(_timed(hook, stdin=stdin, env=env))
    down = {**env, "AGENTDOCS_URL": "http://127.0.0.1:9"}
    rows["hook down"] = [
        _timed(hook, stdin=b'{"session_id": "bench-down"}', env=down) for _ in range(args.runs)
    ]
    p50 = {name: statistics.median(times) for name, times in rows.items()}
    for name, value in p50.items():
        print(f"{name:16} p50 {value * 1000:7.1f} ms")
    floor = p50["python -c pass"] + p50["GET ping"]
    print(f"hook up / floor: {p50['hook up'] / floor:.2f}x (target <= 3x)")
    print(f"hook down: {p50['hook down']:.2f} s (target <= timeout + 0.2 s)")


if __name__ == "__main__":
    main()

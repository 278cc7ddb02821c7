"""Measure the secret check on hostile bodies against an ordinary one of the same size.

Every write runs `agentdocs.secrets.find_secret` over the whole body (at most
256 KiB), so a body shaped to make a pattern backtrack would cost the server
CPU on every attempt. This prints, for ordinary prose and for bodies built to
stress each pattern, the median time of a scan and its ratio to the prose's.
Every ratio should stay small and constant as the size grows: a ratio that
grows with the size means a pattern has gone quadratic.

    .venv/bin/python bench/secret_scan.py [--repeat 5]

Plain Python, no database. It is a measurement, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentdocs.secrets import find_secret

MAX_BODY = 256 * 1024

HOSTILE = {
    "prose": "The deploy checklist lives in docs/deploy.md; ask in #ops first.\n",
    "one long word": "x",
    "a_a_a_ (names)": "a_",
    "token_token_": "token_",
    "a.a.a. (schemes)": "a.",
    "a:a:a: (user:password)": "a:",
    "password=password=": "password=",
    "eyJ. (JWT)": "eyJaaaaaaaaa.",
    "Authorization: Bearer ": "Authorization: Bearer ",
}


def scan_ms(body: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        find_secret(body)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="scans per body (5)")
    args = parser.parse_args(argv)
    sizes = (MAX_BODY // 4, MAX_BODY)
    baseline = {size: scan_ms((HOSTILE["prose"] * size)[:size], args.repeat) for size in sizes}
    print(
        f"{'body':<26}" + "".join(f"{f'{size // 1024} KiB ms':>12}{'ratio':>8}" for size in sizes)
    )
    for name, unit in HOSTILE.items():
        row = f"{name:<26}"
        for size in sizes:
            took = scan_ms((unit * (size // len(unit) + 1))[:size], args.repeat)
            row += f"{took:>12.1f}{took / baseline[size]:>8.1f}"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())

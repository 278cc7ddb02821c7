"""Measure the work a hostile document costs the server against an ordinary one.

Any writer chooses a body of up to 256 KiB, and the server then scans it for
secrets on every write, diffs it against other versions on the history, revert
and conflict pages, and renders its Markdown on the document page. A body
shaped to make one of those go quadratic would tie up a worker. For each, this
prints the median time on ordinary text and on bodies built to stress it, and
their ratio: ratios should stay small, and not grow with the size.

    .venv/bin/python bench/hostile_input.py [--repeat 5]

No database. It is a measurement, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django

django.setup()

from agentdocs.api.parsers import refuse_unstorable_text  # noqa: E402
from agentdocs.core.diffs import diff_texts  # noqa: E402
from agentdocs.core.secret_scan import find_secret  # noqa: E402
from agentdocs.web.markdown import render_markdown  # noqa: E402

MAX_BODY = 256 * 1024

HOSTILE = {
    "prose": "The deploy checklist lives in docs/deploy.md; ask in #ops first.\n",
    "one long word": "x",
    "a_a_a_ (names)": "a_",
    "token_token_": "token_",
    "a.a.a. (schemes)": "a.",
    "a:a:a: (user:password)": "a:",
    "password=password=": "password=",
    "password:password: (YAML)": "password:",
    "pwd:pwd:": "pwd:",
    "token=token=": "token=",
    "x_token:x_token:": "x_token:",
    "eyJ. (JWT)": "eyJaaaaaaaaa.",
    "eyJ-eyJ- (JWT in a run)": "eyJ-",
    ": str = (annotations)": ": str = ",
    "A_PASSWORD_ (env names)": "A_PASSWORD_",
    "Authorization: Bearer ": "Authorization: Bearer ",
}


def median_ms(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def scan_ms(body: str, repeat: int) -> float:
    return median_ms(lambda: find_secret(body), repeat)


def _lines(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _paragraphs(count: int) -> list[str]:
    return [line for n in range(count) for line in (f"Paragraph {n} says something.", "")]


# Version pairs to diff: (old, new), about 13 to 80 KB each.
DIFFS = {
    "prose, 60 paragraphs edited": (
        _lines(_paragraphs(3000)),
        _lines([("Edited." if n % 100 == 0 else s) for n, s in enumerate(_paragraphs(3000))]),
    ),
    "checklist, 1,200 equal lines": (
        _lines(["- [ ] check"] * 1200),
        _lines([("- [x] check" if n % 3 == 0 else "- [ ] check") for n in range(1200)]),
    ),
    "every other line changed, 20,000": (
        _lines([line for n in range(10000) for line in (f"kept {n}", f"old {n}")]),
        _lines([line for n in range(10000) for line in (f"kept {n}", f"new {n}")]),
    ),
    "10,000 lines of 100 values": (
        _lines([f"item {n % 100}" for n in range(10000)]),
        _lines([("changed" if n % 37 == 0 else f"item {n % 100}") for n in range(10000)]),
    ),
}

MARKDOWN = {
    "prose": "A paragraph with *emphasis*, `code` and a [link](https://example.com).\n\n",
    "[[[ (links)": "[",
    "_*_* (emphasis)": "_*",
    "> > > (quotes)": "> ",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (5)")
    args = parser.parse_args(argv)
    sizes = (MAX_BODY // 4, MAX_BODY)
    baseline = {size: scan_ms((HOSTILE["prose"] * size)[:size], args.repeat) for size in sizes}
    columns = "".join(f"{f'{size // 1024} KiB ms':>12}{'ratio':>8}" for size in sizes)
    print(f"{'secret scan':<26}{columns}")
    for name, unit in HOSTILE.items():
        row = f"{name:<26}"
        for size in sizes:
            took = scan_ms((unit * (size // len(unit) + 1))[:size], args.repeat)
            row += f"{took:>12.1f}{took / baseline[size]:>8.1f}"
        print(row)

    print(f"\n{'diff of two versions':<34}{'ms':>8}{'ratio':>8}")
    baseline_diff = None
    for name, (old, new) in DIFFS.items():
        took = median_ms(lambda old=old, new=new: diff_texts(old, new), args.repeat)
        baseline_diff = baseline_diff or took
        print(f"{name:<34}{took:>8.1f}{took / baseline_diff:>8.1f}")

    size = 64 * 1024
    print(f"\n{'Markdown, 64 KiB, first render':<34}{'ms':>8}{'ratio':>8}")
    baseline_md = None
    for name, unit in MARKDOWN.items():
        body = (unit * (size // len(unit) + 1))[:size]
        took = median_ms(lambda body=body: render_markdown(body, cached=False), args.repeat)
        baseline_md = baseline_md or took
        print(f"{name:<34}{took:>8.1f}{took / baseline_md:>8.1f}")
    cached = median_ms(lambda: render_markdown(body), args.repeat)
    print(f"{'the last, from the cache':<34}{cached:>8.2f}")

    # The API's parsers check every string of a JSON body (up to Django's 2.5 MB).
    print(f"\n{'JSON body check, about 2 MB':<34}{'ms':>8}{'MiB':>8}")
    for name, data in {
        "a document body": {"body": "x" * 2_000_000, "reason": "r"},
        "one long key over a long list": {"k" * 1_000_000: [0] * 500_000},
        "100,000 small members": {f"key{n}": "value" for n in range(100_000)},
    }.items():
        took = median_ms(lambda data=data: refuse_unstorable_text(data), args.repeat)
        tracemalloc.start()  # a separate run: tracing slows it down tenfold
        refuse_unstorable_text(data)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"{name:<34}{took:>8.1f}{peak:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

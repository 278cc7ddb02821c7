"""Measure the secret check: false alarms on real agent documents, catches on known formats.

Runs the check over every document of the corpus in tests/data/secret_scan/corpus/
(public agent documents, see SOURCES.md there) and over the labelled set in
tests/data/secret_scan/labelled.py, and prints:

- documents, and how many the check refused (false alarms: none holds a secret),
- positives caught out of the labelled positives, and the rate,
- placeholders refused out of the labelled negatives,
- the scan time per MiB of corpus text (median of --repeat runs),
- the scan time of three 256 KiB bodies (the largest a write may be): English agent
  documents, agent documents in Persian, Japanese, Hindi and emoji, and a line with a
  zero-width space repeated (every line is then read again as a reader sees it).

    .venv/bin/python bench/secret_scan.py [--repeat 5] [--show]

No database, no Django. It is a measurement, not a test: it asserts nothing
(tests/core/test_secret_scan.py holds the thresholds).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentdocs.core.secret_scan import find_secret  # noqa: E402

DATA = ROOT / "tests" / "data" / "secret_scan"


def load_labelled():
    spec = importlib.util.spec_from_file_location("secret_scan_labelled", DATA / "labelled.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def corpus() -> list[tuple[str, str]]:
    return [
        (path.name, path.read_bytes().decode("utf-8"))
        for path in sorted((DATA / "corpus").iterdir())
        if path.is_file()
    ]


LARGE = 256 * 1024
MULTILINGUAL = (
    "## قواعد\n- پیش از ادغام، آزمون\u200cها را اجرا کنید.\n"
    "- テストを実行してからマージしてください（ＣＩ必須）。\n"
    "- मर्ज करने से पहले परीक्षण चलाएँ। 🚀👩\u200d💻\n"
)


def _sized(text: str) -> str:
    """``text`` repeated to 256 KiB of UTF-8 (whole characters)."""
    body = text * (LARGE // len(text.encode("utf-8")) + 1)
    return body.encode("utf-8")[:LARGE].decode("utf-8", errors="ignore")


def large_bodies(documents: list[tuple[str, str]]) -> dict[str, str]:
    english = "".join(text for _, text in documents)
    return {
        "English": _sized(english),
        "multilingual": _sized(MULTILINGUAL + english[:4000]),
        "zero-width lines": _sized("- Run the tests\u200b before merging.\n"),
    }


def _median_ms(text: str, repeat: int) -> float:
    runs = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        find_secret(text)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--show", action="store_true", help="name each false alarm and miss")
    args = parser.parse_args()

    documents = corpus()
    alarms = [(name, finding) for name, text in documents if (finding := find_secret(text))]
    labelled = load_labelled()
    missed = [case for case in labelled.POSITIVES if find_secret(case.text) is None]
    refused = [case for case in labelled.NEGATIVES if find_secret(case.text) is not None]
    caught = len(labelled.POSITIVES) - len(missed)

    size = sum(len(text.encode("utf-8")) for _, text in documents)
    runs = []
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        for _, text in documents:
            find_secret(text)
        runs.append(time.perf_counter() - start)
    per_mib = statistics.median(runs) / (size / 2**20) * 1000

    print(f"documents                {len(documents)} ({size / 1024:.0f} KiB)")
    print(f"false alarms             {len(alarms)}")
    print(f"positives caught         {caught} / {len(labelled.POSITIVES)}")
    print(f"catch rate               {caught / len(labelled.POSITIVES):.1%}")
    print(f"placeholders refused     {len(refused)} / {len(labelled.NEGATIVES)}")
    print(f"scan time                {per_mib:.1f} ms per MiB")
    for name, text in large_bodies(documents).items():
        print(f"256 KiB {name:16} {_median_ms(text, args.repeat):.1f} ms")
    if args.show:
        for name, finding in alarms:
            print(f"false alarm: {name} line {finding.line}: {finding.kind}")
        for case in missed:
            print(f"missed: {case.name}")
        for case in refused:
            print(f"placeholder refused: {case.name}")


if __name__ == "__main__":
    main()

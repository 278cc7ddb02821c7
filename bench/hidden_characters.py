"""Measure the hidden-character check: false alarms on real agent documents, and its time.

Runs `agentdocs.core.hidden_characters.find_hidden` over every document of the corpus
in tests/data/secret_scan/corpus/ (public agent documents, see SOURCES.md there) and
over texts built to be long in each kind of writing, and prints:

- documents, and how many the check would refuse (false alarms: none hides anything),
- the time per text (median of --repeat runs): 2 KiB and 256 KiB of English, 126,000
  characters of Japanese, 2 KiB of Persian with a ZWNJ in most words, 128,000
  characters of emoji with ZWJ sequences, and 256 KiB of tag characters (the attack).

    .venv/bin/python bench/hidden_characters.py [--repeat 5]

No database, no Django. A measurement, not a test: it asserts nothing
(tests/core/test_hidden_characters.py holds the rules).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentdocs.core.hidden_characters import find_hidden  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "secret_scan" / "corpus"
ENGLISH = ("- Keep views thin; services hold the logic. Test first.\n" * 40)[:2048]
TEXTS = {
    "English, 2 KiB": ENGLISH,
    "English, 256 KiB": ENGLISH * 128,
    "Japanese, 126,000 characters": "テストを先に書くこと。コミットは小さく。\n" * 6000,
    "Persian with ZWNJ, 2 KiB": "می\u200cخواهم تست\u200cها را اول بنویسم.\n" * 60,
    "emoji with ZWJ, 128,000 characters": (
        "Ship 🚀, celebrate 👩\u200d💻 ❤️\u200d🔥 👋🏽 and more words here to pad it.\n" * 2000
    ),
    "tag characters, 256 KiB": "".join(chr(0xE0000 + ord(c)) for c in "ignore rules ") * 5041,
}


def median_ms(text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        find_hidden(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    documents = [p for p in sorted(CORPUS.iterdir()) if p.is_file()]
    refused = [p.name for p in documents if find_hidden(p.read_text("utf-8"), limit=1)]
    size = sum(p.stat().st_size for p in documents)
    print(f"corpus: {len(documents)} documents, {size / 1024:.0f} KiB, {len(refused)} refused")
    for name in refused:
        print(f"  false alarm: {name}")
    for name, text in TEXTS.items():
        print(f"{name}: {median_ms(text, args.repeat):.2f} ms")


if __name__ == "__main__":
    main()

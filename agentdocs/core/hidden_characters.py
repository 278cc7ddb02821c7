"""Characters a reader cannot see but a model reads: bidi controls, zero-width
characters, Unicode tags, variation selectors out of place, the invisible look-alikes
of a space, and the other invisible format and control characters.

Documents go verbatim into agents' system prompts, so text that displays one way and
reads another ("Rules File Backdoor": a bidi override that reverses a line, tag
characters that spell an instruction nobody sees) must be found before it is stored.
What ordinary writing needs is left alone:

- a ZERO WIDTH (NON-)JOINER between letters of a script that uses them (Persian and
  the other Arabic-script languages, the Indic scripts, Sinhala, Tibetan, Myanmar,
  Khmer, Mongolian, Syriac, Thaana, N'Ko, Hebrew);
- a ZERO WIDTH JOINER inside an emoji sequence (👩‍💻);
- the tag characters of the emoji tag sequences Unicode defines, and only those: the
  flags of England, Scotland and Wales (🏴 + `gbeng`, `gbsct` or `gbwls` in tags +
  CANCEL TAG, the `RGI_Emoji_Tag_Sequence` lines of emoji-sequences.txt). Any other
  run of tags spells ASCII a model reads and nobody sees;
- a variation selector right after a base it is defined for: the standardized
  variation sequences (StandardizedVariants.txt) and the emoji variation sequences
  (emoji-variation-sequences.txt), shipped in `agentdocs/core/unicode_data/` (❤️,
  ☺︎, the keycap `#️⃣`, a CJK compatibility ideograph's form). Two families are read
  by a rule instead of a list:

  - an ideographic variation selector (U+E0100-E01EF) after a CJK unified ideograph
    (葛󠄀). These are the Ideographic Variation Database's sequences, which Japanese
    names and place names in registries use; the database is open to new
    registrations and tens of thousands of lines long, every one of its bases is a
    unified ideograph, and a selector there can carry at most one byte per visible
    ideograph, which is no channel into a Latin-script instruction;
  - a Mongolian free variation selector (U+180B-180D, U+180F) after a Mongolian
    letter. Which letter takes which selector in which position has been redrawn
    between Unicode versions (FVS4 has no entry in 15.0's list at all), and text is
    written against the fonts people have; a selector still needs a visible
    Mongolian letter before it, and there are four of them.

  A selector anywhere else (after a Latin letter, after another selector, at the
  start) selects nothing a reader sees: 256 values, one hidden byte per letter;
- the MONGOLIAN VOWEL SEPARATOR between a Mongolian letter and the final A or E it
  separates, its one use;
- a combining grapheme joiner between combining marks, and a Hangul filler inside a
  conjoining jamo syllable;
- a BRAILLE PATTERN BLANK between braille cells (a space in braille text); elsewhere
  it is a blank that is not white space, like the Hangul fillers and the musical
  null notehead, and is counted;
- a byte order mark at the very start of the text;
- the prepended concatenation marks (U+0600-0605 and kin), which are visible.

`find_hidden(text)` lists each hidden character with its line, column and name;
`visible_text(text)` is the text with every invisible character removed and NFKC
applied, which is what the secret check reads so that a zero-width character cannot
split a key.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from importlib import resources

from agentdocs.core.errors import HiddenCharacterData, HiddenCharacters

CGJ = 0x034F
ZWNJ = 0x200C
ZWJ = 0x200D
BOM = 0xFEFF
WAVING_BLACK_FLAG = 0x1F3F4
CANCEL_TAG = 0xE007F

# Every character that may be hidden: the format characters (category Cf, as of
# Unicode 15.1: a test checks the running Python's tables against this list), the
# controls but tab, line feed and carriage return, the line and paragraph separators,
# the Hangul fillers, the braille blank and the musical null notehead, which draw
# nothing and are not white space, the variation selectors, and the other
# default-ignorable code points, which a renderer draws as nothing (the combining
# grapheme joiner, the Khmer inherent vowels, the Mongolian free variation selectors,
# and the unassigned ones around the format characters and in plane 14, where the
# tags are).
_CANDIDATE_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x0008),
    (0x000B, 0x000C),
    (0x000E, 0x001F),
    (0x007F, 0x009F),
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x206F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFFB),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D159, 0x1D159),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)

# Format characters that are visible: the prepended concatenation marks.
VISIBLE_FORMAT_CHARACTERS = frozenset({0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD})
VISIBLE_FORMAT_CHARACTERS |= {0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD}


def _character_class(ranges: tuple[tuple[int, int], ...]) -> str:
    parts = []
    for first, last in ranges:
        parts.append(re.escape(chr(first)))
        if last > first:
            parts.append("-" + re.escape(chr(last)))
    return "[" + "".join(parts) + "]"


_CANDIDATE = re.compile(_character_class(_CANDIDATE_RANGES))

# What the scan looks for: the candidates of the Basic Multilingual Plane, and any
# character beyond it, which is then looked up in the list. A class of BMP ranges only
# is a table lookup per character for the regex engine, several times faster than
# comparing each character with every range (documents are read on every render).
_ASTRAL_CANDIDATES = tuple((first, last) for first, last in _CANDIDATE_RANGES if last > 0xFFFF)
_SCAN = re.compile(
    _character_class(tuple(r for r in _CANDIDATE_RANGES if r[1] <= 0xFFFF))
    + "|[\U00010000-\U0010ffff]"
)
_LAST_SMP_CANDIDATE = max(last for _, last in _ASTRAL_CANDIDATES if last < 0xE0000)
_FIRST_SSP_CANDIDATE = min(first for first, _ in _ASTRAL_CANDIDATES if first >= 0xE0000)
# Printable ASCII and the three line characters: an ASCII text of nothing else holds
# nothing hidden, which bytes.translate says at memory speed.
_PLAIN_ASCII = bytes([0x09, 0x0A, 0x0D, *range(0x20, 0x7F)])

# Scripts whose writing uses ZWJ and ZWNJ between letters.
_JOINING_SCRIPTS: tuple[tuple[int, int], ...] = (
    (0x0590, 0x05FF),  # Hebrew
    (0x0600, 0x06FF),  # Arabic (Persian, Urdu, Kurdish, ...)
    (0x0700, 0x074F),  # Syriac
    (0x0750, 0x077F),  # Arabic Supplement
    (0x0780, 0x07BF),  # Thaana
    (0x07C0, 0x07FF),  # N'Ko
    (0x0870, 0x08FF),  # Arabic Extended-B and -A
    (0x0900, 0x0DFF),  # Devanagari to Sinhala: the Indic scripts
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x18AF),  # Khmer, Mongolian
    (0x1CD0, 0x1CFF),  # Vedic Extensions
    (0xA8E0, 0xA8FF),  # Devanagari Extended
    (0xA9E0, 0xA9FF),  # Myanmar Extended-B
    (0xAA60, 0xAA7F),  # Myanmar Extended-A
    (0xFB1D, 0xFDFF),  # Hebrew and Arabic presentation forms
    (0xFE70, 0xFEFE),  # Arabic Presentation Forms-B
    (0x10E60, 0x10E7F),  # Rumi numerals (Arabic script)
    (0x11000, 0x111FF),  # Brahmi, Kaithi, Sora Sompeng, Chakma, Mahajani, Sharada
    (0x11200, 0x114DF),  # Khojki to Tirhuta
    (0x11580, 0x116CF),  # Siddham, Modi, Takri
    (0x1EE00, 0x1EEFF),  # Arabic Mathematical Alphabetic Symbols
)

# Where emoji are: the pictographic blocks, the arrows, symbols and dingbats with
# emoji presentations, and the few older symbols (©, ®, ‼, ™, ...).
_EMOJI: tuple[tuple[int, int], ...] = (
    (0x00A9, 0x00A9),
    (0x00AE, 0x00AE),
    (0x203C, 0x203C),
    (0x2049, 0x2049),
    (0x2122, 0x2122),
    (0x2139, 0x2139),
    (0x2194, 0x21AA),
    (0x231A, 0x23FF),
    (0x24C2, 0x24C2),
    (0x25AA, 0x25FE),
    (0x2600, 0x27BF),
    (0x2934, 0x2935),
    (0x2B05, 0x2B55),
    (0x3030, 0x3030),
    (0x303D, 0x303D),
    (0x3297, 0x3299),
    (0x1F000, 0x1FAFF),
)
_KEYCAP = 0x20E3
_TAG_SPEC_FIRST, _TAG_SPEC_LAST = 0xE0020, 0xE007E
# The emoji tag sequences Unicode recommends (RGI_Emoji_Tag_Sequence in
# emoji-sequences.txt, Unicode 15.0): the flags of England, Scotland and Wales. No
# other subdivision flag is displayed as one, so no other tag spec is writing.
SUBDIVISION_FLAGS = frozenset({"gbeng", "gbsct", "gbwls"})
_LONGEST_TAG_SPEC = max(len(spec) for spec in SUBDIVISION_FLAGS)

# Where the Ideographic Variation Database's sequences are: the CJK unified ideographs
# (the blocks and extensions A to H) and the selectors of plane 14.
_CJK_UNIFIED_IDEOGRAPHS: tuple[tuple[int, int], ...] = (
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2EBEF),
    (0x30000, 0x323AF),
)
_IDEOGRAPHIC_SELECTORS = (0xE0100, 0xE01EF)
_MONGOLIAN_LETTERS = (0x1820, 0x18AA)
_MONGOLIAN_FREE_SELECTORS = frozenset({0x180B, 0x180C, 0x180D, 0x180F})
MONGOLIAN_VOWEL_SEPARATOR = 0x180E
BRAILLE_BLANK = 0x2800
_BRAILLE = (0x2800, 0x28FF)

# The Unicode data files the variation sequences are read from (their license header
# kept): the package ships them, nothing is fetched.
_UNICODE_DATA_FILES = ("StandardizedVariants.txt", "emoji-variation-sequences.txt")


class _RangeTable:
    """Sorted, non-overlapping ranges of code points, looked up by bisection."""

    def __init__(self, ranges: tuple[tuple[int, int], ...]) -> None:
        self.ranges = ranges
        self.starts = [first for first, _ in ranges]

    def __contains__(self, code_point: int) -> bool:
        at = bisect_right(self.starts, code_point) - 1
        return at >= 0 and code_point <= self.ranges[at][1]


_IN_JOINING_SCRIPT = _RangeTable(_JOINING_SCRIPTS)
_IN_EMOJI = _RangeTable(_EMOJI)
_IN_ASTRAL_CANDIDATES = _RangeTable(_ASTRAL_CANDIDATES)
_IN_CJK_UNIFIED = _RangeTable(_CJK_UNIFIED_IDEOGRAPHS)


def parse_variation_sequences(data: str) -> set[tuple[int, int]]:
    """The (base, selector) pairs of a Unicode data file of variation sequences: each
    line not a comment starts `BASE SELECTOR;` in hexadecimal."""
    pairs: set[tuple[int, int]] = set()
    for line in data.splitlines():
        fields = line.split("#", 1)[0].split(";", 1)[0].split()
        if len(fields) == 2:
            pairs.add((int(fields[0], 16), int(fields[1], 16)))
    return pairs


@functools.cache
def variation_sequences() -> frozenset[tuple[int, int]]:
    """Every (base, selector) pair the shipped Unicode data defines, read once (on the
    first selector a text holds: a text without any never reads the files)."""
    folder = resources.files("agentdocs.core").joinpath("unicode_data")
    pairs: set[tuple[int, int]] = set()
    for name in _UNICODE_DATA_FILES:
        pairs |= parse_variation_sequences(folder.joinpath(name).read_text("utf-8"))
    return frozenset(pairs)


def _is_variation_selector(code_point: int) -> bool:
    return 0xFE00 <= code_point <= 0xFE0F or 0xE0100 <= code_point <= 0xE01EF


def _joining_letter(character: str) -> bool:
    return unicodedata.category(character)[0] in "LM" and ord(character) in _IN_JOINING_SCRIPT


def _emoji_part(character: str) -> bool:
    code_point = ord(character)
    return code_point in (0xFE0F, _KEYCAP, CANCEL_TAG) or code_point in _IN_EMOJI


@dataclass(frozen=True)
class HiddenCharacter:
    """One hidden character: where it is (1-based line and column, counted in
    characters) and which it is."""

    offset: int
    line: int
    column: int
    code_point: int

    @property
    def name(self) -> str:
        return character_name(self.code_point)

    @property
    def label(self) -> str:
        """`U+202E RIGHT-TO-LEFT OVERRIDE`."""
        return f"U+{self.code_point:04X} {self.name}"


_CONTROL_NAMES = {0x1B: "ESCAPE", 0x7F: "DELETE", 0x85: "NEXT LINE"}


def character_name(code_point: int) -> str:
    """The character's Unicode name; a control character and an unassigned code point
    have none, so they are named as what they are."""
    name = unicodedata.name(chr(code_point), "")
    if name:
        return name
    if unicodedata.category(chr(code_point)) == "Cn":
        return "UNASSIGNED CODE POINT"
    return _CONTROL_NAMES.get(code_point, "CONTROL CHARACTER")


def _allowed(text: str, index: int, code_point: int) -> bool:
    """Whether the candidate at ``index`` is part of ordinary writing (see the module's
    docstring)."""
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    if code_point in VISIBLE_FORMAT_CHARACTERS:
        return True
    if code_point == BOM:
        return index == 0
    if code_point in (ZWJ, ZWNJ):
        if before and after and _joining_letter(before) and _joining_letter(after):
            return True
        return (
            code_point == ZWJ
            and bool(before and after)
            and _emoji_part(before)
            and ord(after) in _IN_EMOJI
        )
    if _is_variation_selector(code_point):
        return bool(before) and _selects_a_form_of(ord(before), code_point)
    if 0xE0020 <= code_point <= CANCEL_TAG:
        return _in_subdivision_flag(text, index)
    if code_point == CGJ:
        # Between combining marks (after a letter or a mark), it keeps them from being
        # reordered: Hebrew and other texts' ordinary use.
        return (
            bool(before and after)
            and unicodedata.category(before)[0] in "LM"
            and unicodedata.category(after)[0] == "M"
        )
    if code_point in _MONGOLIAN_FREE_SELECTORS:
        # A Mongolian free variation selector, right after the letter it selects.
        return bool(before) and _is_mongolian_letter(ord(before))
    if code_point == MONGOLIAN_VOWEL_SEPARATOR:
        # Between a letter and the final A or E it separates from the word.
        return bool(before and after) and _is_mongolian_letter(ord(before)) and after in "ᠠᠡ"
    if code_point == BRAILLE_BLANK:
        # A space between braille cells (blank ones included: a run of spaces).
        return bool(before and after) and all(
            _BRAILLE[0] <= ord(c) <= _BRAILLE[1] for c in (before, after)
        )
    if code_point in (0x115F, 0x1160):
        # Hangul fillers stand in for a missing jamo inside a conjoining syllable.
        return any(0x1100 <= ord(c) <= 0x11FF for c in (before, after) if c)
    return False


def _is_mongolian_letter(code_point: int) -> bool:
    return _MONGOLIAN_LETTERS[0] <= code_point <= _MONGOLIAN_LETTERS[1]


def _selects_a_form_of(base: int, selector: int) -> bool:
    """Whether ``selector`` after ``base`` is a variation sequence Unicode defines, or an
    ideographic one (see the module's docstring)."""
    ideographic = _IDEOGRAPHIC_SELECTORS[0] <= selector <= _IDEOGRAPHIC_SELECTORS[1]
    if ideographic and base in _IN_CJK_UNIFIED:
        return True
    return (base, selector) in variation_sequences()


def _is_tag_spec(character: str) -> bool:
    return _TAG_SPEC_FIRST <= ord(character) <= _TAG_SPEC_LAST


def _in_subdivision_flag(text: str, index: int) -> bool:
    """Whether the tag character at ``index`` belongs to 🏴 + one of the
    `SUBDIVISION_FLAGS` in tags + CANCEL TAG.

    Each scan stops past the longest flag's spec: a longer run is no flag, and a text
    of nothing but tags would otherwise cost the square of its length."""
    start = index
    floor = max(0, index - _LONGEST_TAG_SPEC)
    while start > floor and _is_tag_spec(text[start - 1]):
        start -= 1
    if start == 0 or ord(text[start - 1]) != WAVING_BLACK_FLAG:
        return False
    end = start
    ceiling = min(len(text), start + _LONGEST_TAG_SPEC + 1)
    while end < ceiling and _is_tag_spec(text[end]):
        end += 1
    if end >= len(text) or ord(text[end]) != CANCEL_TAG or index > end:
        return False
    spec = "".join(chr(ord(character) - 0xE0000) for character in text[start:end])
    return spec in SUBDIVISION_FLAGS


def find_hidden(text: str, *, limit: int | None = None) -> list[HiddenCharacter]:
    """Every hidden character of ``text`` in order (at most ``limit`` of them)."""
    found: list[HiddenCharacter] = []
    if text.isascii() and not text.encode("ascii").translate(None, _PLAIN_ASCII):
        return found
    line_starts: list[int] | None = None
    for match in _SCAN.finditer(text):
        index = match.start()
        code_point = ord(match.group())
        # Emoji, the usual characters past the BMP, lie between the candidates there.
        if code_point > 0xFFFF and (
            _LAST_SMP_CANDIDATE < code_point < _FIRST_SSP_CANDIDATE
            or code_point not in _IN_ASTRAL_CANDIDATES
        ):
            continue
        if _allowed(text, index, code_point):
            continue
        if line_starts is None:
            line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        line = bisect_right(line_starts, index)
        found.append(HiddenCharacter(index, line, index - line_starts[line - 1] + 1, code_point))
        if limit is not None and len(found) >= limit:
            break
    return found


def has_hidden(text: str) -> bool:
    return bool(find_hidden(text, limit=1))


def count_hidden(text: str) -> int:
    return len(find_hidden(text))


def describe(found: list[HiddenCharacter], *, shown: int = 5) -> str:
    """One sentence naming where the first few are and which they are."""
    places = "; ".join(
        f"line {item.line}, column {item.column}: {item.label}" for item in found[:shown]
    )
    more = len(found) - shown
    tail = f"; and {more} more" if more > 0 else ""
    noun = "character" if len(found) == 1 else "characters"
    return f"{len(found)} hidden {noun} that readers cannot see ({places}{tail})"


def visible_text(text: str) -> str:
    """``text`` without any invisible character, NFKC-normalized: what a reader sees,
    as the secret check must read it."""
    return unicodedata.normalize("NFKC", _CANDIDATE.sub("", text))


# At most this many hidden characters are listed in a refusal's body; `count` has all.
LISTED_IN_REFUSAL = 50


def as_data(
    found: list[HiddenCharacter], *, limit: int = LISTED_IN_REFUSAL
) -> list[HiddenCharacterData]:
    return [
        HiddenCharacterData(
            line=item.line,
            column=item.column,
            code_point=f"U+{item.code_point:04X}",
            name=item.name,
        )
        for item in found[:limit]
    ]


# What a refusal of a document's text tells the writer to do.
ACKNOWLEDGE_OR_REMOVE = (
    "It would go into prompts verbatim, so a model would read what nobody reviewing it "
    'sees: remove them, or, if they are intended, save with `"acknowledge_hidden": '
    '"intended"` and a reason.'
)


def refuse_hidden(
    text: str, *, field: str, what: str = "The text", remedy: str = ACKNOWLEDGE_OR_REMOVE
) -> None:
    """Raise HiddenCharacters (422, naming ``field``, the first one's line and column and
    each code point) if ``text`` holds a character a reader cannot see; ``remedy`` is
    the sentence that says why that matters and what to do."""
    found = find_hidden(text)
    if not found:
        return
    first = found[0]
    raise HiddenCharacters(
        f"{what} holds {describe(found)}. {remedy}",
        field=field,
        line=first.line,
        column=first.column,
        count=len(found),
        characters=as_data(found),
    )

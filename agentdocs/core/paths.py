"""Document paths: normalised relative POSIX paths, checked in one place.

A new path (and a provider name) must also be a name a reader cannot misread
(`validate_name`): no invisible or control character (400 `invalid_path`), and
nothing Unicode's confusable detection (UTS #39) flags (400 `confusable_path`).
Paths already stored stay readable: reads check only `validate_path`.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from typing import Any

from agentdocs.core.errors import ConfusablePath, InvalidInput, InvalidPath
from agentdocs.core.hidden_characters import character_name

MAX_PATH_LENGTH = 255
RESERVED_PREFIX = "_vance"

# Characters that render as nothing (or as nothing a reader notices) beside the
# format characters (Unicode category Cf, such as U+200B ZERO WIDTH SPACE), which
# are removed by category: the default-ignorable code points of other categories.
_INVISIBLE = frozenset(
    (
        *(0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0),
        *range(0x180B, 0x1810),  # Mongolian variation selectors, vowel separator
        *range(0xFE00, 0xFE10),  # variation selectors
        *range(0xE0100, 0xE01F0),  # variation selectors supplement
    )
)

# Look-alikes of the Latin letters (and the low line) that matter for `_vance`,
# after NFKC (which already folds fullwidth, mathematical and circled forms).
# Taken from Unicode's confusables.txt (UTS #39), restricted to these letters on
# purpose: a small table that can be read, instead of a full skeleton. Upper-case
# forms are listed because some fold to a different look-alike (Greek Ν -> ν).
_CONFUSABLES = str.maketrans(
    {
        # _
        "\u02cd": "_",  # MODIFIER LETTER LOW MACRON
        "\u2017": "_",  # DOUBLE LOW LINE
        "\u2581": "_",  # LOWER ONE EIGHTH BLOCK
        "\u0332": "_",  # COMBINING LOW LINE
        # v
        "\u0475": "v",  # CYRILLIC SMALL LETTER IZHITSA
        "\u0474": "v",  # CYRILLIC CAPITAL LETTER IZHITSA
        "\u03bd": "v",  # GREEK SMALL LETTER NU
        "\u1d20": "v",  # LATIN LETTER SMALL CAPITAL V
        "\u028b": "v",  # LATIN SMALL LETTER V WITH HOOK
        "\u2228": "v",  # LOGICAL OR
        "\u22c1": "v",  # N-ARY LOGICAL OR
        "\u05d8": "v",  # HEBREW LETTER TET
        "\u2d38": "v",  # TIFINAGH LETTER YADH
        # a
        "\u0430": "a",  # CYRILLIC SMALL LETTER A
        "\u0410": "a",  # CYRILLIC CAPITAL LETTER A
        "\u03b1": "a",  # GREEK SMALL LETTER ALPHA
        "\u0391": "a",  # GREEK CAPITAL LETTER ALPHA
        "\u0251": "a",  # LATIN SMALL LETTER ALPHA
        "\u237a": "a",  # APL FUNCTIONAL SYMBOL ALPHA
        "\u1d00": "a",  # LATIN LETTER SMALL CAPITAL A
        # n
        "\u0578": "n",  # ARMENIAN SMALL LETTER VO
        "\u057c": "n",  # ARMENIAN SMALL LETTER RA
        "\u039d": "n",  # GREEK CAPITAL LETTER NU
        "\u0274": "n",  # LATIN LETTER SMALL CAPITAL N
        # c
        "\u0441": "c",  # CYRILLIC SMALL LETTER ES
        "\u0421": "c",  # CYRILLIC CAPITAL LETTER ES
        "\u03f2": "c",  # GREEK LUNATE SIGMA SYMBOL
        "\u03f9": "c",  # GREEK CAPITAL LUNATE SIGMA SYMBOL
        "\u1d04": "c",  # LATIN LETTER SMALL CAPITAL C
        "\u217d": "c",  # SMALL ROMAN NUMERAL ONE HUNDRED
        "\u2ca5": "c",  # COPTIC SMALL LETTER SIMA
        # e
        "\u0435": "e",  # CYRILLIC SMALL LETTER IE
        "\u0415": "e",  # CYRILLIC CAPITAL LETTER IE
        "\u0395": "e",  # GREEK CAPITAL LETTER EPSILON
        "\u04bd": "e",  # CYRILLIC SMALL LETTER ABKHASIAN CHE
        "\u212e": "e",  # ESTIMATED SYMBOL
        "\u1d07": "e",  # LATIN LETTER SMALL CAPITAL E
        "\uab32": "e",  # LATIN SMALL LETTER BLACKLETTER E
    }
)


def invisible_in_name(character: str) -> bool:
    """Whether ``character`` may not be in a name: a format character (category Cf:
    bidi controls, zero-width characters, ZWJ and ZWNJ, tags), a control, a line or
    paragraph separator, a space other than U+0020, or one of the invisible
    characters above (variation selectors, Hangul fillers).

    Stricter than `hidden_characters.find_hidden`, which allows a ZWNJ between
    Persian letters or a ZWJ in an emoji in prose: a path is a file name, and two
    names that differ only by an invisible character are two files that look alike.
    """
    category = unicodedata.category(character)
    return (
        category in ("Cf", "Cc", "Zl", "Zp")
        or (category == "Zs" and character != " ")
        or ord(character) in _INVISIBLE
        or character == "\u2800"  # BRAILLE PATTERN BLANK
    )


def _label(character: str) -> str:
    return f"U+{ord(character):04X} {character_name(ord(character))}"


# Scripts UTS #39 lets one word mix ("Highly Restrictive"): Japanese, Chinese with
# Bopomofo, Korean, each with Latin. Common (digits, punctuation) and Inherited
# (combining marks) characters belong to every script.
_SCRIPT_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_ANY_SCRIPT = frozenset({"COMMON", "INHERITED", "Unknown"})
# Scripts whose lower-case letters can spell a Latin word outright (`арі` reads as
# `api`). Not Greek: confusables.txt maps γ to y and ι to i, so common words such as
# `για` would read as Latin when nobody would take them for it.
_WHOLE_SCRIPT_LOOK_ALIKES = frozenset({"CYRILLIC", "ARMENIAN"})
# Latin letters of phonetic notation, not of any orthography (UTS #39 calls them
# Technical): `ɑ` in `ɑgent.md` is a look-alike of `a` that no language writes.
_TECHNICAL_LATIN = ((0x0250, 0x02AF), (0x1D00, 0x1DBF), (0xAB30, 0xAB6F))


@cache
def _confusables() -> tuple[Any, Any]:
    """confusable_homoglyphs' script and confusables tables (Unicode's Scripts.txt
    and confusables.txt), loaded on the first check rather than at import."""
    from confusable_homoglyphs import categories, confusables

    return categories, confusables


def _script(character: str) -> str:
    return str(_confusables()[0].alias(character))


def _latin_look_alike(character: str) -> str | None:
    """The ASCII letters ``character`` can be mistaken for (confusables.txt), or None."""
    for glyph in _confusables()[1].confusables_data.get(character, ()):
        text = glyph["c"]
        if text.isascii() and text.isalpha():
            return str(text)
    return None


def _words(segment: str) -> list[str]:
    """The words of a path segment: runs of letters, marks and digits, which the
    punctuation of file names (`.`, `-`, `_`, spaces) separates."""
    words: list[str] = []
    run = ""
    for character in segment + " ":
        if unicodedata.category(character)[0] in "LMN":
            run += character
        elif run:
            words.append(run)
            run = ""
    return words


def _confusable_in(segment: str) -> tuple[str, list[str]] | None:
    """Why ``segment`` can be mistaken for another name, and the characters to blame."""
    composed = unicodedata.normalize("NFC", segment)
    if composed != segment:
        return f"is written with combining accents, as the composed {composed!r} looks", []
    for character in segment:
        folded = unicodedata.normalize("NFKC", character)
        if folded != character:
            return f"holds a compatibility form of {folded!r}", [_label(character)]
    for word in _words(segment):
        letters = [c for c in word if unicodedata.category(c)[0] == "L"]
        scripts = {_script(c) for c in word} - _ANY_SCRIPT
        if len(scripts) > 1 and not any(scripts <= mix for mix in _SCRIPT_MIXES):
            counts = {script: sum(_script(c) == script for c in word) for script in scripts}
            main = max(sorted(counts), key=counts.__getitem__)
            odd = [_label(c) for c in dict.fromkeys(word) if _script(c) in scripts - {main}]
            names = " and ".join(sorted(s.title() for s in scripts))
            return f"mixes {names} letters in {word!r}", odd
        if len(scripts) == 1 and scripts <= _WHOLE_SCRIPT_LOOK_ALIKES and letters:
            look_alikes = [_latin_look_alike(c) for c in letters]
            if all(look_alikes):
                skeleton = "".join(a for a in look_alikes if a)
                return (
                    f"holds {word!r}, {next(iter(scripts)).title()} letters that all look "
                    f"like Latin ones ({skeleton!r})",
                    [_label(c) for c in dict.fromkeys(letters)],
                )
        for character in letters:
            technical = any(a <= ord(character) <= b for a, b in _TECHNICAL_LATIN)
            if technical and (look_alike := _latin_look_alike(character)):
                return f"holds a phonetic letter that looks like {look_alike!r}", [
                    _label(character)
                ]
    return None


def validate_name(name: str, *, field: str = "path", what: str = "The path") -> str:
    """Refuse a new path or name a reader could misread: an invisible or control
    character is `InvalidPath`, a look-alike (UTS #39) is `ConfusablePath`. Each
    `/`-separated segment is judged alone, so `.AGENTS/用語集.md` is fine."""
    hidden = [c for c in dict.fromkeys(name) if invisible_in_name(c)]
    if hidden:
        labels = [_label(c) for c in hidden]
        column = next(i for i, c in enumerate(name, start=1) if invisible_in_name(c))
        noun = "an invisible or control character" if len(hidden) == 1 else "invisible characters"
        raise InvalidPath(
            f"{what} holds {noun} ({', '.join(labels)}; the first at column {column}). "
            "A name is shown as it is typed: write it without them.",
            field=field,
            characters=labels,
        )
    for segment in name.split("/"):
        found = _confusable_in(segment)
        if found is not None:
            why, characters = found
            blamed = f" ({', '.join(characters)})" if characters else ""
            raise ConfusablePath(
                f"{what} {why}{blamed}, so it can be mistaken for another name: "
                "write each word in one script, without look-alike or compatibility forms.",
                field=field,
                characters=characters,
            )
    return name


def name_skeleton(name: str) -> str:
    """What ``name`` looks like, for comparing it with a reserved name.

    NFKC, then the invisible characters removed, then the look-alikes above
    mapped to Latin, case-folded, and mapped once more (a fold can produce one).
    Two names with the same skeleton are easy to mistake for each other.
    """
    text = unicodedata.normalize("NFKC", name)
    text = "".join(ch for ch in text if not invisible_in_name(ch))
    return text.translate(_CONFUSABLES).casefold().translate(_CONFUSABLES)


def looks_reserved(name: str) -> bool:
    """``name`` is the reserved `_vance` or could be mistaken for it (`_VANCE`, `_vаnce`)."""
    return name_skeleton(name) == RESERVED_PREFIX


def validate_path(path: object, *, field: str = "path") -> str:
    """Return ``path`` if it is a normalised relative POSIX path, else raise."""
    if not isinstance(path, str):
        raise InvalidInput("The path must be a string.", field=field)
    if not path:
        raise InvalidInput("The path is empty.", field=field)
    if len(path) > MAX_PATH_LENGTH:
        raise InvalidInput(
            f"The path is {len(path)} characters long; at most {MAX_PATH_LENGTH} are allowed.",
            field=field,
        )
    if "\\" in path:
        raise InvalidInput("The path contains a backslash; use '/' between folders.", field=field)
    if path.startswith("/"):
        raise InvalidInput("The path must be relative: remove the leading '/'.", field=field)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        raise InvalidPath("The path contains a control character.", field=field)
    for segment in path.split("/"):
        if segment == "":
            raise InvalidInput(
                "The path has an empty segment ('//' or a trailing '/').", field=field
            )
        if segment in (".", ".."):
            raise InvalidInput(f"The path may not contain a '{segment}' segment.", field=field)
        if segment != segment.strip():
            raise InvalidInput("A path segment may not start or end with white space.", field=field)
    return path


def validate_new_path(path: object, *, field: str = "path") -> str:
    """`validate_path`, and a name nobody can misread (`validate_name`), which may
    not begin with a look-alike of `_vance` either.

    Only `_vance` itself names the reserved space (admin-only to write); a
    folder that merely looks like it would show tenant-wide rules to a reader
    without being them. Checked where a path is created, so a document stored
    before this check stays readable and removable.
    """
    checked = validate_path(path, field=field)
    first = checked.split("/", 1)[0]
    if first != RESERVED_PREFIX and looks_reserved(first):
        detail = (
            f"The folder {first!r} looks like the reserved `{RESERVED_PREFIX}`; "
            "choose a name that cannot be mistaken for it."
        )
        try:
            validate_name(first, field=field)
        except InvalidInput as refusal:  # the same refusal, with its code
            raise type(refusal)(detail, field=field, **refusal.extra) from None
        raise InvalidInput(detail, field=field)
    return validate_name(checked, field=field)


def is_reserved_path(path: str) -> bool:
    return path == RESERVED_PREFIX or path.startswith(RESERVED_PREFIX + "/")

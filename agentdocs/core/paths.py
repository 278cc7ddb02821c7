"""Document paths: normalised relative POSIX paths, checked in one place."""

from __future__ import annotations

import unicodedata

from agentdocs.core.errors import InvalidInput

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


def name_skeleton(name: str) -> str:
    """What ``name`` looks like, for comparing it with a reserved name.

    NFKC, then the invisible characters removed, then the look-alikes above
    mapped to Latin, case-folded, and mapped once more (a fold can produce one).
    Two names with the same skeleton are easy to mistake for each other.
    """
    text = unicodedata.normalize("NFKC", name)
    text = "".join(
        ch for ch in text if unicodedata.category(ch) != "Cf" and ord(ch) not in _INVISIBLE
    )
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
        raise InvalidInput("The path contains a control character.", field=field)
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
    """`validate_path`, and a new path may not begin with a look-alike of `_vance`.

    Only `_vance` itself names the reserved space (admin-only to write); a
    folder that merely looks like it would show tenant-wide rules to a reader
    without being them. Checked where a path is created, so a document stored
    before this check stays readable and removable.
    """
    checked = validate_path(path, field=field)
    first = checked.split("/", 1)[0]
    if first != RESERVED_PREFIX and looks_reserved(first):
        raise InvalidInput(
            f"The folder {first!r} looks like the reserved `{RESERVED_PREFIX}`; "
            "choose a name that cannot be mistaken for it.",
            field=field,
        )
    return checked


def is_reserved_path(path: str) -> bool:
    return path == RESERVED_PREFIX or path.startswith(RESERVED_PREFIX + "/")

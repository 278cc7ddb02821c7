"""Labels of document versions, the pure part: what a label name is, the implicit
`latest`, and the `review.protectedLabels` setting's value.

A label name is a slug: lowercase letters, digits and hyphens, starting with a letter
or digit, at most 64 characters (`production`, `staging`, `canary-2`). `latest` is
every document's newest version: never stored, so never moved nor removed.
"""

from __future__ import annotations

import json
import re

from agentdocs.core.errors import InvalidInput

LATEST = "latest"
MAX_LABEL_LENGTH = 64
LABEL_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")

REVIEW_PROTECTED_LABELS_KEY = "review.protectedLabels"
DEFAULT_PROTECTED_LABELS: tuple[str, ...] = ("production",)
MAX_PROTECTED_LABELS = 100


def validate_label_name(value: object, *, field: str = "label") -> str:
    """A label name to read by: a slug, `latest` included; InvalidInput naming ``field``."""
    if not isinstance(value, str) or not LABEL_NAME.match(value):
        raise InvalidInput(
            f"`{field}` is a label name: 1 to {MAX_LABEL_LENGTH} lowercase letters, digits "
            "and hyphens, starting with a letter or digit (such as production or canary).",
            field=field,
        )
    return value


def validate_movable_label(value: object, *, field: str = "label") -> str:
    """A label name that can be moved or removed: a slug other than `latest`."""
    name = validate_label_name(value, field=field)
    if name == LATEST:
        raise InvalidInput(
            "`latest` is every document's newest version: it cannot be moved or removed.",
            field=field,
        )
    return name


def optional_label(value: object, *, field: str = "label") -> str | None:
    """A render's label: None when not given (or empty, or `latest`, which is what a
    render reads anyway)."""
    if value is None or value == "":
        return None
    name = validate_label_name(value, field=field)
    return None if name == LATEST else name


def parse_protected_labels(value: str, *, field: str = "value") -> list[str]:
    """The labels of a `review.protectedLabels` value (a JSON list of label names)."""
    try:
        loaded = json.loads(value)
    except ValueError:
        loaded = None
    if not isinstance(loaded, list) or len(loaded) > MAX_PROTECTED_LABELS:
        raise InvalidInput(
            f"`{REVIEW_PROTECTED_LABELS_KEY}` is a JSON list of label names, such as "
            f'["production"] (at most {MAX_PROTECTED_LABELS}).',
            field=field,
        )
    return [validate_movable_label(name, field=field) for name in loaded]

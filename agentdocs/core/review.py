"""Which document paths need review, from the `review.*` settings' values.

`review.required` holds gitignore-style patterns, as a JSON list of strings (or one
pattern as a JSON string): `["_vance/**", "agent.md"]`. They are matched with
pathspec's GitIgnoreSpec against "<project-slug>/<path>", so a tenant's patterns can
name projects (`_vance/**`) and a pattern without a slash (`agent.md`) matches at any
depth; a project's own patterns are also matched against the bare path.
`review.approvals` is how many approvals a change request needs (default 1).
`review.protectedLabels` lists the labels only reviewers move (default `["production"]`,
`agentdocs.core.labels`). `review.requireEvals` and `review.maxRegression` keep a change
request from merging until eval results show it is not worse (`agentdocs.core.evals`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pathspec import GitIgnoreSpec

from agentdocs.core import evals, labels
from agentdocs.core.errors import InvalidInput

REVIEW_REQUIRED_KEY = "review.required"
REVIEW_APPROVALS_KEY = "review.approvals"
REVIEW_PROTECTED_LABELS_KEY = labels.REVIEW_PROTECTED_LABELS_KEY
REVIEW_REQUIRE_EVALS_KEY = evals.REQUIRE_EVALS_KEY
REVIEW_MAX_REGRESSION_KEY = evals.MAX_REGRESSION_KEY
REVIEW_KEYS = (
    REVIEW_REQUIRED_KEY,
    REVIEW_APPROVALS_KEY,
    REVIEW_PROTECTED_LABELS_KEY,
    REVIEW_REQUIRE_EVALS_KEY,
    REVIEW_MAX_REGRESSION_KEY,
)
DEFAULT_APPROVALS = 1
MAX_APPROVALS = 20
MAX_PATTERNS = 100
MAX_PATTERN_LENGTH = 255


def parse_patterns(value: str, *, field: str = "value") -> list[str]:
    """The patterns of a `review.required` value; InvalidInput naming ``field`` otherwise."""
    try:
        loaded = json.loads(value)
    except ValueError:
        raise InvalidInput(
            f"`{REVIEW_REQUIRED_KEY}` is a JSON list of gitignore-style patterns, such as "
            '["_vance/**", "agent.md"], or one pattern as a JSON string.',
            field=field,
        ) from None
    patterns = [loaded] if isinstance(loaded, str) else loaded
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise InvalidInput(
            f"`{REVIEW_REQUIRED_KEY}` is a JSON list of strings (or one JSON string).",
            field=field,
        )
    if len(patterns) > MAX_PATTERNS:
        raise InvalidInput(f"At most {MAX_PATTERNS} patterns.", field=field)
    for pattern in patterns:
        if not pattern.strip() or len(pattern) > MAX_PATTERN_LENGTH:
            raise InvalidInput(
                f"A pattern is 1 to {MAX_PATTERN_LENGTH} characters and not only white space.",
                field=field,
            )
    try:
        GitIgnoreSpec.from_lines(patterns)
    except (ValueError, TypeError) as error:
        raise InvalidInput(f"Not a gitignore-style pattern: {error}", field=field) from None
    return list(patterns)


def parse_approvals(value: str, *, field: str = "value") -> int:
    """The number of a `review.approvals` value: an integer from 1 to MAX_APPROVALS."""
    try:
        number = json.loads(value)
    except ValueError:
        number = None
    if (
        not isinstance(number, int)
        or isinstance(number, bool)
        or not (1 <= number <= MAX_APPROVALS)
    ):
        raise InvalidInput(
            f"`{REVIEW_APPROVALS_KEY}` is a whole number from 1 to {MAX_APPROVALS}.", field=field
        )
    return number


def is_protected(
    patterns: Sequence[str], *, project_slug: str, path: str, project_scope: bool
) -> bool:
    """Whether ``path`` of the project matches one of ``patterns``."""
    if not patterns:
        return False
    spec = GitIgnoreSpec.from_lines(patterns)
    if spec.match_file(f"{project_slug}/{path}"):
        return True
    return project_scope and spec.match_file(path)

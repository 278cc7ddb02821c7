"""Refuses content that looks like a secret.

Documents go into prompts verbatim, so a credential in one is sent to a model
on every turn. The patterns are deliberately specific (known key shapes and
explicit assignments) so ordinary prose about passwords is not refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("a private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    (
        "a GitHub token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    ),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("an Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("an OpenAI-style API key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}")),
    ("a Stripe secret key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    (
        "a JSON Web Token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    (
        "a credential assignment",
        re.compile(
            r"""(?ix)
            \b(?:password|passwd|pwd|client_secret|api[_-]?key|access[_-]?token
               |auth[_-]?token|secret[_-]?key|secret)\b["']?\s*
            (?: =\s*["']?(?!<|\$|\*{3}|x{3}|\.\.\.|…|none\b|null\b|changeme\b)[^\s"'`]{4,}
              | :\s*["'](?!<|\$|\*{3}|x{3}|\.\.\.|…)[^\s"']{4,}["']
            )
            """
        ),
    ),
    (
        "a connection string with a password",
        re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@$<{]{3,}@[^\s/]+", re.I),
    ),
]


@dataclass(frozen=True)
class SecretFinding:
    line: int
    kind: str


def find_secret(text: str) -> SecretFinding | None:
    """Return the first secret-like line in ``text`` (1-based), or None."""
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, pattern in _PATTERNS:
            if pattern.search(line):
                return SecretFinding(line=number, kind=kind)
    return None

"""Refuses content that looks like a secret.

Documents go into prompts verbatim, so a credential in one is sent to a model
on every turn. The patterns are deliberately specific (known key shapes and
explicit assignments) so ordinary prose about passwords is not refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A credential's name, alone or ending an environment-style name (`DB_PASSWORD`,
# `aws_secret_access_key`), maybe with a stage after it (`API_KEY_PROD`). Where a name
# may start is a lookbehind, not a repeated prefix group: a line of `a_a_a_…` would
# otherwise cost quadratic time.
_NAME_START = r"(?:(?<![a-z0-9])|(?<=[_-]))"
_NAME_SUFFIX = r"(?:[_-](?:prod|production|staging|dev|test|live))?"
_CREDENTIAL_NAME = (
    rf"{_NAME_START}"
    r"(?:password|passwd|pwd|client[_-]?secret|api[_-]?key|access[_-]?token"
    r"|auth[_-]?token|secret[_-]?access[_-]?key|secret[_-]?key|private[_-]?key|secret)"
    rf"{_NAME_SUFFIX}(?![a-z0-9])"
)
# What stands in for a value in documentation: <from the vault>, ${VAR}, ***, xxx, ...
_NOT_A_PLACEHOLDER = r"(?!<|\$|\*{3}|x{3}|\.\.\.|…|none\b|null\b|changeme\b)"

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
            rf"""(?ix)
            {_CREDENTIAL_NAME}["']?\s*
            (?: =\s*["']?{_NOT_A_PLACEHOLDER}[^\s"'`]{{4,}}
              | :\s*["']{_NOT_A_PLACEHOLDER}[^\s"']{{4,}}["']
              # YAML's unquoted form: one word with a digit in it, alone on its line,
              # so that prose such as "Password: never commit one" is not refused.
              | :\s*{_NOT_A_PLACEHOLDER}(?=[^\s"'`]*[0-9])[^\s"'`]{{6,}}\s*(?:\#.*)?$
            )
            """
        ),
    ),
    (
        "a token assignment",
        re.compile(
            rf"""(?ix)
            {_NAME_START}token{_NAME_SUFFIX}["']?\s*[=:]\s*["']?
            {_NOT_A_PLACEHOLDER}(?=[^\s"'`]*[0-9])(?=[^\s"'`]*[a-z])[^\s"'`]{{8,}}
            """
        ),
    ),
    (
        "an Authorization header",
        re.compile(
            r"\bAuthorization:\s*(?:(?:Bearer|Token)\s+(?=\S*[0-9])[A-Za-z0-9._~+/-]{8,}"
            r"|Basic\s+[A-Za-z0-9+/]{8,})",
            re.I,
        ),
    ),
    (
        "a connection string with a password",
        # The scheme's length is bounded: unbounded, a line of `a.a.a.…` cost quadratic time.
        re.compile(r"\b[a-z][a-z0-9+.-]{0,31}://[^\s/:@]+:[^\s/@$<{]{3,}@[^\s/]+", re.I),
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

"""Refuses content that looks like a secret.

Documents go into prompts verbatim, so a credential in one is sent to a model
on every turn. The patterns are deliberately specific (known key shapes and
explicit assignments) so ordinary prose about passwords is not refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A credential's name, alone or ending an environment-style name (`DB_PASSWORD`,
# `aws_secret_access_key`), maybe with a stage after it (`API_KEY_PROD`).
#
# Every pattern runs on every line of every write, and a line may be 256 KiB long, so
# none may backtrack without bound: where a name may start is a lookbehind, not a
# repeated prefix group (`a_a_a_…` was quadratic); every lookahead into a value looks
# at most 64 characters ahead (`password:password:…` was quadratic); repeated
# quantifiers that must be followed by something are bounded or start after a
# lookbehind that allows one attempt per run (`eyJ-eyJ-…` was quadratic).
_NAME_START = r"(?:(?<![a-z0-9])|(?<=[_-]))"
_NAME_SUFFIX = r"(?:[_-](?:prod|production|staging|dev|test|live))?"
_CREDENTIAL_NAME = (
    rf"{_NAME_START}"
    # Not `pwd`: the shell's working directory (PWD: /home/app) far more often.
    r"(?:password|passwd|client[_-]?secret|api[_-]?key|access[_-]?token"
    r"|auth[_-]?token|secret[_-]?access[_-]?key|secret[_-]?key|private[_-]?key|secret)"
    rf"{_NAME_SUFFIX}(?![a-z0-9])"
)
# A token's name; pagination cursors and CSRF tokens are not credentials.
_TOKEN_NAME = (
    rf"{_NAME_START}(?<!page_)(?<!page-)(?<!next_)(?<!csrf_)(?<!csrf-)(?<!cursor_)"
    rf"(?<!pagination_)(?<!continuation_)token{_NAME_SUFFIX}(?![a-z0-9])"
)
# What stands in for a value in documentation: <from the vault>, ${VAR}, {{ var }},
# ***, xxx, ..., none, changeme, 1Password, YOUR_API_KEY, and a path (/run/secrets/db).
_NOT_A_PLACEHOLDER = (
    r"(?!<|\$|\{\{|\*{3}|x{3}|\.\.\.|…|none\b|null\b|changeme\b|1password\b"
    r"|(?:your|my)[_-]|(?-i:[A-Z][A-Z_]{2,64}\b(?![\w/+=-]))|[/~][\w.-]{0,64}/)"
)
# An unquoted value that is code or a path, not a literal: os.environ["X"], env("X"),
# self.password, await hash(...), /run/secrets/db.
_NOT_CODE = (
    r"(?![/~]|[\w.]{0,64}[(\[]"
    r"|(?:os|settings|config|process|env|self|this|args|req|request|await|new)\b)"
)
_LETTER_AND_DIGIT = r"(?=[^\s\"'`]{0,63}[0-9])(?=[^\s\"'`]{0,63}[a-z])"
_QUOTED = rf"""["']{_NOT_A_PLACEHOLDER}[^"'\n]{{4,256}}["']"""
# Unquoted, a literal needs a digit: `password=password` in code passes a variable.
_UNQUOTED = rf"""{_NOT_A_PLACEHOLDER}{_NOT_CODE}(?=[^\s"'`]{{0,63}}[0-9])[^\s"'`]{{4,}}"""
# `password: str = "..."`, a Python annotation between the name and the value.
_ANNOTATION = r"(?::\s*[\w.\[\]| ]{1,40}?\s*)?"

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
        re.compile(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,4096}\."
            r"[A-Za-z0-9_-]{8,}"
        ),
    ),
    (
        "a credential assignment",
        re.compile(
            rf"""(?ix)
            {_CREDENTIAL_NAME}["']?\s*
            (?: {_ANNOTATION}=\s*(?:{_QUOTED}|{_UNQUOTED})
              | :\s*{_QUOTED}
            )
            """
        ),
    ),
    (
        # .env files and shells: `DB_PASSWORD=supersecret`, `export API_KEY=...`. Upper
        # case and no spaces around `=`, so a literal needs no digit here.
        "a credential in an environment variable",
        re.compile(
            r"""(?x)
            (?:^|\s)(?:export\s+)?[A-Z0-9_]{0,64}
            (?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)
            (?:_[A-Z0-9]{1,16}){0,3}=["']?
            (?!<|\$|\{\{|[/~]|\*{3}|x{3}|\.\.\.|…|none\b|null\b|changeme\b)[^\s"'`]{4,}
            """
        ),
    ),
    (
        "a token assignment",
        re.compile(
            rf"""(?ix)
            {_TOKEN_NAME}["']?\s*(?:=\s*["']?|:\s*["'])
            {_NOT_A_PLACEHOLDER}{_NOT_CODE}{_LETTER_AND_DIGIT}[^\s"'`]{{8,}}
            """
        ),
    ),
    (
        # YAML's unquoted form, `password: hunter2hunter`: the name starts the line and
        # the value, a generated-looking word of 10 or more characters without dashes,
        # ends it; so "Password: never commit one", "password: argon2id" or "secret:
        # AES-256-GCM" are not refused.
        "a credential in YAML",
        re.compile(
            rf"""(?ix)
            ^\s*(?:[a-z0-9]+[_-]){{0,4}}(?:{_CREDENTIAL_NAME}|{_TOKEN_NAME})["']?\s*:\s*
            {_NOT_A_PLACEHOLDER}{_NOT_CODE}{_LETTER_AND_DIGIT}(?![^\s"'`]{{0,256}}-)
            [^\s"'`]{{10,256}}\s*(?:\#.*)?$
            """
        ),
    ),
    (
        "an Authorization header",
        re.compile(
            r"\bAuthorization:\s*(?:(?:Bearer|Token)\s+(?=\S{0,63}[0-9])[A-Za-z0-9._~+/-]{8,}"
            r"|Basic\s+(?=\S{0,63}(?-i:[A-Z0-9+/=]))[A-Za-z0-9+/]{8,})",  # base64, not a word
            re.I,
        ),
    ),
    (
        "a connection string with a password",
        # The scheme's length is bounded: unbounded, a line of `a.a.a.…` cost quadratic time.
        # user:pass@ and the like are the documentation's placeholders.
        re.compile(
            r"\b[a-z][a-z0-9+.-]{0,31}://[^\s/:@]*:"
            r"(?!(?:pass|password|passwd|pwd|secret|changeme|x{1,64}|\*{1,64})@)[^\s/@$<{]{3,}@[^\s/]+",
            re.I,
        ),
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

"""Refuses content that looks like a secret.

Documents, `memory.*` setting values and recipe parameters go into prompts
verbatim, so a credential in one is sent to a model on every turn. The patterns
are deliberately specific (known key shapes and explicit assignments) so that
ordinary agent-document text is not refused: prose about passwords, `.env`
examples with placeholder values (`JWT_SECRET=your-secret-key`,
`OPENAI_API_KEY=sk-...`), local compose defaults (`postgres://app:app@localhost`),
a rule that names the `-----BEGIN PRIVATE KEY-----` marker, published example
keys (`AKIAIOSFODNN7EXAMPLE`).

The check reads the text as a reader sees it too: a key split by a zero-width
character (`AKIA` + U+200B + the rest) or written in fullwidth letters is found in
`hidden_characters.visible_text` of each line that has any such character.

How well it does is measured on a corpus of public agent documents (no false
alarm allowed) and a labelled set of token formats (see
`tests/data/secret_scan/` and `bench/secret_scan.py`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from agentdocs.core.errors import SecretDetected
from agentdocs.core.hidden_characters import visible_text

# Every pattern runs on every line of every write, and a line may be 256 KiB long, so
# none may backtrack without bound: where a name may start is a lookbehind, not a
# repeated prefix group (`a_a_a_…` was quadratic); every lookahead into a value looks
# at most 64 characters ahead (`password:password:…` was quadratic); repeated
# quantifiers that must be followed by something are bounded or start after a
# lookbehind that allows one attempt per run (`eyJ-eyJ-…` was quadratic). Whether a
# matched value is a placeholder is then decided in Python, on the match alone.

# A credential's name, alone or ending an environment-style name (`DB_PASSWORD`,
# `aws_secret_access_key`), maybe with a stage after it (`API_KEY_PROD`).
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

# Values documentation uses for "put yours here". Compared with the whole value.
_PLACEHOLDER_WORDS = frozenset(
    """secret secrets password passwd pass pwd changeme changeit example test testing dummy
    placeholder null none nil empty todo tbd redacted hidden string str value token key
    apikey api_key admin root postgres postgresql mysql mariadb redis mongo default
    sample foo bar baz qwerty letmein guest user username demo dev development local
    localhost true false required optional abc123 123456 12345678 123456789 password1
    password123 admin123 secret123 pass123 mysecret mypassword""".split()  # noqa: SIM905 (a list of 70 words reads worse)
)
# ... and what such a value starts with or contains.
_PLACEHOLDER_STARTS = ("$", "%", "#", "test-", "test_", "dev-", "dev_", "local-", "local_")
_PLACEHOLDER_PARTS = (
    "your",
    "change",
    "replace",
    "example",
    "placeholder",
    "dummy",
    "sample",
    "insert",
    "redacted",
    "fake",
    "todo",
    "generate",
    "here",
    "xxx",
    "...",
    "…",
    "***",
    "<",
    ">",
    "{{",
)
# A known key prefix followed by too little to be a key: `sk-...`, `sk-abc123def456`.
_KEY_PREFIX_SHORT = re.compile(
    r"(?:sk-(?:ant-|proj-)?|[rsp]k_(?:live|test)_|gh[pousr]_|github_pat_|glpat-|xox[a-z]-"
    r"|xapp-|hf_|whsec_|npm_|pypi-|AKIA|AIza|SG\.|adt_)[\w.-]{0,15}"
)
# Published example values: AWS's documented access key id, Azurite's well-known
# development key, Stripe's documented test key, jwt.io's sample token.
_PUBLISHED = (
    "AKIAIOSFODNN7EXAMPLE",
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
)
_LOCAL_HOSTS = frozenset(
    {"localhost", "127.0.0.1", "0.0.0.0", "[::1]", "::1", "host.docker.internal"}
)


def _is_placeholder(value: str) -> bool:
    """Whether an assigned value is documentation's stand-in rather than a secret."""
    bare = value.strip().strip("\"'`").rstrip(",;)")
    low = bare.lower()
    if len(bare) < 4 or low in _PLACEHOLDER_WORDS:
        return True
    if bare.startswith("-----"):  # a key marker: the private key rules judge the block
        return True
    if low.startswith(_PLACEHOLDER_STARTS) or any(part in low for part in _PLACEHOLDER_PARTS):
        return True
    if _KEY_PREFIX_SHORT.fullmatch(bare):
        return True
    return any(published in bare for published in _PUBLISHED)


def _is_illustration(token: str) -> bool:
    """Whether a value of a known key shape is a documented or elided one."""
    low = token.lower()
    if any(part in low for part in ("xxxx", "...", "…", "your", "example", "0000000000")):
        return True
    return any(published in token for published in _PUBLISHED)


def _mixed(token: str) -> bool:
    """Generated keys mix digits with both cases; identifiers and CSS classes do not."""
    return (
        any(c.isdigit() for c in token)
        and any(c.isupper() for c in token)
        and any(c.islower() for c in token)
    )


_Context = tuple[list[str], int]  # all lines, and the index of this one
_Check = Callable[[re.Match[str], _Context], bool]


def _shaped(match: re.Match[str], context: _Context) -> bool:
    return not _is_illustration(match.group(0))


def _shaped_and_mixed(match: re.Match[str], context: _Context) -> bool:
    return _mixed(match.group(0)) and not _is_illustration(match.group(0))


def _value(match: re.Match[str], context: _Context) -> bool:
    return not _is_placeholder(match.group("value"))


def _env_value(match: re.Match[str], context: _Context) -> bool:
    value = match.group("value")
    # POSTGRES_PASSWORD=postgres_password, or =db_password: the name again.
    if value.lower().replace("-", "_") in match.group("name").lower():
        return False
    return not _is_placeholder(value)


def _connection_password(match: re.Match[str], context: _Context) -> bool:
    password, user = match.group("value"), match.group("user")
    if _is_placeholder(password) or password == user or set(password) <= {"x", "X", "*"}:
        return False
    if match.group("host").lower() in _LOCAL_HOSTS:
        # A compose default on this machine (postgres://app:app@localhost) is not a
        # secret; a generated-looking one is, wherever it points.
        return len(password) >= 16 and any(c.isdigit() for c in password)
    return True


def _curl_password(match: re.Match[str], context: _Context) -> bool:
    lines, index = context
    return "curl" in lines[index][: match.start()] and not _is_placeholder(match.group("value"))


_BASE64_BODY = re.compile(r"[A-Za-z0-9+/]{16}")
_BASE64_LINE = re.compile(r"\s*[\"']?[A-Za-z0-9+/]{40,}={0,2}[\"',]*\s*")
# Before a key marker a line may hold only an assignment or quoting, not prose.
_CODE_BEFORE_MARKER = re.compile(r"\s*(?:[\"']?[\w.-]{1,64}[\"']?\s*[:=]\s*)?[\"'`|>]*\s*")


def _next_nonblank(lines: list[str], index: int, step: int) -> str | None:
    index += step
    while 0 <= index < len(lines):
        if lines[index].strip():
            return lines[index]
        index += step
    return None


def _pem_begin(match: re.Match[str], context: _Context) -> bool:
    """A key block's first line, not a rule or an elided example that names it."""
    lines, index = context
    line = lines[index]
    rest = line[match.end() :]
    if rest.startswith(("\\n", "\\r\\n")):  # a key in a JSON or .env string
        return bool(_BASE64_BODY.match(rest.split("n", 1)[1]))
    if not _CODE_BEFORE_MARKER.fullmatch(line[: match.start()]):
        return False  # "Never commit `-----BEGIN PRIVATE KEY-----` blocks."
    if rest.strip(" \t\"'`,;") and not _BASE64_BODY.match(rest.strip(" \t\"'`")):
        return False  # more prose after the marker
    following = _next_nonblank(lines, index, 1)
    if following is None:
        return True
    # An example block with its body left out is documentation.
    return not ("-----END" in following or _is_illustration(following) or "<" in following)


def _pem_end(match: re.Match[str], context: _Context) -> bool:
    """A key block's last line right after its body (the BEGIN line may be missing)."""
    lines, index = context
    previous = _next_nonblank(lines, index, -1)
    return previous is not None and bool(_BASE64_LINE.fullmatch(previous))


@dataclass(frozen=True)
class _Rule:
    kind: str
    # Something every line the pattern can match contains: looked for in the whole
    # text first, so a 256 KiB body without it costs one fast search, not a pattern
    # run on each of its lines.
    trigger: _Trigger
    pattern: re.Pattern[str]
    # Whether a match is a secret; None: every match is.
    check: _Check | None = None


@dataclass(frozen=True)
class _Trigger:
    pattern: re.Pattern[str]
    # Looked for in the lower-cased text: far faster than an IGNORECASE alternation.
    any_case: bool = False


def _t(trigger: str, *, any_case: bool = False) -> _Trigger:
    return _Trigger(re.compile(trigger), any_case)


_CREDENTIAL_WORDS = _t(r"pass|secret|api[_-]?key|token|private[_-]?key", any_case=True)


_PRIVATE_KEY_MARKER = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"

_RULES: list[_Rule] = [
    _Rule(
        "a private key block",
        _t("-----BEGIN"),
        re.compile(rf"-----BEGIN {_PRIVATE_KEY_MARKER}"),
        _pem_begin,
    ),
    _Rule(
        "a private key block",
        _t("-----END"),
        re.compile(rf"-----END {_PRIVATE_KEY_MARKER}"),
        _pem_end,
    ),
    _Rule(
        # A pasted key body without its BEGIN line: base64 of a DER private key starts
        # with a SEQUENCE and version 0 or 1 (PKCS#1 and PKCS#8 RSA, EC, Ed25519), or
        # is an OpenSSH key.
        "a private key body",
        _t(r"MI[IG]|MH[cQ]C|MC4C|b3Blbn"),
        re.compile(
            r"(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{2}[AQgw]IBA(?:DAN|AK[BC])|MIG[A-Za-z0-9+/]AgE[AB]"
            r"|MH[cQ]CAQEE|MC4CAQAw|b3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/]{24}"
        ),
    ),
    _Rule(
        "an AWS access key id",
        _t("AKIA|ASIA"),
        re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        _shaped,
    ),
    _Rule(
        "a GitHub token",
        _t("gh[pousr]_|github_pat_"),
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
        _shaped,
    ),
    _Rule(
        "a GitLab token",
        _t("gl(?:pat|dt|rt|ptt)-"),
        re.compile(r"\bgl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}"),
        _shaped,
    ),
    _Rule("a Slack token", _t("xox"), re.compile(r"\bxox[abprse]-[A-Za-z0-9-]{10,}"), _shaped),
    _Rule(
        "a Slack app token", _t("xapp-"), re.compile(r"\bxapp-[0-9]+-[A-Za-z0-9-]{20,}"), _shaped
    ),
    _Rule(
        "a Slack webhook URL",
        _t(r"hooks\.slack\.com"),
        re.compile(r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}"),
        _shaped,
    ),
    _Rule(
        "a Discord webhook URL",
        _t("/api/webhooks/"),
        re.compile(r"\bdiscord(?:app)?\.com/api/webhooks/[0-9]{5,20}/[A-Za-z0-9_-]{40,}"),
        _shaped,
    ),
    _Rule(
        "an Anthropic API key", _t("sk-ant-"), re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), _shaped
    ),
    _Rule(
        "an OpenAI-style API key",
        _t("sk-"),
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"),
        _shaped_and_mixed,  # not className="sk-button-primary-large-outline-variant"
    ),
    _Rule(
        "a Stripe secret key",
        _t("k_(?:live|test)_"),
        re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
        _shaped,
    ),
    _Rule(
        "a Stripe webhook secret", _t("whsec_"), re.compile(r"\bwhsec_[A-Za-z0-9+/=]{24,}"), _shaped
    ),
    _Rule("a Google API key", _t("AIza"), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), _shaped),
    _Rule(
        "a Hugging Face token", _t("hf_"), re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), _shaped_and_mixed
    ),
    _Rule(
        "a SendGrid API key",
        _t(r"SG\."),
        re.compile(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}"),
        _shaped,
    ),
    _Rule("an npm token", _t("npm_"), re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), _shaped),
    _Rule("a PyPI token", _t("pypi-"), re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}"), _shaped),
    _Rule(
        "a DigitalOcean or Shopify token",
        _t("dop_v1_|shp(?:at|ss|ca|pa)_"),
        re.compile(r"\b(?:dop_v1_[a-f0-9]{64}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})\b"),
        _shaped,
    ),
    _Rule(
        "an xAI or Groq API key",
        _t("xai-|gsk_"),
        re.compile(r"\b(?:xai-[A-Za-z0-9]{60,}|gsk_[A-Za-z0-9]{48,})"),
        _shaped_and_mixed,
    ),
    _Rule(
        "an agentdocs API token",
        _t("adt_"),
        re.compile(r"\badt_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{32,}"),
        _shaped,
    ),
    _Rule(
        "a JSON Web Token",
        _t("eyJ"),
        re.compile(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,4096}\."
            r"[A-Za-z0-9_-]{8,}"
        ),
        _shaped,
    ),
    _Rule(
        "an Azure storage or Service Bus key",
        _t("AccountKey=|SharedAccessKey="),
        re.compile(r"\b(?:AccountKey|SharedAccessKey)=(?P<value>[A-Za-z0-9+/]{20,}={0,2})"),
        _value,
    ),
    _Rule(
        "a credential assignment",
        _CREDENTIAL_WORDS,
        re.compile(
            rf"""(?ix)
            {_CREDENTIAL_NAME}["']?\s*
            (?: {_ANNOTATION}=\s* | :\s*(?=["']) )
            (?P<value>{_QUOTED}|{_UNQUOTED})
            """
        ),
        _value,
    ),
    _Rule(
        # .env files and shells: `DB_PASSWORD=supersecret`, `export API_KEY=...`. Upper
        # case and no spaces around `=`, so a literal needs no digit here.
        "a credential in an environment variable",
        _t("PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY"),
        re.compile(
            r"""(?x)
            (?:^|\s)(?:export\s+)?
            (?P<name>[A-Z0-9_]{0,64}
            (?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)
            (?:_[A-Z0-9]{1,16}){0,3})=["']?
            (?!<|\$|\{\{|[/~]|\*{3}|x{3}|\.\.\.|…|none\b|null\b|changeme\b)
            (?P<value>[^\s"'`]{4,})
            """
        ),
        _env_value,
    ),
    _Rule(
        "a token assignment",
        _t("token", any_case=True),
        re.compile(
            rf"""(?ix)
            {_TOKEN_NAME}["']?\s*(?:=\s*["']?|:\s*["'])
            {_NOT_A_PLACEHOLDER}{_NOT_CODE}{_LETTER_AND_DIGIT}(?P<value>[^\s"'`]{{8,}})
            """
        ),
        _value,
    ),
    _Rule(
        # YAML's unquoted form, `password: hunter2hunter`: the name starts the line and
        # the value, a generated-looking word of 10 or more characters without dashes,
        # ends it; so "Password: never commit one", "password: argon2id" or "secret:
        # AES-256-GCM" are not refused.
        "a credential in YAML",
        _CREDENTIAL_WORDS,
        re.compile(
            rf"""(?ix)
            ^\s*(?:[a-z0-9]+[_-]){{0,4}}(?:{_CREDENTIAL_NAME}|{_TOKEN_NAME})["']?\s*:\s*
            {_NOT_A_PLACEHOLDER}{_NOT_CODE}{_LETTER_AND_DIGIT}(?![^\s"'`]{{0,256}}-)
            (?P<value>[^\s"'`]{{10,256}})\s*(?:\#.*)?$
            """
        ),
        _value,
    ),
    _Rule(
        "an Authorization header",
        _t("authorization", any_case=True),
        re.compile(
            r"\bAuthorization:\s*(?:(?:Bearer|Token)\s+(?=\S{0,63}[0-9])"
            r"(?P<value>[A-Za-z0-9._~+/-]{8,})"
            r"|Basic\s+(?=\S{0,63}(?-i:[A-Z0-9+/=]))[A-Za-z0-9+/]{8,})",  # base64, not a word
            re.I,
        ),
        lambda match, context: match.group("value") is None or _value(match, context),
    ),
    _Rule(
        "a connection string with a password",
        _t("://"),
        # The scheme's length is bounded: unbounded, a line of `a.a.a.…` cost quadratic time.
        re.compile(
            r"\b[a-z][a-z0-9+.-]{0,31}://(?P<user>[^\s/:@]*):(?P<value>[^\s/@$<{]{3,})"
            r"@(?P<host>\[[0-9a-f:]{2,39}\]|[^\s/:?#\[]+)",
            re.I,
        ),
        _connection_password,
    ),
    _Rule(
        # `curl -u user:pass`; `-u` in other commands (`git push -u`, `docker run -u
        # 1000:1000`) is not a password, so the check wants `curl` earlier on the line.
        "a password on a curl command line",
        _t("curl"),
        re.compile(
            r"(?<!\S)(?:-u|--user)(?:\s+|=)[\"']?(?P<user>[^\s\"':]{1,128}):(?P<value>[^\s\"'@]{3,})"
        ),
        _curl_password,
    ),
]


def _any_trigger(any_case: bool) -> re.Pattern[str]:
    return re.compile(
        "|".join(
            f"(?:{pattern})"
            for pattern in dict.fromkeys(
                rule.trigger.pattern.pattern for rule in _RULES if rule.trigger.any_case is any_case
            )
        )
    )


# Every trigger in one pattern (those looked for as written, and those looked for in
# the lower-cased text): a short text that has none of them has nothing to scan. One
# search of a process id or a name costs a sixth of thirty; on a long text the thirty
# literal searches are faster than the alternation at every position, so only a text
# of at most SHORT_TEXT characters is looked at this way first.
_ANY_TRIGGER = _any_trigger(False)
_ANY_TRIGGER_ANY_CASE = _any_trigger(True)
SHORT_TEXT = 256


@dataclass(frozen=True)
class SecretFinding:
    """``hidden``: found only once invisible characters were removed (and NFKC)."""

    line: int
    kind: str
    hidden: bool = False


def _lines_containing(trigger: re.Pattern[str], text: str, starts: list[int]) -> list[int]:
    indexes = []
    found = trigger.search(text)
    while found is not None:
        index = bisect_right(starts, found.start()) - 1
        indexes.append(index)
        found = trigger.search(text, starts[index + 1])  # on from the next line
    return indexes


# ASCII characters `visible_text` removes; any other character it may change is not ASCII.
_ASCII_INVISIBLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_ENDS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# The line breaks `visible_text` removes: without them its lines are the text's lines.
_REMOVED_LINE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def find_secret(text: str) -> SecretFinding | None:
    """Return the first secret-like line in ``text`` (1-based), or None.

    First the text as stored; then, if any line holds an invisible character or a
    compatibility form (U+200B, fullwidth letters), those lines as a reader sees them
    (`visible_text`), each in its place among the others, so line numbers and the
    rules that look at neighbouring lines hold (``hidden`` is then true). Only the
    changed lines are searched again: an English page with a few `…` costs little.
    """
    lines = text.splitlines(keepends=True)
    bare = [line.rstrip(_LINE_ENDS) for line in lines]
    finding = _scan(text, lines, bare, list(range(len(lines))))
    if finding is not None or (text.isascii() and _ASCII_INVISIBLE.search(text) is None):
        return finding
    odd = [
        index
        for index, line in enumerate(bare)
        if not line.isascii() or _ASCII_INVISIBLE.search(line) is not None
    ]
    seen: list[str] = []
    if 4 * len(odd) > len(bare) and _REMOVED_LINE_BREAKS.search(text) is None:
        seen = visible_text(text).splitlines()  # most lines: one pass over the text
    if len(seen) != len(bare):
        seen = list(bare)
        for index in odd:
            seen[index] = visible_text(bare[index])
    changed = [index for index in odd if seen[index] != bare[index]]
    if not changed:
        return None
    searched = [seen[index] + "\n" for index in changed]
    found = _scan("".join(searched), searched, seen, changed)
    return None if found is None else SecretFinding(found.line, found.kind, hidden=True)


def _scan(
    text: str, lines: list[str], bare: list[str], index_of: list[int]
) -> SecretFinding | None:
    """The first secret-like line among ``lines`` (the lines of ``text``, ends kept):
    the ``i``-th of them is line ``index_of[i]`` of ``bare``, the whole text's lines
    without their ends, which the rules read (and their neighbours)."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a few letters lower-case to two characters
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    if (
        len(text) <= SHORT_TEXT
        and _ANY_TRIGGER.search(text) is None
        and _ANY_TRIGGER_ANY_CASE.search(lowered) is None
    ):
        return None  # no rule has a line to run on
    starts = list(accumulate((len(line) for line in lines), initial=0))
    # Which rules to run on which lines: those whose trigger the line contains.
    lines_with: dict[_Trigger, list[int]] = {}
    candidates: dict[int, list[_Rule]] = {}
    for rule in _RULES:
        if rule.trigger not in lines_with:
            lines_with[rule.trigger] = _lines_containing(
                rule.trigger.pattern, lowered if rule.trigger.any_case else text, starts
            )
        for index in lines_with[rule.trigger]:
            candidates.setdefault(index_of[index], []).append(rule)
    for index in sorted(candidates):
        for rule in candidates[index]:
            for match in rule.pattern.finditer(bare[index]):
                if rule.check is None or rule.check(match, (bare, index)):
                    return SecretFinding(line=index + 1, kind=rule.kind)
    return None


def _found(finding: SecretFinding, text: str, what: str) -> str:
    where = f" on line {finding.line}" if "\n" in text.strip() else ""
    hidden = " once its invisible characters are removed" if finding.hidden else ""
    return f"{what} looks like {finding.kind}{where}{hidden}."


def refuse_secret(text: str, *, field: str, what: str) -> None:
    """Raise SecretDetected (422, naming ``field`` and the line) if ``text`` holds a secret.

    ``what`` names the text in the sentence for people ("The value", "The profile name").
    The sentence never repeats the text: it is the secret.
    """
    finding = find_secret(text)
    if finding is not None:
        raise SecretDetected(
            f"{_found(finding, text, what)} It would go into prompts verbatim: "
            "reference the secret (for example its vault path) instead of its value.",
            field=field,
            line=finding.line,
        )


def refuse_secret_in_text(text: str, *, field: str, what: str) -> None:
    """`refuse_secret` for a stored free-text field people and receivers see rather
    than prompts: a history reason, a change request's reason, a review, a comment, a
    webhook's description, a token's name, a binding record's process. The one check
    every service that stores such a field calls."""
    finding = find_secret(text)
    if finding is not None:
        raise SecretDetected(
            f"{_found(finding, text, what)} Members, the activity feed and webhook "
            "receivers see it: leave the secret out (name where it is kept instead). "
            "Nothing was stored.",
            field=field,
            line=finding.line,
        )

"""The secret check, measured: no false alarm on real agent documents, catches on known formats.

The corpus (tests/data/secret_scan/corpus/, sources in SOURCES.md there) is public
agent documents kept as they were; the labelled set (labelled.py there) is synthetic
values of real token formats in realistic surroundings, and the placeholders
documentation writes instead. Each miss and false alarm named in issue #10 has its
own test below.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentdocs.core import secret_scan
from agentdocs.core.errors import SecretDetected
from agentdocs.core.secret_scan import find_secret, refuse_secret, refuse_secret_in_text

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "secret_scan"
CORPUS = sorted(p for p in (DATA / "corpus").iterdir() if p.is_file())


def _labelled():
    spec = importlib.util.spec_from_file_location("secret_scan_labelled", DATA / "labelled.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


LABELLED = _labelled()


# The corpus ---------------------------------------------------------------------


def test_the_corpus_holds_at_least_100_documents_each_with_its_source():
    assert len(CORPUS) >= 100
    sources = (DATA / "SOURCES.md").read_text()
    for path in CORPUS:
        assert f"`{path.name}`" in sources, path.name
        assert path.stat().st_size <= 256 * 1024


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_no_false_alarm_on_a_public_agent_document(path):
    text = path.read_bytes().decode("utf-8")
    finding = find_secret(text)
    assert finding is None, f"line {finding.line}: {text.splitlines()[finding.line - 1]!r}"


# The labelled set ---------------------------------------------------------------


@pytest.mark.parametrize("case", LABELLED.POSITIVES, ids=lambda c: c.name)
def test_a_real_token_format_is_caught_on_its_line(case):
    finding = find_secret(case.text)
    assert finding is not None
    first, last = case.lines
    assert first <= finding.line <= last


def test_the_catch_rate_on_the_labelled_formats_is_at_least_95_percent():
    assert len(LABELLED.POSITIVES) >= 60
    caught = sum(find_secret(case.text) is not None for case in LABELLED.POSITIVES)
    assert caught / len(LABELLED.POSITIVES) >= 0.95


@pytest.mark.parametrize("case", LABELLED.NEGATIVES, ids=lambda c: c.name)
def test_a_placeholder_is_not_refused(case):
    assert find_secret(case.text) is None


def test_the_labelled_values_are_the_same_on_every_run():
    assert LABELLED.synthetic("ghp", 8) == LABELLED.synthetic("ghp", 8)
    assert LABELLED.synthetic("ghp", 8) != LABELLED.synthetic("gho", 8)
    assert [c.text for c in LABELLED.positives()] == [c.text for c in LABELLED.POSITIVES]


# Misses named in issue #10, one test each ---------------------------------------

S = LABELLED.synthetic


def test_a_stripe_webhook_secret_is_caught():
    assert find_secret(f"STRIPE_WEBHOOK_SECRET=whsec_{S('t-whsec', 32)}\n") is not None
    assert find_secret(f"Verify with whsec_{S('t-whsec2', 32)} in staging.") is not None


def test_a_slack_app_token_is_caught():
    app, stamp = S("t-xapp", 10, "ABCDEFGHIJ0123456789"), S("t-xapp2", 13, "0123456789")
    token = f"xapp-1-A{app}-{stamp}-{S('t-xapp3', 64, '0123456789abcdef')}"
    assert find_secret(f"The socket-mode bot connects with {token}.") is not None


def test_a_slack_webhook_url_is_caught():
    team, channel = S("t-t", 8, "ABCDEFGH0123456789"), S("t-b", 10, "ABCDEFGH0123456789")
    url = f"https://hooks.slack.com/services/T{team}/B{channel}/{S('t-hook', 24)}"
    assert find_secret(f"- Post deploy notes to {url}\n") is not None


def test_a_hugging_face_token_is_caught():
    assert find_secret(f"huggingface-cli login --token hf_{S('t-hf', 34)}") is not None


def test_a_sendgrid_key_is_caught():
    key = f"SG.{S('t-sg', 22, LABELLED.URLSAFE)}.{S('t-sg2', 43, LABELLED.URLSAFE)}"
    assert find_secret(f"Mail goes out with {key}.") is not None


def test_an_azure_account_key_is_caught():
    key = S("t-az", 86, LABELLED.B64) + "=="
    text = f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={key};EndpointSuffix=x.net"
    assert find_secret(text) is not None


def test_a_pem_body_without_its_begin_line_is_caught():
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ" + S("t-pem", 14, LABELLED.B64)
    text = f"The signing key (no header):\n\n{body}\n{S('t-pem2', 64, LABELLED.B64)}\n"
    finding = find_secret(text)
    assert finding is not None and finding.line == 3


def test_curl_with_a_user_and_password_is_caught():
    assert find_secret(f"curl -u deploy:{S('t-curl', 14)} https://ci.acme.dev/api") is not None


def test_an_agentdocs_api_token_is_caught():
    token = f"adt_{S('t-adt', 8)}_{S('t-adt2', 32, LABELLED.URLSAFE)}"
    assert find_secret(f"- The render bot's key is {token}, rotate it monthly.") is not None
    assert find_secret(f"agentdocs login --token {token}") is not None
    assert find_secret("Our tokens look like `adt_<prefix>_<secret>`.") is None


# False alarms named in issue #10, one test each ---------------------------------


def test_a_jwt_secret_placeholder_in_an_env_example_is_accepted():
    assert find_secret("```env\nJWT_SECRET=your-secret-key\n```\n") is None


def test_a_postgres_password_placeholder_is_accepted():
    assert find_secret("POSTGRES_USER=app\nPOSTGRES_PASSWORD=secret\n") is None


def test_a_change_me_secret_key_is_accepted():
    assert find_secret("SECRET_KEY=change-me-before-deploying\n") is None


def test_an_elided_openai_key_is_accepted():
    assert find_secret("OPENAI_API_KEY=sk-...\n") is None


def test_a_local_compose_default_connection_string_is_accepted():
    assert find_secret("DATABASE_URL=postgres://app:app@localhost:5432/app\n") is None


def test_a_rule_that_names_the_private_key_marker_is_accepted():
    assert find_secret("- Never commit a file containing `-----BEGIN PRIVATE KEY-----`.\n") is None
    assert find_secret("-----BEGIN PRIVATE KEY----- blocks belong in the vault.\n") is None


def test_a_css_class_that_starts_with_sk_is_accepted():
    assert find_secret('<button className="sk-button-primary-large-outline-variant">') is None


def test_the_aws_documented_example_key_id_is_accepted():
    assert find_secret("aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n") is None


# Guarantees kept -----------------------------------------------------------------


def test_the_line_is_counted_across_every_kind_of_line_break():
    secret = f"token ghp_{S('t-lines', 36)}"
    assert find_secret(f"a\r\nb\rc\n{secret}\n").line == 4
    assert find_secret(f"a\u2028b\n{secret}").line == 3


def test_refuse_secret_names_the_field_and_line_and_does_not_repeat_the_secret():
    token = f"ghp_{S('t-refuse', 36)}"
    with pytest.raises(SecretDetected) as error:
        refuse_secret(f"fine\n{token}\n", field="value", what="The value")
    assert (error.value.status, error.value.field, error.value.extra["line"]) == (422, "value", 2)
    assert token not in error.value.detail
    refuse_secret("Use the deploy key from the vault.", field="value", what="The value")


HOSTILE = [
    "The deploy checklist lives in docs/deploy.md; ask in #ops first.\n",
    "password=",
    "password: hunter\n",
    "a_",
    "token_",
    "a.",
    "a:",
    "eyJ-",
    "-u a",
    "curl -u ",
    "sk-",
    "-----BEGIN PRIVATE KEY-----\n",
    "MIIEvQIBADAN",
    "hooks.slack.com/services/",
    "AccountKey=",
]


@pytest.mark.parametrize("unit", HOSTILE)
def test_a_256_kib_hostile_body_scans_in_linear_time(unit):
    body = (unit * (256 * 1024 // len(unit) + 1))[: 256 * 1024]
    start = time.perf_counter()
    find_secret(body)
    # Linear costs well under 100 ms here (bench/secret_scan.py, bench/hostile_input.py);
    # the bound is loose for a busy CI machine, and a quadratic pattern takes minutes.
    assert time.perf_counter() - start < 2.0


def test_the_secret_scan_benchmark_runs_and_reports():
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "secret_scan.py"), "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "false alarms             0" in result.stdout
    assert "positives caught" in result.stdout and "ms per MiB" in result.stdout


# Read as a reader sees it (issue 24) ---------------------------------------------

AWS_KEY_ID = "AKIA" + S("t-aws-hidden", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
ADT_TOKEN = f"adt_{S('t-adt-hidden', 8)}_{S('t-adt-hidden2', 32, LABELLED.URLSAFE)}"


@pytest.mark.parametrize(
    "hidden",
    ["\u200b", "\u2060", "\ufeff", "\u00ad", "\u200c", "\u200d", "\U000e0041", "\x01", "\u202e"],
    ids=lambda c: f"U+{ord(c):04X}",
)
def test_a_key_split_by_an_invisible_character_is_caught_on_its_line(hidden):
    text = f"# Deploy\n\nUse {AWS_KEY_ID[:4]}{hidden}{AWS_KEY_ID[4:]} for the bucket.\n"
    assert find_secret(text.replace(hidden, "")) is not None  # the key itself
    finding = find_secret(text)
    assert finding is not None and finding.line == 3 and finding.hidden
    assert finding.kind == "an AWS access key id"


def test_an_agentdocs_token_with_a_zero_width_space_inside_is_caught():
    split = ADT_TOKEN[:12] + "\u200b" + ADT_TOKEN[12:]
    finding = find_secret(f"- The render bot's key is {split}, rotate it monthly.")
    assert finding is not None and finding.kind == "an agentdocs API token" and finding.hidden


def test_a_key_in_fullwidth_letters_is_caught_through_nfkc():
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in AWS_KEY_ID)
    assert find_secret(f"key: {fullwidth}\n") is not None


def test_line_numbers_hold_when_the_line_breaks_are_unusual():
    split = AWS_KEY_ID[:6] + "\u200b" + AWS_KEY_ID[6:]
    assert find_secret(f"a\u2028b\r\nc\x0cd\n{split}\n").line == 5
    assert find_secret(f"a\r\n\r\n{split}").line == 3


def test_a_published_example_key_stays_accepted_when_split():
    assert find_secret("aws_access_key_id = AKIA\u200bIOSFODNN7EXAMPLE\n") is None


MULTILINGUAL = [
    # Persian, with ZWNJ inside words (visible_text removes them: the rescan must stay quiet)
    "# قواعد پروژه\n\n- پیش از ادغام، آزمون\u200cها را اجرا کنید.\n- رمز عبور را در مخزن "
    "نگذارید؛ از `vault:kv/app/db` استفاده کنید.\n- توکن\u200cها را هر ماه عوض کنید.\n",
    # Hindi
    "# परियोजना के नियम\n\n- मर्ज करने से पहले परीक्षण चलाएँ।\n- पासवर्ड कभी कोड में न लिखें; "
    "`SECRET_KEY` वॉल्ट से आता है।\n- क्\u200dष और क्\u200cष दोनों सही हैं।\n",
    # Japanese, with fullwidth punctuation NFKC folds
    "# プロジェクトのルール\n\n- マージ前にテストを実行すること（ＣＩ必須）。\n"
    "- トークン：`${API_TOKEN}` を使い、値は書かないこと！\n- パスワード：ボールトから取得。\n",
    # Emoji-heavy
    "# Team norms 🚀\n\n- 👩\u200d💻 Pair on risky changes ❤️\u200d🔥\n- 🏴\U000e0067\U000e0062"
    "\U000e0065\U000e006e\U000e0067\U000e007f London office: token rotation on Mondays ✅\n"
    "- Password: never commit one ❌ — use 1Password 🔐\n",
]


@pytest.mark.parametrize("text", MULTILINGUAL, ids=["persian", "hindi", "japanese", "emoji"])
def test_no_false_alarm_on_agent_documents_in_other_scripts(text):
    assert find_secret(text) is None


@pytest.mark.parametrize(
    "unit",
    ["Run the tests\u200b before merging.\n", "آزمون\u200cها token=\u200b\n", "ｔｏｋｅｎ＝"],
)
def test_a_256_kib_body_with_hidden_characters_on_every_line_scans_in_linear_time(unit):
    body = (unit * (256 * 1024 // len(unit) + 1))[: 256 * 1024]
    start = time.perf_counter()
    find_secret(body)
    assert time.perf_counter() - start < 2.0


def test_refuse_secret_in_text_names_the_field_and_says_nothing_was_stored():
    with pytest.raises(SecretDetected) as error:
        refuse_secret_in_text(f"rotated {AWS_KEY_ID}", field="reason", what="The reason")
    assert (error.value.status, error.value.code, error.value.field) == (
        422,
        "secret_detected",
        "reason",
    )
    assert AWS_KEY_ID not in error.value.detail and "Nothing was stored" in error.value.detail
    with pytest.raises(SecretDetected, match="once its invisible characters are removed"):
        refuse_secret_in_text(f"{AWS_KEY_ID[:5]}\u200b{AWS_KEY_ID[5:]}", field="name", what="x")
    refuse_secret_in_text("Rotated the deploy key (vault:kv/deploy).", field="reason", what="x")


# A short text is first searched for any trigger at once --------------------------


def _short_lines() -> list[str]:
    lines = {
        line
        for case in (*LABELLED.POSITIVES, *LABELLED.NEGATIVES)
        for line in case.text.splitlines()
    }
    return sorted(line for line in lines if 0 < len(line) <= secret_scan.SHORT_TEXT)


def test_a_short_text_is_judged_alike_with_and_without_the_one_search(monkeypatch):
    """Every line of the labelled set (its secrets alone on a line among them), and
    a few process ids, get the same finding with the one search of every trigger as
    when each rule's trigger is searched for by itself (SHORT_TEXT 0: never first)."""
    texts = [
        *_short_lines(),
        "bench-mcp-12345-1765068000-round-2-client-3-000123",
        "claude-session-0b5c7a4e-3f1d-4e8a-9c2b-7d6e5f4a3b2c",
        "run AKIA" + "Q3ZR7TWX9MNB4KLP",
        "ＡＫＩＡ" + "Q3ZR7TWX9MNB4KLP",  # fullwidth: found once read as a reader sees it
    ]
    quick = [find_secret(text) for text in texts]
    monkeypatch.setattr(secret_scan, "SHORT_TEXT", 0)
    assert quick == [find_secret(text) for text in texts]
    assert quick[-4:-2] == [None, None]
    assert quick[-2] is not None and quick[-1] is not None and quick[-1].hidden
    assert sum(found is not None for found in quick) >= 20  # the set's secrets, found
    assert sum(found is None for found in quick) >= 20


def test_the_one_search_holds_every_rules_trigger():
    for rule in secret_scan._RULES:
        combined = (
            secret_scan._ANY_TRIGGER_ANY_CASE if rule.trigger.any_case else secret_scan._ANY_TRIGGER
        )
        assert f"(?:{rule.trigger.pattern.pattern})" in combined.pattern

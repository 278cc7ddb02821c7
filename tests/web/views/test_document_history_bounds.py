"""Bounds on what one request may cost: the diff and revert pages, the unified-diff
download, the API diff, Markdown rendering and the live preview's rate limit.

Sizes are asserted here; times are measured by bench/diff_page.py."""

from __future__ import annotations

import difflib

import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

from agentdocs import ratelimit
from agentdocs.core.diffs import MAX_CHANGED_LINES
from agentdocs.core.errors import RateLimited
from agentdocs.selectors import documents as document_selectors
from agentdocs.services import documents as svc
from agentdocs.web import diffview, markdown
from agentdocs.web.markdown import MAX_INLINE_CHARS, MAX_MARKDOWN_BYTES, render_markdown

pytestmark = pytest.mark.django_db

# Two 256 KiB versions that differ on every line: 260,000 changed lines.
BIG_OLD = "a\nb\n" * 65000
BIG_NEW = "b\na\n" * 65000
ONE_MB = 1024 * 1024


@pytest.fixture
def big_md(project, writer, make_document):
    document = make_document(project, "big.md", BIG_OLD, user=writer)
    return svc.document_write(
        document=document, body=BIG_NEW, base_version=1, user=writer, reason="swap"
    ).document


@pytest.fixture
def long_md(project, writer, make_document):
    """1,000 lines with one edited near the start and one near the end."""
    lines = [f"line {n}" for n in range(1000)]
    document = make_document(project, "long.md", "\n".join(lines) + "\n", user=writer)
    lines[5], lines[990] = "line five", "line nine hundred ninety"
    return svc.document_write(
        document=document, body="\n".join(lines) + "\n", base_version=1, user=writer
    ).document


def test_the_diff_page_of_two_big_versions_shows_a_bounded_part_and_says_so(browse, reader, big_md):
    response = browse(reader).get("/t/acme/web/diff/big.md?from=1&to=2")
    assert response.status_code == 200
    assert len(response.content) < ONE_MB  # 33 MB before
    page = response.content.decode()
    assert f"Showing the first {MAX_CHANGED_LINES:,} of 260,000 changed lines" in page
    assert "/t/acme/web/diff-download/big.md?from=1&amp;to=2" in page
    assert page.count('class="diff-row diff-change"') == MAX_CHANGED_LINES // 2
    assert "+130000" in page and "−130000" in page  # the totals are of the whole diff


def test_the_revert_page_shows_the_same_bounded_diff(browse, writer, big_md):
    response = browse(writer).get("/t/acme/web/revert/big.md?version=1")
    assert response.status_code == 200
    assert len(response.content) < ONE_MB
    page = response.content.decode()
    assert f"Showing the first {MAX_CHANGED_LINES:,} of 260,000 changed lines" in page
    assert "/t/acme/web/diff-download/big.md?from=2&amp;to=1" in page


def test_a_long_unchanged_stretch_is_folded_to_its_count(browse, reader, long_md):
    page = browse(reader).get("/t/acme/web/diff/long.md?from=1&to=2").content.decode()
    assert "… 978 unchanged lines …" in page  # lines 9 to 986, between the two changes
    assert "line 500" not in page  # carried only as a count, not as 978 hidden rows
    # Three lines of context on each side of the fold, no more.
    assert ">line 8<" in page and ">line 9<" not in page
    assert ">line 986<" not in page and ">line 987<" in page
    assert "nine hundred ninety" in page and "five" in page  # the two changes
    assert "Showing the first" not in page  # nothing was cut


def test_the_diff_is_computed_once_per_pair_of_versions(browse, reader, long_md):
    client = browse(reader)
    client.get("/t/acme/web/diff/long.md?from=1&to=2")
    old = document_selectors.document_version(document=long_md, version=1).body
    key = diffview.cache_key(
        old, long_md.body, diffview.CONTEXT_LINES, MAX_CHANGED_LINES, diffview.MAX_SHOWN_BYTES
    )
    cached = cache.get(key)
    assert cached is not None and cached.added == 2
    marked = diffview.side_by_side("from the cache\n", "marked\n")
    cache.set(key, marked)  # the next view must use it, not diff again
    assert "from the cache" in client.get("/t/acme/web/diff/long.md?from=1&to=2").content.decode()


def test_the_whole_unified_diff_downloads_as_a_file(browse, reader, long_md):
    response = browse(reader).get("/t/acme/web/diff-download/long.md?from=1&to=2")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="long.md.v1-v2.diff"'
    old = document_selectors.document_version(document=long_md, version=1).body
    expected = difflib.unified_diff(
        old.splitlines(),
        long_md.body.splitlines(),
        fromfile="long.md@1",
        tofile="long.md@2",
        lineterm="",
    )
    assert response.content.decode() == "\n".join(expected) + "\n"


def test_the_download_of_a_big_diff_is_whole(browse, reader, big_md):
    text = browse(reader).get("/t/acme/web/diff-download/big.md").content.decode()
    lines = text.splitlines()
    assert sum(line.startswith("-") for line in lines[2:]) == 130000
    assert sum(line.startswith("+") for line in lines[2:]) == 130000


def test_the_download_is_for_members_only(browse, outsider, other_tenant, long_md):
    url = "/t/acme/web/diff-download/long.md?from=1&to=2"
    assert browse(outsider).get(url).status_code == 404
    assert browse().get(url).status_code == 302  # to the sign-in page
    assert browse(outsider).get("/t/globex/web/diff-download/long.md").status_code == 404


def test_the_download_of_unknown_versions_is_404(browse, reader, long_md):
    assert browse(reader).get("/t/acme/web/diff-download/long.md?from=1&to=9").status_code == 404
    assert browse(reader).get("/t/acme/web/diff-download/long.md?from=x").status_code == 404


def test_the_api_diff_is_bounded_and_says_so(api, reader, big_md):
    response = api(reader).get("/api/v1/tenants/acme/projects/web/diff/big.md?from=1&to=2")
    assert response.status_code == 200
    assert len(response.content) < ONE_MB  # 16 MB before
    body = response.json()
    assert body["truncated"] is True
    assert body["shown_changed_lines"] == MAX_CHANGED_LINES
    assert (body["added"], body["removed"]) == (130000, 130000)
    shown = [line for hunk in body["hunks"] for line in hunk["lines"] if line["op"] != " "]
    assert len(shown) == MAX_CHANGED_LINES


def test_markdown_past_the_size_bound_is_shown_as_escaped_plain_text(monkeypatch):
    # The size bound is under test, not the time bound: a loaded machine must not turn
    # the formatted part into plain text too.
    monkeypatch.setattr(markdown, "RENDER_SECONDS", 60)
    prose = "Some *prose* here.\n\n" * (MAX_MARKDOWN_BYTES // 20 + 10)
    html = render_markdown(prose + "<script>alert(1)</script> *not emphasis*\n")
    assert "<em>prose</em>" in html
    assert "the rest follows as plain text" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; *not emphasis*" in html
    assert "<script>" not in html


def test_a_paragraph_past_the_inline_bound_is_shown_without_formatting(monkeypatch):
    monkeypatch.setattr(markdown, "RENDER_SECONDS", 60)
    long_paragraph = "![" * (MAX_INLINE_CHARS // 2) + " **bold**"
    html = render_markdown(f"# Title\n\n{long_paragraph}\n\nAfter **it**.\n")
    assert "<h1>Title</h1>" in html and "<strong>it</strong>" in html
    assert "**bold**" in html and "<strong>bold</strong>" not in html
    assert "1 paragraph(s) shown above without formatting" in html


def test_the_live_preview_is_rate_limited_per_user(browse, writer, admin, project, settings):
    settings.AGENTDOCS_RATE_LIMITS = {"markdown_preview": "3/min"}
    client = browse(writer)
    for _ in range(3):
        assert client.post("/t/acme/web/preview/", {"body": "# Hi"}).status_code == 200
    refused = client.post("/t/acme/web/preview/", {"body": "# Hi"})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert "Too many requests" in refused.content.decode()
    # Another writer has a count of their own.
    assert browse(admin).post("/t/acme/web/preview/", {"body": "# Hi"}).status_code == 200


def test_rate_limits_can_be_turned_off(browse, writer, project, settings):
    settings.AGENTDOCS_RATE_LIMITS = {"markdown_preview": "1/min"}
    settings.AGENTDOCS_RATE_LIMITS_ENABLED = False
    client = browse(writer)
    for _ in range(3):
        assert client.post("/t/acme/web/preview/", {"body": "# Hi"}).status_code == 200


def test_the_limiter_counts_per_scope_and_key(settings):
    settings.AGENTDOCS_RATE_LIMITS = {"render": "2/min", "bind": None}
    ratelimit.check("render", "token:1")
    ratelimit.check("render", "token:1")
    with pytest.raises(RateLimited) as refused:
        ratelimit.check("render", "token:1")
    assert refused.value.status == 429 and refused.value.code == "rate_limited"
    assert refused.value.as_dict()["retry_after"] == refused.value.retry_after >= 1
    ratelimit.check("render", "token:2")  # another caller
    for _ in range(5):
        ratelimit.check("bind", "token:1")  # not limited


@pytest.mark.parametrize(
    ("rate", "parsed"), [("60/min", (60, 60)), ("5/10s", (5, 10)), ("1000 / hour", (1000, 3600))]
)
def test_rates_are_read_as_requests_per_period(rate, parsed):
    assert ratelimit.parse_rate(rate) == parsed


@pytest.mark.parametrize("rate", ["60", "60/fortnight", "x/min", "5/0s"])
def test_a_bad_rate_fails_loudly(rate):
    with pytest.raises(ImproperlyConfigured):
        ratelimit.parse_rate(rate)

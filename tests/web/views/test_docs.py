"""The documentation served by the app at /docs/: every page, its links and anchors, its
pictures, nothing else under docs/ (or beside it), and the footer that leads there."""

from __future__ import annotations

import html
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from agentdocs.web import docs, markdown
from tests.config.test_settings import run_manage
from tests.conftest import need_service
from tests.test_docs import DOCS, ROOT, nav_pages

PAGES = [page.removesuffix(".md") for page in nav_pages()]
IDS = re.compile(r'<h[1-6] id="([^"]+)"')


def page_path(name: str) -> str:
    return "/docs/" if name == "index" else f"/docs/{name}/"


@pytest.fixture
def anonymous() -> Client:
    return Client()


def served(client: Client, name: str) -> str:
    response = client.get(page_path(name))
    assert response.status_code == 200, (name, response.status_code)
    return response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("name", PAGES)
def test_every_page_is_served_to_anyone_without_signing_in(anonymous, name):
    page = served(anonymous, name)
    source = (DOCS / f"{name}.md").read_text()
    title = re.search(r"^# (.+)$", source, re.M).group(1)

    assert f"<title>{html.escape(title)} · Documentation · agentdocs</title>" in page
    assert 'id="rendered"' in page
    # Every page of the nav is linked from every page, the current one marked.
    for other in PAGES:
        assert f'href="{page_path(other)}"' in page, other
    assert f'href="{page_path(name)}" aria-current="page"' in page


@pytest.mark.django_db
def test_the_overview_and_a_page_read_as_their_markdown_says(anonymous):
    overview = served(anonymous, "index")
    api = served(anonymous, "api")

    assert '<h1 id="agentdocs">agentdocs</h1>' in overview
    assert '<a href="/docs/api/" rel="noopener noreferrer nofollow">REST API</a>' in overview
    assert '<h2 id="search">Search</h2>' in api
    assert "<table>" in api and "<code>/api/v1/ping</code>" in api


@pytest.mark.django_db
def test_every_link_between_pages_lands_on_a_page_and_an_anchor_it_has(anonymous):
    pages = {name: served(anonymous, name) for name in PAGES}
    ids = {page_path(name): set(IDS.findall(text)) for name, text in pages.items()}
    broken = []
    for name, text in pages.items():
        article = text.split('id="rendered">', 1)[1].split("</article>", 1)[0]
        for href in re.findall(r'<a href="([^"]+)"', article):
            url = urlsplit(html.unescape(href))
            if url.scheme in ("http", "https", "mailto"):
                continue
            target = url.path or page_path(name)
            if target not in ids:
                broken.append((name, href, "no such page"))
            elif url.fragment and url.fragment not in ids[target]:
                broken.append((name, href, "no such anchor"))
        assert ".md" not in "".join(re.findall(r'href="([^"]+)"', article)), name
    assert broken == []


@pytest.mark.django_db
def test_the_screenshots_page_shows_pictures_the_app_serves(anonymous):
    page = served(anonymous, "screenshots")
    sources = re.findall(r'<img src="([^"]+)"', page)

    assert len(sources) == len(list((DOCS / "screenshots").glob("*.png")))
    for source in sources:
        response = anonymous.get(source)
        assert response.status_code == 200, source
        assert response["Content-Type"] == "image/png"
        body = b"".join(response.streaming_content)
        assert body == (DOCS / "screenshots" / Path(source).name).read_bytes()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "/docs/nope/",
        "/docs/API/",  # names are kebab-case, as the files are
        "/docs/../settings/",
        "/docs/%2e%2e/settings/",
        "/docs/..%2fpyproject.toml/",
        "/docs/screenshots/../api.md",
        "/docs/screenshots/..%2f..%2fpyproject.toml",
        "/docs/screenshots/%2e%2e%2fapi.md",
        "/docs/screenshots/nope.png",
        "/docs/screenshots/project.PNG",
        "/docs/api.md",
    ],
)
def test_nothing_but_pages_and_pictures_is_served(anonymous, url):
    response = anonymous.get(url)

    assert response.status_code == 404, (url, response.status_code)
    assert b"mkdocs" not in response.content and b"[project]" not in response.content


@pytest.mark.django_db
def test_each_page_has_one_url(anonymous):
    index = anonymous.get("/docs/index/")
    without_slash = anonymous.get("/docs/api")

    assert index.status_code == 301 and index["Location"] == "/docs/"
    assert without_slash.status_code == 301 and without_slash["Location"] == "/docs/api/"


@pytest.mark.django_db
def test_pages_only_answer_reads(anonymous):
    assert anonymous.post("/docs/api/").status_code == 405
    assert anonymous.head("/docs/api/").status_code == 200


@pytest.mark.django_db
def test_a_signed_in_member_and_an_outsider_see_the_same_page(tenant, reader, outsider):
    pages = []
    for user in (reader, outsider):
        client = Client()
        client.force_login(user)
        pages.append(served(client, "api").split('id="rendered">', 1)[1])

    assert pages[0] == pages[1]


@pytest.mark.django_db
def test_a_page_runs_no_sql_for_an_anonymous_reader(anonymous, django_assert_num_queries):
    served(anonymous, "api")  # rendered once: later views come from the page cache

    with django_assert_num_queries(0):
        served(anonymous, "api")
        served(anonymous, "configuration")


@pytest.mark.django_db
def test_the_footer_links_the_docs_and_the_api_reference(anonymous, settings):
    page = anonymous.get("/login/").content.decode()
    footer = page.split('<footer class="footer">', 1)[1]

    assert f'<a href="{reverse("docs")}">Documentation</a>' in footer
    assert '<a href="/api/docs/">API reference</a>' in footer

    settings.AGENTDOCS_DOCS_URL = "https://docs.example.com/agentdocs/"
    hosted = anonymous.get("/login/").content.decode().split('<footer class="footer">', 1)[1]
    assert '<a href="https://docs.example.com/agentdocs/">Documentation</a>' in hosted


@pytest.mark.parametrize("value", ["javascript:alert(1)", "docs.example.com", "https://"])
def test_a_docs_url_that_is_not_a_web_address_stops_the_app(value):
    result = run_manage("check", SECRET_KEY="x" * 50, AGENTDOCS_DOCS_URL=value)

    assert result.returncode != 0
    assert "AGENTDOCS_DOCS_URL must be an http:// or https:// URL" in result.stderr


def test_headings_get_the_ids_mkdocs_gives_them_repeats_numbered():
    page = docs.with_heading_ids(
        "<h2>Sync: keeping a repository's files</h2><h3><code>agentdocs import</code></h3>"
        "<h2>Sync: keeping a repository's files</h2><h2>Ünïcode &amp; more</h2><h2>!!!</h2>"
    )

    assert IDS.findall(page) == [
        "sync-keeping-a-repositorys-files",
        "agentdocs-import",
        "sync-keeping-a-repositorys-files_1",
        "unicode-more",
        "_1",
    ]


def test_only_links_to_pages_and_pictures_are_rewritten():
    rewritten = docs.with_site_links(
        '<a href="api.md#search">a</a> <a href="index.md">b</a> <a href="#here">c</a>'
        ' <a href="https://example.com/x.md">d</a> <a href="../bench/README.md">e</a>'
        ' <a href="nope.md">f</a> <img src="screenshots/project.png" alt="p">'
        ' <img src="screenshots/../../secret.png" alt="q"> <a href="mailto:a@example.com">g</a>',
        {"api", "index"},
    )

    assert rewritten == (
        '<a href="/docs/api/#search">a</a> <a href="/docs/">b</a> <a href="#here">c</a>'
        ' <a href="https://example.com/x.md">d</a> <a href="../bench/README.md">e</a>'
        ' <a href="nope.md">f</a> <img src="/docs/screenshots/project.png" alt="p">'
        ' <img src="screenshots/../../secret.png" alt="q"> <a href="mailto:a@example.com">g</a>'
    )


def test_the_app_and_the_built_site_give_every_heading_the_same_id(tmp_path):
    installed = all(importlib.util.find_spec(name) for name in ("mkdocs", "material"))
    need_service("mkdocs", installed, "install the dev extra (mkdocs, mkdocs-material)")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr

    for name in PAGES:
        site = tmp_path / ("index.html" if name == "index" else f"{name}/index.html")
        article = site.read_text().split('<article class="md-content__inner md-typeset">', 1)[1]
        expected = IDS.findall(article.split("</article>", 1)[0])
        ours = IDS.findall(docs.docs_page(name).html)
        assert ours == expected, name


@pytest.mark.django_db
@pytest.mark.parametrize("name", PAGES)
def test_every_page_is_formatted_whole_within_the_renderers_bounds(anonymous, name, monkeypatch):
    # The bounds of size and of inline length, not the clock: on a machine busy enough
    # a page may run out of its half second, which is the renderer's guard, not a defect.
    monkeypatch.setattr(markdown, "RENDER_SECONDS", 60)
    size = len((DOCS / f"{name}.md").read_bytes())
    page = served(anonymous, name)

    assert size <= markdown.MAX_MARKDOWN_BYTES, f"docs/{name}.md: split it into pages"
    assert "shown above without formatting" not in page
    assert "are shown formatted" not in page


@pytest.mark.django_db
def test_a_docs_page_is_formatted_whole_however_busy_the_machine(anonymous, monkeypatch):
    """The docs are the product's own files: no deadline leaves a page's links and tables
    as plain text at a busy moment (a browser test found the index's table of pages
    without its links when the machine was loaded)."""
    docs._rendered.cache_clear()  # as a worker's first view of the page
    monkeypatch.setattr(markdown, "RENDER_SECONDS", -1)  # any deadline is past already
    page = served(anonymous, "index")
    assert "shown above without formatting" not in page
    assert '<a href="/docs/memory-block/">Memory Block</a>' in page


def test_a_render_says_whether_it_was_formatted_in_time(monkeypatch):
    text = "A *short* paragraph.\n\nAnother with `code`.\n"
    html, in_time = markdown.render_markdown_timed(text)
    assert in_time and "<em>short</em>" in html
    monkeypatch.setattr(markdown, "RENDER_SECONDS", -1)
    html, in_time = markdown.render_markdown_timed(text)
    assert not in_time and "shown above without formatting" in html

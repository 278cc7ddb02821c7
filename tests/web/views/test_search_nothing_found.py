"""A search that finds nothing says so and what to try (issue 25): every project when
one was chosen, each word alone when there were several, the spelling, and the syntax
the search reads on this database; no more queries than a search that finds."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.selectors.search import query_words, search_syntax

URL = "/t/acme/-/search/"


@pytest.fixture
def agent_md(project, make_document):
    return make_document(project, "agent.md", "Deploy the staging site from main.\n")


def test_nothing_found_says_so_and_links_each_word_and_every_project(browse, reader, agent_md):
    response = browse(reader).get(URL, {"q": "staging zebra", "project": "web"})

    assert response.status_code == 200
    html = response.content.decode()
    assert "No documents match “staging zebra” in Web" in html
    assert 'href="?q=staging%20zebra">Search every project</a>' in html
    assert 'href="?q=staging&amp;project=web"' in html
    assert 'href="?q=zebra&amp;project=web"' in html
    assert "Check the spelling" in html
    assert "found" not in html.split("No documents match")[0].rsplit("</form>", 1)[-1]


def test_the_advice_is_the_syntax_of_this_database(browse, reader, agent_md):
    html = browse(reader).get(URL, {"q": "zebra"}).content.decode()

    if search_syntax() == "words":
        assert "-word</span> before a word that must not appear" in html
    else:
        assert "looks for your text as one piece" in html
    assert "Search every project" not in html  # it already searched them
    assert "alone." not in html  # one word: nothing fewer to suggest


def test_a_search_that_finds_shows_no_advice(browse, reader, agent_md):
    html = browse(reader).get(URL, {"q": "staging"}).content.decode()

    assert "1 document found" in html
    assert "No documents match" not in html


def test_an_outsider_gets_404_not_advice(browse, outsider, other_tenant, agent_md):
    assert browse(outsider).get(URL, {"q": "zebra"}).status_code == 404


def test_finding_nothing_runs_no_more_queries_than_finding(browse, reader, agent_md):
    client = browse(reader)
    counts = []
    for q in ("staging", "zebra giraffe"):
        client.get(URL, {"q": q})
        with CaptureQueriesContext(connection) as captured:
            assert client.get(URL, {"q": q}).status_code == 200
        counts.append(len(captured))
    assert counts[1] <= counts[0], counts  # no page of rows to read when none matched


@pytest.mark.parametrize(
    ("q", "words"),
    [
        ("deploy", []),
        ("deploy staging", ["deploy", "staging"]),
        ('"deploy staging" or main -draft', ["deploy", "staging", "main"]),
        ("deploy deploy", []),
        ("deploy or", []),
    ],
)
def test_the_words_suggested_alone(q, words):
    assert query_words(q) == words

"""Search over the current documents of a tenant: their bodies and their paths.

On PostgreSQL a full-text search, ranked (`ts_rank`) and with the matches marked in
a snippet (`ts_headline`), over the `tsvector` that migration `0013_search_index`
stores with each document and indexes with GIN (`agentdocs.sql.search`), so a tenant
of ten thousand documents answers as fast as a small one. The path is part of the
vector (weighted above the body, with `/`, `.`, `_` and `-` read as spaces), so a
term that is only in a path finds it. On SQLite a simple fallback: a
case-insensitive substring of the path or the body, with a snippet around the first
match in the body.

Either way a hit's snippet is plain text and its matches are character ranges
(`highlights`); the pages and the API mark them as they need.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.search import (
    SearchHeadline,
    SearchQuery,
    SearchRank,
    SearchVector,
)
from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    F,
    FloatField,
    Func,
    Q,
    QuerySet,
    TextField,
    Value,
    When,
)
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Greatest, Lower, StrIndex, Substr
from django.db.models.lookups import GreaterThan

from agentdocs.core.errors import InvalidInput
from agentdocs.models import Document, Project, Tenant
from agentdocs.sql import search as search_sql

MAX_QUERY_LENGTH = 200
# The text search configuration of the vector, the query and the snippet; the index
# in migration 0013_search_index is built with the same expression.
CONFIG = "english"
# Marks around a match in a PostgreSQL snippet, turned into `highlights` here: control
# characters, which Markdown bodies do not hold, so no text can fake a match.
_START, _STOP = "\x02", "\x03"
# The SQLite snippet: this many characters before the first match, this many in all.
_BEFORE, _SNIPPET_LENGTH = 60, 200


def validate_search_query(q: str | None) -> str:
    """The query text, stripped; InvalidInput naming `q` when it is empty or too long."""
    text = (q or "").strip()
    if not text:
        raise InvalidInput("`q` is required: the words to search for.", field="q")
    if len(text) > MAX_QUERY_LENGTH:
        raise InvalidInput(
            f"`q` is {len(text)} characters long; a search takes at most {MAX_QUERY_LENGTH}.",
            field="q",
        )
    return text


def search_vector() -> CombinedExpression:
    """The searched text of a document: its path (weight A) and body (weight B).

    Migration 0013_search_index stores exactly this expression in a column (with a
    GIN index); change both together: tests/sql/test_search.py compares them.
    """
    path_words = Func(
        F("path"), Value("/._-"), Value("    "), function="translate", output_field=TextField()
    )
    return SearchVector(path_words, config=CONFIG, weight="A") + SearchVector(
        "body", config=CONFIG, weight="B"
    )


@dataclass(frozen=True)
class SearchHit:
    """One matching document: where it is, its version, and a snippet of its text
    with the matches as ``[start, end)`` character ranges of the snippet."""

    project: str
    path: str
    version: int
    snippet: str
    highlights: tuple[tuple[int, int], ...]
    rank: float


def _live_documents(*, tenant: Tenant, project: Project | None) -> QuerySet[Document]:
    documents = Document.objects.filter(project__tenant=tenant, is_deleted=False)
    if project is not None:
        documents = documents.filter(project=project)
    return documents


def _postgres_search(documents: QuerySet[Document], q: str) -> QuerySet:
    query = SearchQuery(q, config=CONFIG, search_type="websearch")
    vector = search_sql.stored_search_vector()
    return (
        documents.annotate(search=vector)
        .filter(search=query)
        .annotate(
            snippet_cut=Value(False),  # ts_headline's fragments are whole words
            rank=SearchRank(vector, query),
            snippet=SearchHeadline(
                "body",
                query,
                config=CONFIG,
                start_sel=_START,
                stop_sel=_STOP,
                max_words=35,
                min_words=15,
                max_fragments=2,
                fragment_delimiter=" … ",
            ),
        )
    )


def _substring_search(documents: QuerySet[Document], q: str) -> QuerySet:
    """The fallback: the query as one case-insensitive substring of the path or body.

    A path match ranks above a body match. The snippet is cut in the database, so a
    long body is never read whole; its first match is marked in `search_hits`.
    """
    at = StrIndex(Lower("body"), Value(q.lower()))
    return documents.filter(Q(path__icontains=q) | Q(body__icontains=q)).annotate(
        rank=Case(
            When(path__icontains=q, then=Value(1.0)),
            default=Value(0.5),
            output_field=FloatField(),
        ),
        # One character more on each side: `search_hits` sees whether a cut fell
        # inside a word, and starts and ends the snippet on whole words.
        snippet=Substr("body", Greatest(at - _BEFORE - 1, Value(1)), _SNIPPET_LENGTH + 2),
        snippet_cut=Case(
            When(GreaterThan(at - _BEFORE, 1), then=Value(True)),
            default=Value(False),
            output_field=BooleanField(),
        ),
    )


def document_search(*, tenant: Tenant, q: str, project: Project | None = None) -> QuerySet:
    """The tenant's current documents (only ``project``'s when given) that match ``q``,
    best first, as rows for `search_hits`: a page of them costs a count and one
    query, whatever the number of documents.

    Every member reads every project of the tenant, so the tenant is the scope; the
    caller has checked the member's access to it.
    """
    q = validate_search_query(q)
    documents = _live_documents(tenant=tenant, project=project)
    if connection.vendor == "postgresql":
        matches = _postgres_search(documents, q)
    else:
        matches = _substring_search(documents, q)
    return matches.order_by("-rank", "project__slug", "path").values(
        "project__slug", "path", "version", "snippet", "snippet_cut", "rank"
    )


def _marked(snippet: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A PostgreSQL snippet without its marks, and the ranges they marked."""
    text: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    start: int | None = None
    for char in snippet:
        if char == _START:
            start = length
        elif char == _STOP:
            if start is not None and length > start:
                spans.append((start, length))
            start = None
        else:
            text.append(char)
            length += 1
    return "".join(text), tuple(spans)


def _first_match(snippet: str, q: str) -> tuple[tuple[int, int], ...]:
    at = snippet.lower().find(q.lower())
    return ((at, at + len(q)),) if at >= 0 else ()


def _whole_words(raw: str, *, cut: bool, q: str) -> str:
    """The SQLite snippet started and ended on whole words. ``raw`` holds one
    character more on each side than the snippet (the first only when ``cut``, the
    body going on before it): a word a cut fell inside is left out, unless it holds
    the match."""
    before = ""
    if cut:
        before, raw = raw[:1], raw[1:]
    text, after = raw[:_SNIPPET_LENGTH], raw[_SNIPPET_LENGTH : _SNIPPET_LENGTH + 1]
    if before.isalnum() and text[:1].isalnum():
        space = next((i for i, char in enumerate(text) if char.isspace()), len(text))
        if space <= text.lower().find(q.lower()):
            text = text[space:]
    if after.isalnum() and text[-1:].isalnum():
        space = max((i for i, char in enumerate(text) if char.isspace()), default=-1)
        found = text.lower().find(q.lower())
        if space > 0 and (found < 0 or space >= found + len(q)):
            text = text[:space]
    return text.strip() if cut or after else text


def search_hits(rows: Iterable[dict[str, Any]], *, q: str) -> list[SearchHit]:
    """The rows of `document_search` (one page of them) as hits with their highlights."""
    q = q.strip()
    hits = []
    for row in rows:
        raw = row["snippet"] or ""
        if connection.vendor == "postgresql":
            snippet, highlights = _marked(raw)
        else:
            snippet = _whole_words(raw, cut=bool(row.get("snippet_cut")), q=q)
            highlights = _first_match(snippet, q)
        hits.append(
            SearchHit(
                project=row["project__slug"],
                path=row["path"],
                version=row["version"],
                snippet=snippet,
                highlights=highlights,
                rank=round(float(row["rank"]), 6),
            )
        )
    return hits


def grouped_by_project(hits: Sequence[SearchHit]) -> list[tuple[str, list[SearchHit]]]:
    """Hits grouped by project, the projects in the order of their best hit."""
    groups: dict[str, list[SearchHit]] = {}
    for hit in hits:
        groups.setdefault(hit.project, []).append(hit)
    return list(groups.items())


def search_syntax() -> str:
    """How `document_search` reads a query on this database, for the page that says
    what to try when nothing matched: "words" (PostgreSQL's web search syntax: every
    word, by its stem; "a phrase", `or`, `-word`) or "substring" (SQLite: the whole
    query as one case-insensitive piece of text)."""
    return "words" if connection.vendor == "postgresql" else "substring"


def query_words(q: str) -> list[str]:
    """The words of a query that asks for more than one, each a search of its own to
    suggest when the whole query found nothing (`or` and `-excluded` words left out)."""
    words = [word.strip('"') for word in q.split()]
    kept = [word for word in words if word and word.lower() != "or" and not word.startswith("-")]
    distinct = list(dict.fromkeys(kept))
    return distinct if len(distinct) > 1 else []

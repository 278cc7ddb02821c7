"""The stored full-text vector of a document, on PostgreSQL.

Migration 0013_search_index adds `search_vector` to the documents table as a
generated column (what `agentdocs.selectors.search.search_vector()` computes) with a
GIN index. The model does not declare it, because SQLite has no such column; the
search names it here. Ranking ten thousand matches on the stored vector takes
milliseconds, where computing each body's vector again took seconds.
"""

from __future__ import annotations

from django.contrib.postgres.search import SearchVectorField
from django.db.models.expressions import RawSQL

COLUMN = "search_vector"


def stored_search_vector() -> RawSQL:
    """The document's stored vector, for `filter(...=SearchQuery)` and `SearchRank`."""
    return RawSQL(f'"agentdocs_document"."{COLUMN}"', [], output_field=SearchVectorField())

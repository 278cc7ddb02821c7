"""`agentdocs.sql.search` against its ORM twin: the stored `search_vector` column that
migration 0013_search_index adds is what `selectors.search.search_vector()` computes,
after a create and after a write."""

from __future__ import annotations

import pytest
from django.db import connection

from agentdocs.models import Document
from agentdocs.selectors.search import search_vector
from agentdocs.services import documents as document_service
from agentdocs.sql.search import stored_search_vector
from tests.conftest import need_service


@pytest.mark.postgres
def test_the_stored_vector_is_the_orm_expression(project, make_document, writer):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the stored vector is PostgreSQL's; set DATABASE_URL to a PostgreSQL database",
    )
    make_document(project, "runbooks/roll-back_now.md", "Deploying the blue pipeline.\n")
    doc = make_document(project, "agent.md", "first text")
    document_service.document_write(
        document=doc, body="Second text, quite different.", base_version=1, user=writer
    )
    rows = Document.objects.annotate(
        stored=stored_search_vector(), computed=search_vector()
    ).values_list("path", "stored", "computed")
    for path, stored, computed in rows:
        assert stored == computed, path
    assert "'roll':2A" in dict((p, s) for p, s, _ in rows)["runbooks/roll-back_now.md"]

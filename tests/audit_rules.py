"""What the audit chain's tests share."""

from __future__ import annotations

import pytest

from agentdocs.services import documents as document_service


@pytest.fixture
def rules(project, writer, make_document):
    """`agent.md` at version 4, its bodies not plain ASCII (the export is UTF-8)."""
    document = make_document(project, "agent.md", "v1")
    for version in (1, 2, 3):
        document = document_service.document_write(
            document=document,
            body=f"v{version + 1} ✓ «rules»",
            base_version=version,
            user=writer,
            reason="edit",
        ).document
    return document

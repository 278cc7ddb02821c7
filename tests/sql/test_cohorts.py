"""`agentdocs.sql.cohorts.document_version` against its twin in Python: the version of
a document a record's run saw, read from the record's JSON (the block's layers first,
then the manifest's entries)."""

from __future__ import annotations

import pytest

from agentdocs.models import BindingRecord
from agentdocs.sql.cohorts import document_version
from tests.outcome_runs import bound_run

pytestmark = pytest.mark.django_db


def seen_version(record: dict, path: str) -> str | None:
    block = record.get("memory_block") or {}
    for layer in block.get("layers") or []:
        if layer.get("path") == path and layer.get("version") is not None:
            return str(layer["version"])
    for entry in record.get("context") or []:
        document = entry.get("document") or {}
        if document.get("path") == path:
            return None if document.get("version") is None else str(document["version"])
    return None


def test_the_sql_reads_what_the_python_reads(project):
    runs = [
        bound_run(project, "a", versions={"agent.md": 3, ".AGENTS/x.md": 1}),
        bound_run(project, "b", versions={"other.md": 2}),
        bound_run(project, "c", versions={"agent.md": 12}),
    ]
    manifest_only = bound_run(project, "d")
    manifest_only.record = {
        "memory_block": None,
        "context": [{"name": "n", "document": {"path": "agent.md", "version": 7}}],
    }
    manifest_only.save()
    bare = bound_run(project, "e")
    bare.record = {"memory_block": None, "context": []}
    bare.save()
    runs += [manifest_only, bare]
    for path in ("agent.md", ".AGENTS/x.md", "missing.md"):
        found = dict(
            BindingRecord.objects.filter(project=project)
            .annotate(seen=document_version(path))
            .values_list("pk", "seen")
        )
        expected = {run.pk: seen_version(run.record, path) for run in runs}
        assert found == expected, path

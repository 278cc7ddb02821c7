"""What a run saw, stored beside its binding record: the binding service fills the
columns from the record it signs (which stays as it was), and the migration fills them
for the records stored before them, the same way."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from agentdocs.core.bindings import canonical_json
from agentdocs.models import BindingRecord
from agentdocs.selectors.binding_memory_block import MemoryBlockRequest
from agentdocs.services import bindings as binding_service
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from agentdocs.services import policy as policy_service

fill = importlib.import_module("agentdocs.migrations.0030_binding_cohorts").fill

pytestmark = pytest.mark.django_db

COLUMNS = ("label", "recipe", "document_versions")


def _runs(tenant, project, admin, writer) -> list[BindingRecord]:
    doc = document_service.document_create(
        project=project, path="agent.md", body="one\n", user=writer, reason="a"
    )
    document_service.document_write(document=doc, body="two\n", base_version=1, user=writer)
    label_service.label_move(document=doc, name="canary", version=1, user=admin, reason="c")
    policy_service.recipe_create(tenant=tenant, name="lean", params={}, profiles={}, user=admin)

    def bind(process: str, block: MemoryBlockRequest | None = None) -> BindingRecord:
        return binding_service.binding_create(
            tenant=tenant,
            project=project,
            user=writer,
            process=process,
            manifest={"local": []},
            memory_block=block,
        ).record

    return [
        bind("plain"),
        bind("canary", MemoryBlockRequest(recipe="lean", label="canary")),
        bind("latest", MemoryBlockRequest()),
    ]


def test_a_bound_run_keeps_what_it_saw_beside_its_signed_record(tenant, project, admin, writer):
    plain, canary, latest = _runs(tenant, project, admin, writer)
    stored = {
        run.process: run
        for run in BindingRecord.objects.filter(project=project).only("process", *COLUMNS)
    }
    assert (stored["canary"].label, stored["canary"].recipe) == ("canary", "lean")
    assert stored["canary"].document_versions["agent.md"] == "1"
    assert (stored["latest"].label, stored["latest"].recipe) == ("", "")
    assert stored["latest"].document_versions["agent.md"] == "2"
    assert (stored["plain"].label, stored["plain"].recipe) == ("", "")
    # Derived, not evidence: the record's JSON names none of the columns, and its
    # signature is still the one over that JSON.
    for run in (plain, canary, latest):
        again = BindingRecord.objects.get(pk=run.pk)
        assert canonical_json(again.record) == canonical_json(run.record)
        assert "document_versions" not in again.record
        assert again.signature == run.signature


def test_the_migration_fills_the_columns_as_the_binding_service_does(
    tenant, project, admin, writer
):
    _runs(tenant, project, admin, writer)
    bound = {
        run.pk: tuple(getattr(run, column) for column in COLUMNS)
        for run in BindingRecord.objects.filter(project=project)
    }
    # Records stored before the columns (BindingRecord keeps no history: update is fine).
    BindingRecord.objects.update(label="", recipe="", document_versions={})

    fill(apps, None)

    filled = {
        run.pk: tuple(getattr(run, column) for column in COLUMNS)
        for run in BindingRecord.objects.filter(project=project)
    }
    assert filled == bound
    assert any(versions for _, _, versions in filled.values())

"""The size caps of a binding record (`AGENTDOCS_BINDING_MAX_RECORD_BYTES`,
`AGENTDOCS_BINDING_MAX_ARCHIVE_BYTES`): a bind over either is refused with 413
`too_large` naming the field that made the record large, and nothing is stored."""

from __future__ import annotations

import pytest
from django.core.files.storage import default_storage

from agentdocs.core.bindings import stored_json_bytes
from agentdocs.models import BindingRecord
from agentdocs.services import archival

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web/bindings/"
# created_at may lose its microseconds (".123456") from one bind to the next: the
# margin around a measured size is larger than that, and small beside the record.
MARGIN = 32


@pytest.fixture
def agents_folder(project, make_document):
    """Forty `.AGENTS/` documents: each one an input and a layer of the Memory Block."""
    for number in range(40):
        make_document(project, f".AGENTS/note-{number:02d}.md", f"# Note {number}\nKeep it.\n")
    make_document(project, "AGENTS.md", "# Agents\n")


def bind(client, **body):
    return client.post(BASE, {"process": "run-1", **body}, format="json")


def bind_with_block(client):
    return bind(client, manifest={"local": ["AGENTS.md"]}, memory_block={})


def _measured_row_and_archive(client) -> tuple[int, int]:
    """The row and archive size of the bind the tests repeat, measured by binding it
    once with no cap; the record is then removed again."""
    response = bind_with_block(client)
    assert response.status_code == 201, response.content
    record = BindingRecord.objects.get()
    sizes = stored_json_bytes(record.record), len(archival.archive_bytes(record))
    record.delete()
    return sizes


def _assert_refused(response, *, field: str, setting: str, cap: int) -> dict:
    assert response.status_code == 413, response.content
    body = response.json()
    assert body["error"] == "too_large"
    assert body["field"] == field
    assert body["limit"] == cap and body["bytes"] > cap
    assert setting in body["detail"] and f"{cap:,}" in body["detail"]
    assert "Nothing was stored" in body["detail"]
    assert not BindingRecord.objects.exists()
    return body


def test_a_memory_block_over_the_record_cap_is_refused_naming_it(
    api, writer, agents_folder, settings
):
    client = api(writer)
    row, _ = _measured_row_and_archive(client)
    settings.AGENTDOCS_BINDING_MAX_RECORD_BYTES = row - MARGIN
    body = _assert_refused(
        bind_with_block(client),
        field="memory_block",
        setting="AGENTDOCS_BINDING_MAX_RECORD_BYTES",
        cap=row - MARGIN,
    )
    assert "40 `.AGENTS/` documents" in body["detail"]
    # The same manifest without the block fits: the block was what made it large.
    assert bind(client, manifest={"local": ["AGENTS.md"]}).status_code == 201


def test_a_record_just_under_the_cap_is_stored_and_archived(
    api, writer, agents_folder, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    client = api(writer)
    row, archive = _measured_row_and_archive(client)
    settings.AGENTDOCS_BINDING_MAX_RECORD_BYTES = row + MARGIN
    settings.AGENTDOCS_BINDING_MAX_ARCHIVE_BYTES = archive + MARGIN
    response = bind_with_block(client)
    assert response.status_code == 201, response.content
    record = BindingRecord.objects.get()
    # What the archival task runs, in this process whatever the broker.
    archival.binding_record_archive(record_id=record.pk)
    record.refresh_from_db()
    assert record.archived_at is not None
    with default_storage.open(record.archive_path, "rb") as stored:
        assert len(stored.read()) <= archive + MARGIN


def test_a_manifest_with_too_many_sources_is_refused_naming_the_manifest(
    api, writer, project, settings
):
    settings.AGENTDOCS_BINDING_MAX_RECORD_BYTES = 4096
    manifest = {"local": [f"docs/missing-{n:03d}.md" for n in range(100)]}
    body = _assert_refused(
        bind(api(writer), manifest=manifest),
        field="manifest",
        setting="AGENTDOCS_BINDING_MAX_RECORD_BYTES",
        cap=4096,
    )
    assert "100 sources" in body["detail"]


def test_a_large_manifest_is_named_even_when_a_memory_block_is_bound_too(
    api, writer, agents_folder, settings
):
    settings.AGENTDOCS_BINDING_MAX_RECORD_BYTES = 4096
    manifest = {"local": [f"docs/missing-{n:03d}.md" for n in range(100)]}
    _assert_refused(
        bind(api(writer), manifest=manifest, memory_block={}),
        field="manifest",
        setting="AGENTDOCS_BINDING_MAX_RECORD_BYTES",
        cap=4096,
    )


def test_the_archive_cap_is_checked_when_binding_not_in_the_worker(
    api, writer, agents_folder, settings
):
    client = api(writer)
    _, archive = _measured_row_and_archive(client)
    settings.AGENTDOCS_BINDING_MAX_ARCHIVE_BYTES = archive - MARGIN
    _assert_refused(
        bind_with_block(client),
        field="memory_block",
        setting="AGENTDOCS_BINDING_MAX_ARCHIVE_BYTES",
        cap=archive - MARGIN,
    )


def test_the_archive_bound_is_never_below_the_archive(api, writer, agents_folder):
    bind_with_block(api(writer))
    record = BindingRecord.objects.get()
    actual = len(archival.archive_bytes(record))
    assert actual <= archival.archive_bytes_bound(record.record) <= actual + 20


def test_outsiders_get_404_whatever_the_cap(api, outsider, other_tenant, agents_folder, settings):
    settings.AGENTDOCS_BINDING_MAX_RECORD_BYTES = 10
    response = bind_with_block(api(outsider))
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert not BindingRecord.objects.exists()

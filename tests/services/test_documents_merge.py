"""Merging a stale write onto the current version (document_write / document_edit with
``merge``): clean merges are saved through the one write path, conflicts change nothing."""

from __future__ import annotations

import pytest

from agentdocs.core.errors import (
    InvalidInput,
    Locked,
    MergeConflict,
    SecretDetected,
    VersionConflict,
)
from agentdocs.models import ChangeType, Document
from agentdocs.services import document_locks
from agentdocs.services import documents as svc

pytestmark = pytest.mark.django_db

BASE = "# Rules\n\n- one\n- two\n- three\n- four\n"


@pytest.fixture
def doc(project, writer, admin):
    """Version 1 by bob; version 2 by alice changed the first rule."""
    document = svc.document_create(
        project=project, path="agent.md", body=BASE, user=writer, reason="start"
    )
    return svc.document_write(
        document=document,
        body=BASE.replace("- one", "- ONE"),
        base_version=1,
        user=admin,
        reason="alice's change",
    ).document


def test_a_stale_write_with_merge_saves_both_changes_and_records_merged_with(doc, writer):
    saved = svc.document_write(
        document=doc,
        body=BASE.replace("- four", "- FOUR"),
        base_version=1,
        user=writer,
        reason="bob's change",
        merge=True,
    ).document
    assert saved.version == 3 and saved.merged_with == 2
    assert saved.body == "# Rules\n\n- ONE\n- two\n- three\n- FOUR\n"
    latest = saved.history.order_by("-history_id").first()
    assert latest.merged_with == 2 and latest.version == 3
    assert latest.history_user.username == "bob"
    assert latest.history_change_reason == "bob's change"
    assert latest.change_type == ChangeType.WRITTEN
    assert [row.merged_with for row in saved.history.order_by("version")] == [None, None, 2]


def test_without_merge_a_stale_write_is_still_refused(doc, writer):
    with pytest.raises(VersionConflict):
        svc.document_write(document=doc, body="# mine\n", base_version=1, user=writer)
    assert Document.objects.get().version == 2


def test_overlapping_edits_raise_the_conflicts_and_change_nothing(doc, writer):
    with pytest.raises(MergeConflict) as raised:
        svc.document_write(
            document=doc,
            body=BASE.replace("- one", "- uno"),
            base_version=1,
            user=writer,
            merge=True,
        )
    error = raised.value
    assert error.status == 409 and error.code == "merge_conflict" and error.field == "body"
    assert error.as_dict()["conflicts"] == [
        {
            "base": {"start": 3, "lines": ["- one"]},
            "theirs": {"start": 3, "lines": ["- ONE"]},
            "yours": {"start": 3, "lines": ["- uno"]},
        }
    ]
    assert error.current_version == 2 and error.base_version == 1
    document = Document.objects.get()
    assert document.version == 2 and document.body == BASE.replace("- one", "- ONE")
    assert document.history.count() == 2


def test_a_current_write_with_merge_just_saves(doc, writer):
    saved = svc.document_write(
        document=doc, body="# mine\n", base_version=2, user=writer, merge=True
    ).document
    assert saved.version == 3 and saved.body == "# mine\n" and saved.merged_with is None


def test_the_next_ordinary_write_clears_merged_with(doc, writer):
    merged = svc.document_write(
        document=doc, body=BASE + "- five\n", base_version=1, user=writer, merge=True
    ).document
    assert merged.merged_with == 2
    later = svc.document_write(
        document=merged, body="# new\n", base_version=3, user=writer
    ).document
    assert later.merged_with is None


def test_a_merge_that_adds_nothing_writes_no_version(doc, writer):
    saved = svc.document_write(
        document=doc, body=BASE.replace("- one", "- ONE"), base_version=1, user=writer, merge=True
    ).document
    assert saved.version == 2


@pytest.mark.parametrize("base", [3, 99])
def test_a_base_version_that_is_not_in_the_history_is_refused_naming_it(doc, writer, base):
    with pytest.raises(VersionConflict) as raised:
        svc.document_write(document=doc, body="# x\n", base_version=base, user=writer, merge=True)
    assert raised.value.field == "version"
    assert f"Version {base} is not in the document's history" in raised.value.detail
    assert Document.objects.get().version == 2


def test_a_pruned_base_version_is_refused_naming_it(doc, writer):
    doc.history.filter(version=1).delete()
    with pytest.raises(VersionConflict) as raised:
        svc.document_write(document=doc, body="# x\n", base_version=1, user=writer, merge=True)
    assert raised.value.field == "version" and "not in the document's history" in str(raised.value)


def test_a_deleted_document_is_refused_as_for_any_stale_write(doc, writer, admin):
    svc.document_delete(document=doc, base_version=2, user=admin)
    with pytest.raises(VersionConflict):
        svc.document_write(
            document=doc, body=BASE + "- five\n", base_version=1, user=writer, merge=True
        )


def test_another_users_lock_refuses_the_merge(doc, writer, admin):
    document_locks.document_lock(document=doc, user=admin)
    with pytest.raises(Locked):
        svc.document_write(
            document=doc, body=BASE + "- five\n", base_version=1, user=writer, merge=True
        )
    assert Document.objects.get().version == 2


def test_the_merged_text_passes_the_secret_check(doc, writer):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with pytest.raises(SecretDetected):
        svc.document_write(
            document=doc,
            body=BASE + f"- token {token}\n",
            base_version=1,
            user=writer,
            merge=True,
        )
    assert Document.objects.get().version == 2


def test_an_edit_based_on_a_stale_version_is_applied_to_that_version_then_merged(doc, writer):
    saved = svc.document_edit(
        document=doc,
        old="- three",
        new="- THREE",
        base_version=1,
        user=writer,
        reason="edit",
        merge=True,
    )
    assert saved.version == 3 and saved.merged_with == 2
    assert saved.body == "# Rules\n\n- ONE\n- two\n- THREE\n- four\n"
    assert saved.history.order_by("-history_id").first().change_type == ChangeType.EDITED


def test_a_stale_edit_of_the_same_line_conflicts(doc, writer):
    with pytest.raises(MergeConflict):
        svc.document_edit(
            document=doc, old="- one", new="- uno", base_version=1, user=writer, merge=True
        )
    assert Document.objects.get().version == 2


def test_concurrent_merges_of_different_lines_all_land(transactional_db, project, writer):
    from django.db import connection

    from tests.conftest import need_service, run_concurrently
    from tests.services.test_documents_concurrency import WRITERS

    need_service("PostgreSQL", connection.vendor == "postgresql", "row locks need PostgreSQL")
    base = "".join(f"- rule {i}\n\n" for i in range(WRITERS))
    document = svc.document_create(project=project, path="agent.md", body=base, user=writer)

    def write(i: int):
        return svc.document_write(
            document=document,
            body=base.replace(f"- rule {i}\n", f"- rule {i}, edited\n"),
            base_version=1,
            user=writer,
            reason=f"w{i}",
            merge=True,
        ).document

    results = run_concurrently(WRITERS, write)
    assert all(isinstance(result, Document) for result in results), results
    document.refresh_from_db()
    assert document.version == WRITERS + 1
    assert document.body == "".join(f"- rule {i}, edited\n\n" for i in range(WRITERS))
    merged = list(document.history.order_by("version").values_list("merged_with", flat=True))
    assert merged == [None, None, *range(2, WRITERS + 1)]


def test_document_write_returns_the_merge_it_made(doc, writer, django_assert_num_queries):
    written = svc.document_write(
        document=doc,
        body=BASE.replace("- four", "- FOUR"),
        base_version=1,
        user=writer,
        reason="bob's change",
        merge=True,
    )
    assert written.document.version == 3 and written.document.merged_with == 2
    merge = written.merge
    assert merge is not None and merge.base_version == 1
    assert (merge.theirs.version, merge.theirs.author) == (2, "alice")
    assert merge.theirs.reason == "alice's change"
    assert merge.result.text == written.document.body
    assert merge.result.origins() == {"theirs": 1, "yours": 1}


def test_a_current_write_made_no_merge(doc, writer):
    written = svc.document_write(
        document=doc, body=doc.body + "- five\n", base_version=2, user=writer, merge=True
    )
    assert written.merge is None and written.document.merged_with is None


def test_a_resolved_three_way_merge_is_recorded_as_a_merge_with_that_version(doc, writer):
    written = svc.document_write(
        document=doc,
        body=BASE.replace("- one", "- ONE, or 1"),
        base_version=2,
        user=writer,
        reason="resolved",
        merge=True,
        resolves_merge_with=2,
    )
    assert written.merge is None
    saved = Document.objects.get()
    assert saved.version == 3 and saved.merged_with == 2
    assert saved.history.order_by("-history_id").first().merged_with == 2


def test_a_resolution_saved_after_another_write_names_the_later_version(doc, writer, admin):
    svc.document_write(
        document=doc, body=doc.body + "- five\n", base_version=2, user=admin, reason="more"
    )
    written = svc.document_write(
        document=doc,
        body=BASE.replace("- one", "- ONE, or 1"),
        base_version=2,
        user=writer,
        merge=True,
        resolves_merge_with=2,
    )
    assert written.merge is not None and written.merge.theirs.version == 3
    assert written.document.merged_with == 3 and written.document.body.endswith("- five\n")


@pytest.mark.parametrize("theirs", [0, 3, True, "2"])
def test_a_resolution_naming_a_version_past_its_base_is_refused_and_nothing_is_written(
    doc, writer, theirs
):
    with pytest.raises(InvalidInput) as refused:
        svc.document_write(
            document=doc,
            body="# other\n",
            base_version=2,
            user=writer,
            merge=True,
            resolves_merge_with=theirs,
        )
    assert refused.value.field == "theirs_version"
    assert Document.objects.get().version == 2

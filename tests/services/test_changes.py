"""Change request services: state transitions, and concurrent merges on PostgreSQL."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from agentdocs.core.errors import ChangeClosed, MergeConflict, NotApproved, NotFound, OwnChange
from agentdocs.core.hidden_characters import find_hidden
from agentdocs.models import ChangeRequest, ChangeState, Document
from agentdocs.services import changes as change_service
from agentdocs.services import documents as document_service
from tests.conftest import need_service

TEXT = "one\ntwo\nthree\nfour\nfive\n"


@pytest.fixture
def document(project, writer):
    return document_service.document_create(
        project=project, path="agent.md", body=TEXT, user=writer
    )


def _propose(project, user, body, base_version=1):
    return change_service.change_propose(
        project=project,
        path="agent.md",
        body=body,
        base_version=base_version,
        reason="r",
        user=user,
    )


@pytest.mark.django_db
def test_every_state_transition_is_a_history_row(project, document, reader, writer, admin):
    change = _propose(project, reader, TEXT.replace("one", "ONE"))
    assert change.state == ChangeState.OPEN
    change_service.change_review(change=change, user=writer, decision="approve")
    change.refresh_from_db()
    assert change.state == ChangeState.APPROVED
    merged = change_service.change_merge(change=change, user=admin)
    assert merged.state == ChangeState.MERGED and merged.merged_version == 2
    states = list(
        change.history.order_by("history_id").values_list("state", "history_user__username")
    )
    assert states == [("open", "carol"), ("approved", "bob"), ("merged", "alice")]


@pytest.mark.django_db
def test_refusals_change_nothing(project, document, reader, writer):
    change = _propose(project, reader, TEXT.replace("one", "ONE"))
    with pytest.raises(NotApproved):
        change_service.change_merge(change=change, user=writer)
    with pytest.raises(OwnChange):
        change_service.change_review(change=change, user=reader, decision="approve")
    change_service.change_withdraw(change=change, user=reader)
    with pytest.raises(ChangeClosed):
        change_service.change_review(change=change, user=writer, decision="approve")
    assert ChangeRequest.objects.get(pk=change.pk).state == ChangeState.WITHDRAWN
    assert Document.objects.get(pk=document.pk).version == 1


@pytest.mark.django_db
def test_a_deleted_document_takes_no_proposal(project, document, reader, writer):
    document_service.document_delete(document=document, base_version=1, user=writer)
    with pytest.raises(NotFound) as refused:
        _propose(project, reader, "new\n")
    assert refused.value.field == "path"
    assert not ChangeRequest.objects.exists()


@pytest.fixture
def postgres(transactional_db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "concurrent merges need row locks; set DATABASE_URL to a PostgreSQL database",
    )


def _at_once(*works):
    barrier = threading.Barrier(len(works))
    results: list[object] = [None] * len(works)

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[i] = works[i]()
        except Exception as error:  # the outcome under test
            results[i] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(works))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def _approved(project, reader, writer, body):
    change = _propose(project, reader, body)
    change_service.change_review(change=change, user=writer, decision="approve")
    return change


@pytest.mark.postgres
def test_two_approved_requests_merged_at_once_both_land_when_they_do_not_overlap(
    postgres, project, document, reader, writer, admin
):
    first = _approved(project, reader, writer, TEXT.replace("one", "ONE"))
    second = _approved(project, reader, writer, TEXT.replace("five", "FIVE"))
    results = _at_once(
        lambda: change_service.change_merge(change=first, user=admin),
        lambda: change_service.change_merge(change=second, user=writer),
    )
    assert all(isinstance(r, ChangeRequest) for r in results), results
    current = Document.objects.get(pk=document.pk)
    assert current.version == 3
    assert current.body == "ONE\ntwo\nthree\nfour\nFIVE\n"
    assert sorted(r.merged_version for r in results) == [2, 3]  # type: ignore[union-attr]
    assert current.history.count() == 3


@pytest.mark.postgres
def test_two_approved_overlapping_requests_merged_at_once_one_wins_the_other_conflicts(
    postgres, project, document, reader, writer, admin
):
    first = _approved(project, reader, writer, TEXT.replace("three", "THREE"))
    second = _approved(project, reader, writer, TEXT.replace("three", "3"))
    results = _at_once(
        lambda: change_service.change_merge(change=first, user=admin),
        lambda: change_service.change_merge(change=second, user=writer),
    )
    merged = [r for r in results if isinstance(r, ChangeRequest)]
    conflicts = [r for r in results if isinstance(r, MergeConflict)]
    assert len(merged) == 1 and len(conflicts) == 1, results
    assert conflicts[0].extra["current_version"] == 2
    current = Document.objects.get(pk=document.pk)
    assert current.version == 2 and current.body == merged[0].body
    loser = first if merged[0].pk == second.pk else second
    assert ChangeRequest.objects.get(pk=loser.pk).state == ChangeState.APPROVED


@pytest.mark.postgres
def test_one_request_merged_twice_at_once_merges_once(
    postgres, project, document, reader, writer, admin
):
    change = _approved(project, reader, writer, TEXT.replace("one", "ONE"))
    results = _at_once(
        lambda: change_service.change_merge(change=change, user=admin),
        lambda: change_service.change_merge(change=change, user=writer),
    )
    assert sum(isinstance(r, ChangeRequest) for r in results) == 1
    assert sum(isinstance(r, ChangeClosed) for r in results) == 1
    assert Document.objects.get(pk=document.pk).version == 2


@pytest.mark.django_db
@pytest.mark.parametrize("shift", range(8))
def test_a_long_reason_cut_inside_an_emoji_sequence_still_merges(
    project, document, reader, writer, admin, shift
):
    """The merge's history reason cuts a long reason; a cut between an emoji and its
    joiner or inside a flag's tags must not leave a hidden character (issue 34)."""
    flag = "🏴" + "".join(chr(0xE0000 + ord(c)) for c in "gbwls") + "\U000e007f"
    reason = "r" * (420 + shift) + ("👨\u200d👩\u200d👧" + flag) * 4
    change = change_service.change_propose(
        project=project,
        path="agent.md",
        body=TEXT.replace("one", "ONE"),
        base_version=1,
        reason=reason[: change_service.MAX_REASON],
        user=reader,
    )
    change_service.change_review(change=change, user=writer, decision="approve")
    merged = change_service.change_merge(change=change, user=admin)
    assert merged.state == ChangeState.MERGED
    stored = Document.history.get(version=2).history_change_reason
    assert stored.endswith(f"(change #{change.pk}, approved by bob, merged by alice)")
    assert not find_hidden(stored)

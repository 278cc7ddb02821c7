"""Bounds on labels (issue 34, finding 8): a document carries at most
`AGENTDOCS_MAX_LABELS_PER_DOCUMENT` labels (409 `too_many_labels` with the `limit`, counted
under the document's row lock), in a direct move and in a change request's merge alike,
and its labels list is paged like every list, at a constant number of queries."""

from __future__ import annotations

import pytest
from django.db import connection

from agentdocs.core.errors import TooManyLabels
from agentdocs.models import ChangeRequest, DocumentLabel
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from agentdocs.services import policy as policy_service
from tests.api.test_documents import assert_error
from tests.conftest import need_service, run_concurrently

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
DOC = f"{BASE}/documents/agent.md"


@pytest.fixture
def agent_md(project, writer, make_document):
    """agent.md at version 2."""
    document = make_document(project, "agent.md", "one\n", user=writer)
    return document_service.document_write(
        document=document, body="two\n", base_version=1, user=writer, reason="next"
    ).document


def fill(document, user, count: int, *, start: int = 0) -> None:
    """``count`` labels more on the document (`label-000`, ...), written in one go."""
    DocumentLabel.objects.bulk_create(
        DocumentLabel(document=document, name=f"label-{n:03}", version=1, moved_by=user)
        for n in range(start, start + count)
    )


def move(api, user, label, version=1):
    return api(user).put(f"{DOC}/labels/{label}", {"version": version}, format="json")


def test_past_the_default_cap_a_new_label_is_409_and_moving_one_is_not_adding(
    api, agent_md, writer
):
    fill(agent_md, writer, 49)
    assert move(api, writer, "canary").status_code == 201  # the 50th
    body = assert_error(move(api, writer, "staging"), 409, "too_many_labels", "label")
    assert body["limit"] == 50 and "AGENTDOCS_MAX_LABELS_PER_DOCUMENT" in body["detail"]
    assert not DocumentLabel.objects.filter(name="staging").exists()
    # Moving a label the document has adds none.
    assert move(api, writer, "canary", 2).status_code == 200
    assert move(api, writer, "label-000", 2).status_code == 200
    # After a removal there is room again.
    assert api(writer).delete(f"{DOC}/labels/label-001").status_code == 204
    assert move(api, writer, "staging").status_code == 201
    assert DocumentLabel.objects.filter(document=agent_md).count() == 50


def test_the_cap_is_a_setting(api, agent_md, writer, settings):
    settings.AGENTDOCS_MAX_LABELS_PER_DOCUMENT = 2
    assert move(api, writer, "a").status_code == 201
    assert move(api, writer, "b").status_code == 201
    assert assert_error(move(api, writer, "c"), 409, "too_many_labels")["limit"] == 2


def test_an_outsider_gets_404_not_409_at_the_cap(
    api, agent_md, writer, outsider, other_tenant, settings
):
    settings.AGENTDOCS_MAX_LABELS_PER_DOCUMENT = 1
    fill(agent_md, writer, 1)
    assert_error(move(api, outsider, "canary"), 404, "not_found")
    assert_error(api(outsider).get(f"{DOC}/labels/", {"page": 2}), 404, "not_found")


def test_a_merge_that_creates_a_label_past_the_cap_is_refused_and_stays_open(
    api, agent_md, writer, admin, tenant, settings
):
    settings.AGENTDOCS_MAX_LABELS_PER_DOCUMENT = 3
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["agent.md"]', user=admin
    )
    proposed = move(api, writer, "staging")
    assert proposed.status_code == 202, proposed.content
    change_id = proposed.json()["id"]
    api(admin).post(f"{BASE}/changes/{change_id}/reviews", {"decision": "approve"}, format="json")
    fill(agent_md, admin, 3)  # the document filled up since the proposal
    merge = api(writer).post(f"{BASE}/changes/{change_id}/merge")
    assert assert_error(merge, 409, "too_many_labels", "label")["limit"] == 3
    assert ChangeRequest.objects.get().state == "approved"
    assert not DocumentLabel.objects.filter(name="staging").exists()
    # With room again, it merges.
    DocumentLabel.objects.filter(name="label-000").delete()
    assert api(writer).post(f"{BASE}/changes/{change_id}/merge").status_code == 200
    assert DocumentLabel.objects.get(name="staging").version == 1


def test_concurrent_new_labels_never_pass_the_cap(transactional_db, project, writer, settings):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "the cap's race needs row locks; set DATABASE_URL to a PostgreSQL database",
    )
    settings.AGENTDOCS_MAX_LABELS_PER_DOCUMENT = 3
    document = document_service.document_create(
        project=project, path="agent.md", body="one\n", user=writer
    )
    fill(document, writer, 2)

    def add(i: int):
        return label_service.label_move(document=document, name=f"new-{i}", version=1, user=writer)

    results = run_concurrently(6, add)
    assert sum(isinstance(r, label_service.LabelMoved) for r in results) == 1, results
    assert sum(isinstance(r, TooManyLabels) for r in results) == 5, results
    assert DocumentLabel.objects.filter(document=document).count() == 3


def test_the_labels_list_is_paged_like_every_list(api, agent_md, writer, reader):
    fill(agent_md, writer, 120)
    first = api(reader).get(f"{DOC}/labels/")
    assert first.status_code == 200, first.content
    page = first.json()
    assert list(page) == [
        "path",
        "latest",
        "labels",
        "count",
        "count_exact",
        "next",
        "previous",
        "results",
    ]
    assert page["count"] == 121 and page["count_exact"] is True and page["previous"] is None
    assert page["latest"]["label"] == "latest" and page["latest"]["version"] == 2
    assert len(page["results"]) == 50 and page["results"][0]["label"] == "latest"
    # `labels` holds the page's named labels; `results` the same after latest.
    assert page["results"][1:] == page["labels"] and len(page["labels"]) == 49
    names = [item["label"] for item in page["results"]]
    url = page["next"]
    while url:
        page = api(reader).get(url).json()
        assert page["latest"]["label"] == "latest" and page["results"] == page["labels"]
        names += [item["label"] for item in page["results"]]
        url = page["next"]
    assert names == ["latest"] + [f"label-{n:03}" for n in range(120)]
    small = api(reader).get(f"{DOC}/labels/", {"page_size": 10, "page": 2}).json()
    assert [item["label"] for item in small["results"]] == [f"label-{n:03}" for n in range(9, 19)]
    assert_error(api(reader).get(f"{DOC}/labels/", {"page": 99}), 404, "not_found", "page")
    assert_error(api(reader).get(f"{DOC}/labels/", {"page_size": 0}), 400, "invalid", "page_size")


@pytest.mark.parametrize("size", [1, 150])
def test_the_labels_list_reads_the_same_queries_however_many_labels(
    api, agent_md, writer, reader, size, django_assert_num_queries
):
    fill(agent_md, writer, size)
    client = api(reader)
    client.get(f"{DOC}/labels/")
    # The access row with the token, the document, a count, the page (with who moved
    # each label; each row knows its document).
    with django_assert_num_queries(4):
        response = client.get(f"{DOC}/labels/")
    assert response.status_code == 200
    assert len(response.json()["results"]) == min(size + 1, 50)

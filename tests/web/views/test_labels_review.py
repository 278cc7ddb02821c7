"""The pages' side of issue 34 for labels: the document page removes a label through
the same rules and review gate as the API, a new label past
`AGENTDOCS_MAX_LABELS_PER_DOCUMENT` is refused beside the field, the labels are shown a
page at a time, and the change page shows an approval that no longer counts and refuses
the merge as the API does."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from agentdocs.models import ChangeRequest, DocumentLabel, Role
from agentdocs.services import changes as change_service
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from agentdocs.services import policy as policy_service
from agentdocs.services import tenancy as tenant_service

pytestmark = pytest.mark.django_db

PAGE = "/t/acme/web/doc/agent.md"
MOVE = "/t/acme/web/label/agent.md"
REMOVE = "/t/acme/web/label-remove/agent.md"


@pytest.fixture
def labelled(agent_md, writer, admin):
    """agent.md at v2, canary at v1 and production at v2."""
    document = document_service.document_write(
        document=agent_md, body="# Web rules\n\n- Use spaces.\n", base_version=1, user=writer
    ).document
    label_service.label_move(document=document, name="canary", version=1, user=writer)
    label_service.label_move(document=document, name="production", version=2, user=admin)
    return document


@pytest.fixture
def reviewed(tenant, admin):
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["agent.md"]', user=admin
    )


def test_a_writer_removes_a_label_on_the_page(browse, writer, labelled):
    client = browse(writer)
    assert 'aria-label="Label removal"' in client.get(PAGE).content.decode()
    response = client.post(REMOVE, {"label": "canary", "reason": "over"})
    assert response.status_code == 302 and response["Location"] == PAGE
    assert not DocumentLabel.objects.filter(name="canary").exists()
    row = DocumentLabel.history.filter(name="canary").latest("history_id")
    assert row.change_type == "deleted" and row.history_change_reason == "over"


def test_under_review_the_page_proposes_the_removal(browse, writer, admin, labelled, reviewed):
    response = browse(writer).post(REMOVE, {"label": "canary", "reason": "over"})
    change = ChangeRequest.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/changes/{change.pk}/")
    assert change.label == "canary" and change.label_removal and change.base_version == 1
    assert DocumentLabel.objects.filter(name="canary").exists()
    page = browse(writer).get(response["Location"]).content.decode()
    assert 'data-label-action="remove"' in page and "removes the label" in page
    # Approved and merged on the pages, the label is gone.
    change_page = response["Location"]
    assert browse(admin).post(f"{change_page}review/", {"decision": "approve"}).status_code == 302
    assert browse(writer).post(f"{change_page}merge/").status_code == 302
    assert not DocumentLabel.objects.filter(name="canary").exists()
    # An admin removes directly.
    assert browse(admin).post(REMOVE, {"label": "production"}).status_code == 302
    assert ChangeRequest.objects.count() == 1


def test_removal_refusals_keep_their_status_and_are_shown_beside_the_field(
    browse, writer, reader, outsider, other_tenant, labelled, reviewed
):
    client = browse(writer)
    protected = client.post(REMOVE, {"label": "production"})
    assert protected.status_code == 403
    assert "review.protectedLabels" in protected.content.decode()
    missing = client.post(REMOVE, {"label": "staging"})
    assert missing.status_code == 404
    page = missing.content.decode()
    assert 'id="id_label_remove_form_label_error"' in page and "no label" in page
    assert browse(reader).post(REMOVE, {"label": "canary"}).status_code == 403
    assert 'aria-label="Label removal"' not in browse(reader).get(PAGE).content.decode()
    assert browse(outsider).post(REMOVE, {"label": "canary"}).status_code == 404
    assert DocumentLabel.objects.count() == 2 and not ChangeRequest.objects.exists()


def test_a_new_label_past_the_cap_is_refused_beside_the_field(
    browse, writer, outsider, other_tenant, labelled, settings
):
    settings.AGENTDOCS_MAX_LABELS_PER_DOCUMENT = 2
    refused = browse(writer).post(MOVE, {"label": "staging", "version": 1})
    assert refused.status_code == 409
    page = refused.content.decode()
    assert 'id="id_label_form_label_error"' in page
    assert "AGENTDOCS_MAX_LABELS_PER_DOCUMENT" in page
    assert not DocumentLabel.objects.filter(name="staging").exists()
    # Moving one it has is not adding.
    assert browse(writer).post(MOVE, {"label": "canary", "version": 2}).status_code == 302
    assert browse(outsider).post(MOVE, {"label": "staging", "version": 1}).status_code == 404


def test_the_document_page_shows_its_labels_a_page_at_a_time(
    browse, reader, labelled, django_assert_max_num_queries
):
    DocumentLabel.objects.bulk_create(
        DocumentLabel(document=labelled, name=f"label-{n:03}", version=1) for n in range(60)
    )
    client = browse(reader)
    first = client.get(PAGE).content.decode()
    # `latest`, then 50 of the 62 named labels by name: canary, label-000 to label-048.
    assert first.count("<li data-label=") == 51 and 'aria-label="Pages of labels"' in first
    assert 'data-label="label-048"' in first and 'data-label="label-049"' not in first
    second = client.get(PAGE, {"page": 2}).content.decode()
    assert 'data-label="label-059"' in second and 'data-label="production"' in second
    assert 'data-label="label-000"' not in second
    # The page's queries do not grow with the labels.
    with django_assert_max_num_queries(20) as many:
        client.get(PAGE)
    DocumentLabel.objects.filter(name__startswith="label-").delete()
    with django_assert_max_num_queries(len(many.captured_queries)):
        client.get(PAGE)


def test_the_change_page_shows_an_approval_that_no_longer_counts_and_refuses_the_merge(
    browse, tenant, project, writer, admin, labelled, reviewed
):
    get_user_model().objects.create_user(username="erin", password="erin-password")
    tenant_service.membership_set(tenant=tenant, username="erin", role=Role.WRITER, actor=admin)
    erin = get_user_model().objects.get(username="erin")
    change = change_service.change_propose(
        project=project,
        path="agent.md",
        body="# Web rules\n\n- Use both.\n",
        base_version=2,
        reason="",
        user=writer,
    )
    change_service.change_review(change=change, user=erin, decision="approve")
    url = reverse(
        "change",
        kwargs={"tenant": tenant.slug, "project": change.project.slug, "change_id": change.pk},
    )
    assert "no longer counting" not in browse(admin).get(url).content.decode()
    tenant_service.membership_set(tenant=tenant, username="erin", role=Role.READER, actor=admin)
    page = browse(admin).get(url).content.decode()
    assert "0 of 1 approval" in page and "data-approvals-not-counting" in page
    assert "data-review-not-counting" in page
    refused = browse(admin).post(f"{url}merge/")
    assert refused.status_code == 409 and "not_approved" in refused.content.decode()
    change.refresh_from_db()
    assert change.state == "approved" and change.merged_version is None

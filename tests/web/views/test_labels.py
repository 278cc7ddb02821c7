"""The document page's labels (issue 29): shown next to the versions, moved with the
page's form through the same rules and review gate as the API."""

from __future__ import annotations

import pytest

from agentdocs.models import ChangeRequest, DocumentLabel
from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service
from agentdocs.services import policy as policy_service

pytestmark = pytest.mark.django_db

PAGE = "/t/acme/web/doc/agent.md"
MOVE = "/t/acme/web/label/agent.md"


@pytest.fixture
def two_versions(agent_md, writer):
    return document_service.document_write(
        document=agent_md, body="# Web rules\n\n- Use spaces.\n", base_version=1, user=writer
    ).document


def test_a_writer_moves_a_label_on_the_page_and_it_is_shown(browse, writer, two_versions):
    client = browse(writer)
    page = client.get(PAGE).content.decode()
    assert 'data-label="latest"' in page and 'aria-label="Move a label"' in page
    response = client.post(MOVE, {"label": "canary", "version": 1, "reason": "try v1"})
    assert response.status_code == 302 and response["Location"] == PAGE
    label = DocumentLabel.objects.get()
    assert (label.name, label.version, label.moved_by, label.reason) == (
        "canary",
        1,
        writer,
        "try v1",
    )
    page = client.get(PAGE).content.decode()
    assert 'data-label="canary"' in page and "try v1" in page
    history = client.get("/t/acme/web/history/agent.md").content.decode()
    assert 'data-label="canary"' in history


def test_refusals_keep_their_status_and_are_shown_beside_the_field(
    browse, writer, reader, two_versions
):
    client = browse(writer)
    protected = client.post(MOVE, {"label": "production", "version": 1})
    assert protected.status_code == 403
    assert "review.protectedLabels" in protected.content.decode()
    bad = client.post(MOVE, {"label": "latest", "version": 1})
    assert bad.status_code == 400 and "latest" in bad.content.decode()
    missing = client.post(MOVE, {"label": "canary", "version": 9})
    assert missing.status_code == 404
    assert browse(reader).post(MOVE, {"label": "canary", "version": 1}).status_code == 403
    assert 'aria-label="Move a label"' not in browse(reader).get(PAGE).content.decode()
    assert not DocumentLabel.objects.exists()


def test_under_review_the_page_proposes_the_move(browse, writer, admin, tenant, two_versions):
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["agent.md"]', user=admin
    )
    response = browse(writer).post(MOVE, {"label": "staging", "version": 1, "reason": "stage"})
    change = ChangeRequest.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/changes/{change.pk}/")
    assert change.label == "staging" and change.base_version == 1
    assert not DocumentLabel.objects.exists()
    # A tenant admin moves directly.
    assert browse(admin).post(MOVE, {"label": "production", "version": 2}).status_code == 302


def test_the_runs_page_shows_which_label_each_run_saw(
    api, browse, writer, admin, tenant, two_versions
):
    label_service.label_move(document=two_versions, name="canary", version=2, user=writer)
    label_service.label_move(document=two_versions, name="production", version=1, user=admin)
    for label in ("canary", "production"):
        response = api(writer).post(
            "/api/v1/tenants/acme/projects/web/bindings/",
            {"process": f"run-{label}", "manifest": {}, "memory_block": {"label": label}},
            format="json",
        )
        assert response.status_code == 201, response.content
    page = browse(writer).get("/t/acme/web/runs/").content.decode()
    assert "v2 canary" in page and "v1 production" in page


def test_the_form_posts_to_the_page_and_a_refusal_shows_its_names_as_code(
    browse, writer, two_versions
):
    client = browse(writer)
    page = client.get(PAGE).content.decode()
    form = page[page.index('aria-label="Move a label"') - 200 :]
    assert f'<form method="post" action="{PAGE}"' in form
    refused = client.post(PAGE, {"label": "latest", "version": 1})
    assert refused.status_code == 400
    html = refused.content.decode()
    assert "<code>latest</code> is every document" in html
    assert "`latest`" not in html
    moved = client.post(PAGE, {"label": "canary", "version": 1, "reason": "try v1"})
    assert moved.status_code == 302 and moved["Location"] == PAGE
    assert DocumentLabel.objects.get().name == "canary"


def test_a_backticked_error_is_escaped_before_it_becomes_code(browse, writer, two_versions):
    refused = browse(writer).post(PAGE, {"label": "<b>x</b>", "version": 1})
    assert refused.status_code == 400
    html = refused.content.decode()
    assert "<b>x</b>" not in html
    assert "<code>label</code> is a label name" in html

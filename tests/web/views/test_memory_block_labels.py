"""Reading by label on the pages (issue 29): the Memory Block preview and the Export page
take a label as the API does, and the activity page names label moves in words."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from django.utils.html import escape

from agentdocs.services import documents as document_service
from agentdocs.services import labels as label_service

pytestmark = pytest.mark.django_db

PREVIEW = "/t/acme/web/memory-block/"
EXPORT = "/t/acme/web/export/"
API = "/api/v1/tenants/acme/projects/web"


@pytest.fixture
def canary(agent_md, writer, project, make_document):
    """agent.md at v2 ("Use spaces"), labelled canary at v1 ("Use tabs"); a context
    document without the label, so that its layer falls back to latest."""
    document = document_service.document_write(
        document=agent_md, body="# Web rules\n\n- Use spaces.\n", base_version=1, user=writer
    ).document
    label_service.label_move(document=document, name="canary", version=1, user=writer)
    make_document(project, ".AGENTS/overview.md", "What this project is.\n")
    return document


def _layer(page: str, title: str) -> str:
    """The account of the layer titled ``title``, up to the next layer's."""
    start = page.index(f". {title}</h3>")
    end = page.find('<div class="layer ', start)
    return page[start : end if end != -1 else None]


def _label_options(page: str) -> list[str]:
    start = page.index('name="label"')
    return re.findall(r'<option value="([^"]*)"', page[start : page.index("</select>", start)])


def test_the_preview_by_a_label_shows_the_labelled_version_and_the_fallback(
    browse, api, reader, canary
):
    response = browse(reader).get(PREVIEW, {"label": "canary"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "Use tabs." in page and "Use spaces." not in page
    # The whole block is the API preview's, byte for byte.
    from_api = api(reader).get(f"{API}/memory-block/", {"label": "canary"}).json()
    assert escape(from_api["text"]) in page
    # Per layer: the label read by, and whether it fell back to latest.
    notes = _layer(page, "Agent notes")
    assert 'data-layer-label="canary"' in notes and "data-label-fallback" not in notes
    assert "?version=1" in notes
    context = _layer(page, "Project context")
    assert 'data-layer-label="canary"' in context and "data-label-fallback" in context
    assert "no label canary: its latest version is shown" in context
    assert '<option value="canary" selected>' in page


def test_without_a_label_the_preview_is_the_latest_and_offers_the_labels_in_use(
    browse, reader, admin, canary, vance_md, other_tenant, outsider, make_document
):
    label_service.label_move(document=vance_md, name="production", version=1, user=admin)
    theirs = make_document(
        other_tenant.projects.get(slug="_vance"), "agent.md", "# Theirs\n", user=outsider
    )
    label_service.label_move(document=theirs, name="secret-launch", version=1, user=outsider)
    page = browse(reader).get(PREVIEW).content.decode()
    assert "Use spaces." in page and "data-layer-label" not in page
    assert _label_options(page) == ["", "latest", "canary", "production"]
    # `latest` reads every document's latest, whatever a recipe says.
    latest = browse(reader).get(PREVIEW, {"label": "latest"}).content.decode()
    assert "Use spaces." in latest and "data-label-fallback" not in latest


def test_a_bad_label_is_a_400_beside_the_field(browse, reader, canary):
    for client_call in (
        lambda client: client.get(PREVIEW, {"label": "Not A Slug"}),
        lambda client: client.post(PREVIEW, {"label": "-canary"}),
        lambda client: client.get(EXPORT, {"label": "Not A Slug"}),
    ):
        response = client_call(browse(reader))
        assert response.status_code == 400
        page = response.content.decode()
        assert 'id="label-error"' in page and "`label` is a label name" in page
        assert "Use tabs." not in page


def test_the_preview_posted_by_htmx_keeps_the_label_in_the_address(browse, reader, canary):
    response = browse(reader).post(
        PREVIEW,
        {"label": "canary", "client_document_name": "CLAUDE.md", "client_document_body": "x"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert response["HX-Push-Url"] == f"{PREVIEW}?label=canary"


def test_the_export_by_a_label_holds_the_labelled_text(browse, api, reader, canary):
    client = browse(reader)
    page = client.get(EXPORT, {"format": "agents-md", "label": "canary"}).content.decode()
    assert "Use tabs." in page and "Use spaces." not in page
    assert "--format agents-md --label canary" in page
    assert "&amp;label=canary&amp;download=zip" in page
    zipped = client.get(EXPORT, {"format": "agents-md", "label": "canary", "download": "zip"})
    assert zipped.status_code == 200
    from_api = api(reader).get(
        f"{API}/export/", {"format": "agents-md", "label": "canary"}, HTTP_ACCEPT="application/zip"
    )
    assert zipped.content == from_api.content
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        text = archive.read("AGENTS.md").decode()
    assert "Use tabs." in text and "Use spaces." not in text
    one = client.get(EXPORT, {"format": "agents-md", "label": "canary", "file": "AGENTS.md"})
    assert "Use tabs." in one.content.decode()
    # Without the label: the latest.
    latest = client.get(EXPORT, {"format": "agents-md", "download": "zip"})
    with zipfile.ZipFile(io.BytesIO(latest.content)) as archive:
        assert "Use spaces." in archive.read("AGENTS.md").decode()


def test_an_outsider_gets_404_whatever_the_label(browse, outsider, other_tenant, canary):
    client = browse(outsider)
    assert client.get(PREVIEW, {"label": "canary"}).status_code == 404
    assert client.post(PREVIEW, {"label": "canary"}).status_code == 404
    assert client.get(EXPORT, {"label": "canary"}).status_code == 404
    assert client.get(EXPORT, {"label": "canary", "download": "zip"}).status_code == 404


def test_the_preview_runs_as_many_queries_with_1_and_30_labels(
    browse, reader, writer, canary, project, make_document, django_assert_max_num_queries
):
    client = browse(reader)
    url = f"{PREVIEW}?label=canary"
    with django_assert_max_num_queries(7) as few:
        assert client.get(url).status_code == 200
    for index in range(30):
        document = make_document(project, f".AGENTS/extra-{index}.md", f"Extra {index}.\n")
        label_service.label_move(document=document, name=f"label-{index}", version=1, user=writer)
    with django_assert_max_num_queries(len(few.captured_queries)):
        page = client.get(url).content.decode()
    assert "label-29" in _label_options(page)


def test_the_activity_page_shows_actions_in_words_with_their_class(browse, writer, canary):
    label_service.label_remove(document=canary, name="canary", user=writer)
    page = browse(writer).get("/t/acme/-/activity/").content.decode()
    assert '<span class="badge badge-label_moved">label moved</span>' in page
    assert '<span class="badge badge-label_removed">label removed</span>' in page

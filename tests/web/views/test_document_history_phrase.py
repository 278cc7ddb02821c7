"""`?q=` on the history page: the versions that introduced a phrase, the oldest marked
as where it first appeared."""

from __future__ import annotations

from agentdocs.services import documents as document_service

URL = "/t/acme/web/history/agent.md"


def _doc(project, make_document, writer):
    document = make_document(project, "agent.md", "# Rules\n")
    document = document_service.document_write(
        document=document, body="# Rules\n- Use tabs.\n", base_version=1, user=writer, reason="r"
    ).document
    document = document_service.document_write(
        document=document, body="# Rules\n", base_version=2, user=writer
    ).document
    return document_service.document_write(
        document=document, body="# Rules\n- use tabs <now>\n", base_version=3, user=writer
    ).document


def test_the_history_page_names_the_versions_that_introduced_a_phrase(
    browse, reader, project, make_document, writer
):
    _doc(project, make_document, writer)
    response = browse(reader).get(URL, {"q": "use tabs"})
    assert response.status_code == 200
    html = response.content.decode()
    section = html[html.index('id="introductions-title"') : html.index("data-diff-picker")]
    assert section.index("<strong>v4</strong>") < section.index("<strong>v2</strong>")
    assert "<strong>v3</strong>" not in section and "<strong>v1</strong>" not in section
    assert section.count("first introduced here") == 1
    assert section.index("first introduced here") > section.index("<strong>v2</strong>")
    assert "?from=1&amp;to=2" in section


def test_no_match_says_so_and_an_overlong_phrase_is_a_400(
    browse, reader, project, make_document, writer
):
    _doc(project, make_document, writer)
    client = browse(reader)
    assert "No version holds" in client.get(URL, {"q": "spaces"}).content.decode()
    response = client.get(URL, {"q": "x" * 201})
    assert response.status_code == 400
    assert b"at most 200" in response.content


def test_an_outsider_gets_404(browse, outsider, other_tenant, project, make_document, writer):
    _doc(project, make_document, writer)
    assert browse(outsider).get(URL, {"q": "tabs"}).status_code == 404


def test_a_long_history_says_how_far_it_searched_and_links_to_older_versions(
    browse, reader, project, make_document, writer, settings
):
    settings.AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT = 3
    document = make_document(project, "agent.md", "start\n")
    for version in range(1, 7):
        document = document_service.document_write(
            document=document,
            body=f"start\nneedle\nv{version + 1}\n",
            base_version=version,
            user=writer,
        ).document
    client = browse(reader)
    html = client.get(URL, {"q": "needle"}).content.decode()
    assert "Searched the newest 3 versions" in html
    assert "None of the versions searched introduced" in html
    assert "first introduced here" not in html
    assert 'href="?q=needle&amp;before=5">search older ones</a>' in html
    older = client.get(URL, {"q": "needle", "before": "5"}).content.decode()
    assert "Searched versions 2 to 4" in older
    last = client.get(URL, {"q": "needle", "before": "2"}).content.decode()
    assert "Searched versions 1 to 1, back to the first." in last
    last_section = last[last.index('id="introductions-title"') : last.index("data-diff-picker")]
    assert "search older ones" not in last_section
    assert "None of the versions searched introduced" in last_section
    found = client.get(URL, {"q": "needle", "before": "3"}).content.decode()
    assert "<strong>v2</strong>" in found and "first introduced here" in found


def test_a_bad_before_is_a_400_and_an_outsider_gets_404(
    browse, reader, outsider, project, make_document, writer
):
    _doc(project, make_document, writer)
    assert browse(reader).get(URL, {"q": "tabs", "before": "x"}).status_code == 400
    assert browse(outsider).get(URL, {"q": "tabs", "before": "2"}).status_code == 404

"""Hidden characters on the pages (issue 24, finding 1): wherever a text is shown
(document, editor, preview, diff, history, revert, change request, Memory Block),
each hidden character is a marked placeholder, never the character itself, under a
banner that says how many there are; after a save was refused for them, the form
offers to save anyway with a reason."""

from __future__ import annotations

import pytest
from django.utils.html import escape

from agentdocs.models import ChangeComment, ChangeRequest, Document
from agentdocs.services import changes as change_service
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.web.hidden_characters import mark_html, mark_segments, mark_text
from agentdocs.web.markdown import render_markdown
from tests.api.test_documents_hidden_characters import CORPUS, REVERSED, TAGGED

pytestmark = pytest.mark.django_db

RLO = '<span class="hidden-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">⟨U+202E⟩</span>'
PDF = '<span class="hidden-char" title="U+202C POP DIRECTIONAL FORMATTING">⟨U+202C⟩</span>'
BANNER = "holds 2 hidden characters (bidi controls, zero-width or tag characters)"
CHOICE = 'name="acknowledge_hidden"'
RAW = ("\u202e", "\u202c")


@pytest.fixture
def quoted(project, writer):
    """agent.md v1 plain, v2 holding the reversed text (acknowledged)."""
    document = document_service.document_create(
        project=project, path="agent.md", body="# Rules\n\nRun the tests.\n", user=writer
    )
    return document_service.document_write(
        document=document,
        body=REVERSED,
        base_version=1,
        user=writer,
        reason="quotes the attack",
        acknowledge_hidden="intended",
    ).document


def page(client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, response.content[:500]
    return response.content.decode()


def assert_marked(html: str, *, banner: str = BANNER) -> None:
    assert RLO in html and PDF in html
    assert banner in html
    for raw in RAW:
        assert raw not in html


# The helpers: escaped, marked, and ordinary writing untouched.


def test_mark_text_escapes_and_marks():
    assert mark_text("<b>\u202e</b>") == f"&lt;b&gt;{RLO}&lt;/b&gt;"


def test_mark_text_leaves_ordinary_writing_alone():
    for body in CORPUS.values():
        assert mark_text(body) == escape(body)


def test_mark_segments_reads_the_whole_line():
    # A joiner inside an emoji, split into its own diff piece, is still ordinary.
    pieces = [("👩", None), ("\u200d", "ins"), ("💻 \u202e", None)]
    assert mark_segments(pieces) == f"👩<ins>\u200d</ins>💻 {RLO}"


def test_mark_html_marks_text_and_turns_an_attribute_s_into_its_placeholder_text():
    html = '<p>a\u202eb <a href="x" title="t\u202et">c\u202c</a></p>'
    assert mark_html(html) == f'<p>a{RLO}b <a href="x" title="t⟨U+202E⟩t">c{PDF}</a></p>'


def test_rendered_markdown_marks_hidden_characters_after_sanitising():
    html = render_markdown(f"# Title\n\nBe kind.{TAGGED[:2]}\n\n`code \u202e`\n", cached=False)
    assert '<span class="hidden-char" title="U+E0073 TAG LATIN SMALL LETTER S">' in html
    assert f"<code>code {RLO}</code>" in html
    assert TAGGED[0] not in html and "\u202e" not in html


def test_the_ordinary_corpus_renders_without_marks(project, writer):
    for name, body in CORPUS.items():
        html = render_markdown(body, cached=False)
        assert "hidden-char" not in html, name


# The pages.


def test_the_document_page_shows_the_banner_and_placeholders(browse, reader, quoted):
    html = page(browse(reader), "/t/acme/web/doc/agent.md")
    assert_marked(html, banner=f"This text {BANNER}")
    assert "they are marked" in html


def test_a_document_without_hidden_characters_has_no_banner(browse, reader, agent_md):
    html = page(browse(reader), "/t/acme/web/doc/agent.md")
    assert "hidden-chars-banner" not in html and "hidden-char" not in html


def test_the_edit_page_lists_each_by_line_and_column_and_the_preview_marks_them(
    browse, writer, quoted
):
    html = page(browse(writer), "/t/acme/web/edit/agent.md")
    assert "line 4, column 6:" in html and "U+202E RIGHT-TO-LEFT OVERRIDE" in html
    assert "line 4, column 18:" in html and "U+202C POP DIRECTIONAL FORMATTING" in html
    assert RLO in html  # in the preview
    # The textarea keeps the text as it is, so saving it changes nothing.
    assert "\u202etxet neddih\u202c" in html.split("<textarea", 1)[1].split("</textarea>")[0]


def test_the_live_preview_marks_and_says_how_many(browse, writer, project):
    response = browse(writer).post("/t/acme/web/preview/", {"body": f"x{TAGGED}"})
    html = response.content.decode()
    assert response.status_code == 200
    assert f"holds {len(TAGGED)} hidden characters" in html
    assert "⟨U+E0073⟩" in html and TAGGED[0] not in html


def test_the_diff_page_marks_both_sides(browse, reader, quoted):
    html = page(browse(reader), "/t/acme/web/diff/agent.md?from=1&to=2")
    assert_marked(html, banner=f"This comparison {BANNER}")


def test_the_history_page_shows_the_acknowledgement(browse, reader, quoted):
    html = page(browse(reader), "/t/acme/web/history/agent.md")
    assert "hidden characters acknowledged: intended" in html
    assert html.count("hidden characters acknowledged") == 1


def test_a_reason_holding_hidden_characters_is_marked_in_history(browse, reader, quoted, writer):
    """A reason stored before reasons were checked (issue 34) is still shown marked."""
    document_service.document_write(
        document=quoted, body="# Rules\n", base_version=2, user=writer, reason="tidy"
    )
    quoted.history.filter(version=3).update(history_change_reason="tidy\u202e")
    html = page(browse(reader), "/t/acme/web/history/agent.md")
    assert f"tidy{RLO}" in html and "\u202e" not in html


def test_the_revert_page_warns_and_offers_the_acknowledgement_after_the_refusal(
    browse, writer, quoted
):
    client = browse(writer)
    document_service.document_write(
        document=Document.objects.get(pk=quoted.pk), body="# Rules\n", base_version=2, user=writer
    )
    html = page(client, "/t/acme/web/revert/agent.md?version=2")
    assert_marked(html, banner=f"The version to revert to {BANNER}")
    assert CHOICE not in html
    refused = client.post(
        "/t/acme/web/revert/agent.md", {"version": 2, "base_version": 3, "reason": "back"}
    )
    assert refused.status_code == 422
    assert CHOICE in refused.content.decode()
    saved = client.post(
        "/t/acme/web/revert/agent.md",
        {"version": 2, "base_version": 3, "reason": "back", "acknowledge_hidden": "intended"},
    )
    assert saved.status_code == 302
    document = Document.objects.get(pk=quoted.pk)
    assert document.version == 4 and document.hidden_acknowledgement == "intended"


def test_the_edit_page_refuses_then_offers_to_save_anyway(browse, writer, agent_md):
    client = browse(writer)
    assert CHOICE not in page(client, "/t/acme/web/edit/agent.md")
    refused = client.post(
        "/t/acme/web/edit/agent.md", {"body": REVERSED, "base_version": 1, "reason": ""}
    )
    html = refused.content.decode()
    assert refused.status_code == 422
    assert "2 hidden characters that readers cannot see" in html
    assert CHOICE in html and 'value="intended"' in html
    assert "line 4, column 6:" in html  # the banner above the editor
    no_reason = client.post(
        "/t/acme/web/edit/agent.md",
        {"body": REVERSED, "base_version": 1, "reason": "", "acknowledge_hidden": "intended"},
    )
    assert no_reason.status_code == 400 and "needs a reason" in no_reason.content.decode()
    saved = client.post(
        "/t/acme/web/edit/agent.md",
        {
            "body": REVERSED,
            "base_version": 1,
            "reason": "quotes the attack",
            "acknowledge_hidden": "intended",
        },
    )
    assert saved.status_code == 302, saved.content.decode()[:500]
    document = Document.objects.get(pk=agent_md.pk)
    assert document.version == 2 and document.body == REVERSED
    assert document.history.get(version=2).hidden_acknowledgement == "intended"


def test_the_edit_page_does_not_offer_it_where_the_tenant_forbids_it(
    browse, writer, admin, tenant, agent_md
):
    policy_service.setting_set(
        tenant=tenant, project=None, key="security.hiddenOverride", value="off", user=admin
    )
    refused = browse(writer).post(
        "/t/acme/web/edit/agent.md", {"body": REVERSED, "base_version": 1, "reason": "x"}
    )
    assert refused.status_code == 422 and CHOICE not in refused.content.decode()


def test_the_create_page_refuses_and_saves_with_the_acknowledgement(browse, writer, project):
    client = browse(writer)
    refused = client.post("/t/acme/web/new/", {"path": "q.md", "body": REVERSED, "reason": ""})
    assert refused.status_code == 422 and CHOICE in refused.content.decode()
    saved = client.post(
        "/t/acme/web/new/",
        {"path": "q.md", "body": REVERSED, "reason": "quote", "acknowledge_hidden": "intended"},
    )
    assert saved.status_code == 302
    assert Document.objects.get(path="q.md").hidden_acknowledgement == "intended"


def test_the_change_pages_mark_the_proposal_and_its_free_text(
    browse, reader, writer, project, agent_md
):
    client = browse(reader)
    refused = client.post(
        "/t/acme/web/changes/new/",
        {"path": "agent.md", "base_version": 1, "body": REVERSED, "reason": "quote"},
    )
    assert refused.status_code == 422 and CHOICE in refused.content.decode()
    change = change_service.change_propose(
        project=project,
        path="agent.md",
        body=REVERSED,
        base_version=1,
        reason="quote",
        user=reader,
        acknowledge_hidden="intended",
    )
    comment = change_service.change_comment(change=change, user=writer, body="hm")
    # As stored before reasons and comments were checked (issue 34).
    ChangeRequest.objects.filter(pk=change.pk).update(reason="quote\u202c")
    ChangeComment.objects.filter(pk=comment.pk).update(body="hm\u202e")
    html = page(client, f"/t/acme/web/changes/{change.pk}/")
    assert "This proposal holds 2 hidden characters" in html
    assert f"quote{PDF}" in html and f"hm{RLO}" in html
    assert RLO in html.split("diff-row", 1)[1]  # in the diff
    for raw in RAW:
        assert raw not in html


def test_the_memory_block_page_marks_the_block_text(browse, reader, quoted):
    html = page(browse(reader), "/t/acme/web/memory-block/")
    assert RLO in html and "\u202e" not in html


def test_an_outsider_gets_404_on_every_page(browse, outsider, other_tenant, quoted):
    client = browse(outsider)
    for url in (
        "/t/acme/web/doc/agent.md",
        "/t/acme/web/edit/agent.md",
        "/t/acme/web/diff/agent.md?from=1&to=2",
    ):
        assert client.get(url).status_code == 404
    refused = client.post(
        "/t/acme/web/edit/agent.md",
        {"body": "x", "base_version": 2, "reason": "x", "acknowledge_hidden": "intended"},
    )
    assert refused.status_code == 404
    assert Document.objects.get(pk=quoted.pk).version == 2

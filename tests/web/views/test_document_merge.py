"""The edit page merges a stale save: a clean merge is saved and says with whom and who
wrote what; overlapping changes show the three-way page, whose choices are saved, and
dropping their change needs an explicit confirmation."""

from __future__ import annotations

import html
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.models import Document
from agentdocs.services import documents as svc

pytestmark = pytest.mark.django_db

BASE = "# Web rules\n\n- Use tabs.\n- Two spaces after a heading.\n- Wrap at 100.\n"
THEIRS = BASE.replace("- Use tabs.", "- Use tabs, width 4.")


@pytest.fixture
def doc(project, writer, admin, make_document):
    """Bob's version 1; alice's version 2 changed the first rule."""
    document = make_document(project, "agent.md", BASE, user=writer)
    return svc.document_write(
        document=document, body=THEIRS, base_version=1, user=admin, reason="width rule"
    ).document


def text(response) -> str:
    """The page as a reader sees it: no tags, no character references."""
    return html.unescape(re.sub(r"<[^>]+>", "", response.content.decode()))


def edit(client, body: str, *, base: int = 1, reason: str = "my change"):
    return client.post(
        "/t/acme/web/edit/agent.md", {"body": body, "base_version": base, "reason": reason}
    )


def resolve(client, body: str, *, base: int = 1, theirs: int = 2, reason="mine", **choices):
    data = {"body": body, "base_version": base, "theirs_version": theirs, "reason": reason}
    return client.post("/t/acme/web/resolve/agent.md", {**data, **choices})


def test_a_stale_save_of_other_lines_is_merged_and_says_with_whom(browse, writer, doc):
    response = edit(browse(writer), BASE.replace("- Wrap at 100.", "- Wrap at 80."))
    page = response.content.decode()
    assert response.status_code == 200
    assert "Merged with v2 by alice (just now)" in text(response)
    assert "From alice's change (version 2)" in text(response) and "From your change" in page
    assert "1 line came from alice's change, 1 from yours" in text(response)
    document = Document.objects.get()
    assert document.version == 3 and document.merged_with == 2
    assert document.body == THEIRS.replace("- Wrap at 100.", "- Wrap at 80.")
    latest = document.history.order_by("-history_id").first()
    assert latest.history_user.username == "bob" and latest.history_change_reason == "my change"


def test_the_history_page_shows_merged_with(browse, writer, doc):
    client = browse(writer)
    edit(client, BASE + "- Mine.\n")
    history = client.get("/t/acme/web/history/agent.md").content.decode()
    assert history.count("merged with v2") == 1


def test_overlapping_changes_show_the_three_way_page_and_write_nothing(browse, writer, doc):
    mine = BASE.replace("- Use tabs.", "- Use spaces.") + "- Mine, unsaved.\n"
    response = edit(browse(writer), mine, reason="spaces")
    page = response.content.decode()
    assert response.status_code == 409  # MergeConflict's own status, as the API answers
    assert "alice changed the same lines" in page
    for label in (">base</h3>", ">their change</h3>", ">your change</h3>"):
        assert label in page
    assert "- Use tabs.\n" in page and "- Use tabs, width 4.\n" in page
    assert "- Use spaces.\n" in page
    assert "From your change" in page and "- Mine, unsaved." in page  # merged part, marked
    assert 'name="choice_0"' in page and 'name="text_0"' in page
    assert 'name="base_version" value="1"' in page and 'name="theirs_version" value="2"' in page
    assert 'value="spaces"' in page  # the reason rides along
    assert "I am discarding alice's change" in text(response)
    document = Document.objects.get()
    assert document.version == 2 and document.body == THEIRS


MINE = BASE.replace("- Use tabs.", "- Use spaces.") + "- Mine.\n"


@pytest.mark.parametrize(
    "choice, expected",
    [
        ("theirs", THEIRS + "- Mine.\n"),
        ("both", THEIRS.replace("width 4.\n", "width 4.\n- Use spaces.\n") + "- Mine.\n"),
    ],
)
def test_choosing_theirs_or_both_saves_without_confirmation(browse, writer, doc, choice, expected):
    response = resolve(browse(writer), MINE, choice_0=choice)
    assert response.status_code == 302 and response["Location"] == "/t/acme/web/doc/agent.md"
    document = Document.objects.get()
    assert document.version == 3 and document.body == expected
    latest = document.history.order_by("-history_id").first()
    assert latest.history_user.username == "bob" and latest.history_change_reason == "mine"


def test_choosing_yours_needs_the_confirmation(browse, writer, doc):
    client = browse(writer)
    refused = resolve(client, MINE, choice_0="yours")
    assert refused.status_code == 400
    assert "drops alice's change" in text(refused)
    assert Document.objects.get().version == 2
    saved = resolve(client, MINE, choice_0="yours", discard_theirs="on")
    assert saved.status_code == 302
    document = Document.objects.get()
    assert document.version == 3 and document.body == MINE


def test_an_own_text_without_their_lines_needs_the_confirmation(browse, writer, doc):
    client = browse(writer)
    pasted = resolve(client, MINE, choice_0="edit", text_0="- Use spaces.")
    assert pasted.status_code == 400 and Document.objects.get().version == 2
    kept = resolve(client, MINE, choice_0="edit", text_0="- Use tabs, width 4.\r\n- or spaces")
    assert kept.status_code == 302
    assert (
        Document.objects.get().body
        == THEIRS.replace("width 4.\n", "width 4.\n- or spaces\n") + "- Mine.\n"
    )


def test_a_missing_choice_is_asked_for(browse, writer, doc):
    response = resolve(browse(writer), MINE)
    assert response.status_code == 400
    assert "Choose how to resolve conflict 1." in response.content.decode()
    assert Document.objects.get().version == 2


def test_a_change_saved_while_resolving_is_merged_again(browse, writer, admin, doc):
    again = THEIRS.replace("# Web rules", "# Web rules (Acme)")
    svc.document_write(document=doc, body=again, base_version=2, user=admin, reason="more")
    response = resolve(browse(writer), MINE, choice_0="theirs")
    assert response.status_code == 200 and "Merged with v3 by alice" in text(response)
    document = Document.objects.get()
    assert document.version == 4 and document.merged_with == 3
    assert document.body == again + "- Mine.\n"


def test_a_conflicting_change_saved_while_resolving_shows_the_three_way_page_again(
    browse, writer, admin, doc
):
    svc.document_write(
        document=doc,
        body=THEIRS.replace("width 4", "width 8"),
        base_version=2,
        user=admin,
        reason="wider",
    )
    response = resolve(browse(writer), MINE, choice_0="yours", discard_theirs="on")
    page = response.content.decode()
    assert response.status_code == 409
    assert 'name="base_version" value="2"' in page and 'name="theirs_version" value="3"' in page
    assert "- Use tabs, width 8." in page
    assert Document.objects.get().version == 3


def test_a_reader_cannot_resolve(browse, reader, doc):
    assert resolve(browse(reader), MINE, choice_0="theirs").status_code == 403
    assert Document.objects.get().version == 2


def test_another_tenants_user_gets_404(browse, outsider, other_tenant, doc):
    assert resolve(browse(outsider), MINE, choice_0="theirs").status_code == 404
    assert edit(browse(outsider), MINE).status_code == 404
    assert Document.objects.get().version == 2


def test_a_tampered_form_is_400(browse, writer, doc):
    response = browse(writer).post("/t/acme/web/resolve/agent.md", {"body": "x"})
    assert response.status_code == 400
    assert browse(writer).get("/t/acme/web/resolve/agent.md").status_code == 405


def test_a_secret_in_the_chosen_text_is_refused_and_may_be_acknowledged(browse, writer, doc):
    from tests.services.test_documents_secret_acknowledgement import TEST_TOKEN

    client = browse(writer)
    own = f"- Use tabs, width 4.\n- The fixtures token: {TEST_TOKEN}\n"
    refused = resolve(client, MINE, choice_0="edit", text_0=own)
    assert refused.status_code == 422
    assert "looks like" in text(refused) and 'value="false_positive"' in refused.content.decode()
    assert Document.objects.get().version == 2
    saved = resolve(
        client, MINE, choice_0="edit", text_0=own, acknowledge_secret="test_value", reason="fake"
    )
    assert saved.status_code == 302
    document = Document.objects.get()
    assert document.version == 3 and TEST_TOKEN in document.body
    assert document.secret_acknowledgement == "test_value"


def test_a_save_resolved_on_the_three_way_page_is_recorded_as_a_merge(browse, writer, doc):
    client = browse(writer)
    response = resolve(client, MINE, choice_0="both")
    assert response.status_code == 302
    document = Document.objects.get()
    assert document.version == 3 and document.merged_with == 2
    assert document.history.order_by("-history_id").first().merged_with == 2
    history = client.get("/t/acme/web/history/agent.md").content.decode()
    assert history.count("merged with v2") == 1


def test_a_hand_merge_that_keeps_their_change_saves_without_the_confirmation(browse, writer, doc):
    # Their change made the rule "width 4"; this line keeps it inside the writer's own.
    own = "- Use spaces, width 4."
    response = resolve(browse(writer), MINE, choice_0="edit", text_0=own)
    assert response.status_code == 302
    document = Document.objects.get()
    assert document.version == 3 and document.merged_with == 2
    assert document.body == THEIRS.replace("- Use tabs, width 4.", own) + "- Mine.\n"


def test_a_hand_merge_that_drops_their_words_still_needs_the_confirmation(browse, writer, doc):
    client = browse(writer)
    refused = resolve(client, MINE, choice_0="edit", text_0="- Use spaces, width 8.")
    assert refused.status_code == 400 and "drops alice's change" in text(refused)
    assert Document.objects.get().version == 2
    saved = resolve(
        client, MINE, choice_0="edit", text_0="- Use spaces, width 8.", discard_theirs="on"
    )
    assert saved.status_code == 302
    assert Document.objects.get().merged_with == 2


def test_the_merged_page_reads_no_history_after_the_save(browse, writer, doc):
    """The merge `document_write` made is what the page shows: no history row is read
    again, and no second merge runs, once the version is saved."""
    client = browse(writer)
    with CaptureQueriesContext(connection) as queries:
        response = edit(client, BASE.replace("- Wrap at 100.", "- Wrap at 80."))
    assert response.status_code == 200 and "Merged with v2 by alice" in text(response)
    statements = [(query["sql"] or "").lstrip() for query in queries.captured_queries]
    history_table = Document.history.model._meta.db_table
    saved_at = next(
        index
        for index, sql in enumerate(statements)
        if sql.upper().startswith("INSERT") and history_table in sql
    )
    later_reads = [sql for sql in statements[saved_at:] if sql.upper().startswith("SELECT")]
    assert not [sql for sql in later_reads if history_table in sql]

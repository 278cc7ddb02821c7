"""Document pages: safe rendering, edit and its refusals, history, diff, revert, delete, locks."""

from __future__ import annotations

import re

import pytest

from agentdocs.models import Document
from agentdocs.selectors import document_locks as lock_selectors
from agentdocs.services import document_locks
from agentdocs.services import documents as svc

pytestmark = pytest.mark.django_db

HOSTILE = (
    "# Notes\n\n"
    "<script>alert('doc')</script>\n\n"
    '<img src=x onerror="alert(1)">\n\n'
    "[click](javascript:alert(2))\n\n"
    "![pic](javascript:alert(3))\n"
)


def edit(client, body: str, *, base: int, reason: str = "", path: str = "agent.md"):
    return client.post(
        f"/t/acme/web/edit/{path}", {"body": body, "base_version": base, "reason": reason}
    )


def test_document_page_shows_version_sha_author_and_rendered_markdown(browse, reader, agent_md):
    page = browse(reader).get("/t/acme/web/doc/agent.md")
    text = page.content.decode()
    assert page.status_code == 200
    assert "<h1>Web rules</h1>" in text and "<li>Use tabs.</li>" in text
    assert agent_md.sha256 in text
    assert "Version 1" in text and "bob" in text


@pytest.mark.parametrize(
    "url",
    ["/t/acme/web/doc/hostile.md", "/t/acme/web/edit/hostile.md", "/t/acme/web/diff/hostile.md"],
)
def test_script_bearing_markdown_renders_inert(browse, writer, project, make_document, url):
    document = make_document(project, "hostile.md", "plain\n", user=writer)
    svc.document_write(document=document, body=HOSTILE, base_version=1, user=writer)
    text = browse(writer).get(url).content.decode()
    assert "<script>alert" not in text
    assert not re.search(r"<img[^>]*onerror", text)
    assert 'href="javascript:' not in text and 'src="javascript:' not in text
    assert "&lt;script&gt;" in text  # shown as text, not dropped silently


def test_the_live_preview_is_sanitised(browse, writer, project):
    response = browse(writer).post("/t/acme/web/preview/", {"body": HOSTILE})
    text = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert" not in text
    assert not re.search(r"<img[^>]*onerror", text)
    assert 'hx-swap-oob="true"' in text  # the one-screen meter updates beside the preview


def test_a_save_with_a_reason_makes_a_new_version_in_the_history(browse, writer, agent_md):
    client = browse(writer)
    response = edit(client, "# Web rules\n\n- Use spaces.\n", base=1, reason="Team voted")
    assert response.status_code == 302
    assert response["Location"] == "/t/acme/web/doc/agent.md"
    agent_md.refresh_from_db()
    assert agent_md.version == 2 and "spaces" in agent_md.body
    latest = agent_md.history.order_by("-version").first()
    assert latest.history_change_reason == "Team voted" and latest.history_user.username == "bob"
    history = client.get("/t/acme/web/history/agent.md").content.decode()
    # Newest first (matched as the version cells, not anywhere: a CSRF token may hold "v1").
    assert history.index("<strong>v2</strong>") < history.index("<strong>v1</strong>")
    assert "Team voted" in history


def test_textarea_line_endings_are_stored_as_lf(browse, writer, agent_md):
    edit(browse(writer), "# A\r\n\r\n- b\r\n", base=1)
    agent_md.refresh_from_db()
    assert agent_md.body == "# A\n\n- b\n"


def test_saving_the_same_text_makes_no_version(browse, writer, agent_md):
    response = edit(browse(writer), agent_md.body, base=1)
    assert response.status_code == 302
    agent_md.refresh_from_db()
    assert agent_md.version == 1


def test_conflict_says_so_keeps_the_users_text_and_shows_three_ways(
    browse, writer, admin, agent_md
):
    svc.document_write(
        document=agent_md, body="# Web rules\n\n- Use tabs, width 4.\n", base_version=1, user=admin
    )
    mine = "# Web rules\n\n- Use tabs.\n- Mine, unsaved.\n"
    response = edit(browse(writer), mine, base=1, reason="my change")
    text = response.content.decode()
    assert response.status_code == 409  # MergeConflict's own status, as the API answers
    assert "alice changed the same lines" in text
    assert "- Mine, unsaved." in text  # the user's text is still on the page
    assert 'name="reason"' in text and 'value="my change"' in text
    # The choices are saved onto what they saw; the merge base is what they started from.
    assert 'name="theirs_version" value="2"' in text and 'name="base_version" value="1"' in text
    assert ">base</h3>" in text and ">their change</h3>" in text and ">your change</h3>" in text
    agent_md.refresh_from_db()
    assert agent_md.version == 2 and "Mine" not in agent_md.body


def test_after_a_conflict_dropping_their_change_needs_a_confirmation(
    browse, writer, admin, agent_md
):
    svc.document_write(document=agent_md, body="# theirs\n", base_version=1, user=admin)
    client = browse(writer)
    assert edit(client, "# mine\n", base=1).status_code == 409
    resolution = {"body": "# mine\n", "base_version": 1, "theirs_version": 2, "choice_0": "yours"}
    assert client.post("/t/acme/web/resolve/agent.md", resolution).status_code == 400
    agent_md.refresh_from_db()
    assert agent_md.version == 2
    resolution["discard_theirs"] = "on"
    assert client.post("/t/acme/web/resolve/agent.md", resolution).status_code == 302
    agent_md.refresh_from_db()
    assert agent_md.version == 3 and agent_md.body == "# mine\n"


def test_deleted_while_editing_keeps_the_text(browse, writer, admin, agent_md):
    svc.document_delete(document=agent_md, base_version=1, user=admin)
    response = edit(browse(writer), "# still mine\n", base=1)
    assert response.status_code == 412
    assert "deleted this document" in response.content.decode()
    assert "# still mine" in response.content.decode()


def test_a_held_lock_is_shown_and_the_save_refused_keeping_the_text(
    browse, writer, admin, agent_md
):
    document_locks.document_lock(document=agent_md, user=admin)
    client = browse(writer)
    page = client.get("/t/acme/web/edit/agent.md").content.decode()
    assert "alice is editing this document" in page and "UTC" in page
    response = edit(client, "# locked out\n", base=1)
    assert response.status_code == 423
    assert "# locked out" in response.content.decode()
    agent_md.refresh_from_db()
    assert agent_md.version == 1


def test_lock_take_and_release_and_admin_breaks_a_lock(browse, writer, admin, agent_md):
    client = browse(writer)
    client.post("/t/acme/web/lock/agent.md", {"action": "lock"})
    agent_md.refresh_from_db()
    assert agent_md.lock_holder == writer
    refused = browse(admin).post("/t/acme/web/edit/agent.md", {"body": "x", "base_version": 1})
    assert refused.status_code == 423
    browse(admin).post("/t/acme/web/lock/agent.md", {"action": "unlock", "force": "on"})
    agent_md.refresh_from_db()
    assert agent_md.lock_holder is None


def test_a_writer_cannot_break_someone_elses_lock(browse, writer, admin, agent_md):
    document_locks.document_lock(document=agent_md, user=admin)
    response = browse(writer).post("/t/acme/web/lock/agent.md", {"action": "unlock", "force": "on"})
    assert response.status_code == 403
    agent_md.refresh_from_db()
    assert agent_md.lock_holder == admin


def test_secret_like_content_is_refused_beside_the_field_naming_the_line(browse, writer, agent_md):
    body = "# Rules\n\nline three\npassword = hunter2hunter2\n"
    response = edit(browse(writer), body, base=1)
    text = response.content.decode()
    assert response.status_code == 422  # SecretDetected's own status, as the API answers
    assert 'id="body-errors"' in text and "Line 4 looks like a credential assignment" in text
    assert "hunter2hunter2" in text  # kept so the user can fix it
    agent_md.refresh_from_db()
    assert agent_md.version == 1


def test_the_one_screen_guideline_warns_past_sixty_lines(browse, writer, agent_md):
    long_body = "\n".join(f"- rule {n}" for n in range(80))
    svc.document_write(document=agent_md, body=long_body, base_version=1, user=writer)
    page = browse(writer).get("/t/acme/web/edit/agent.md").content.decode()
    assert "Longer than one screen" in page and "80 / 60 lines" in page
    short = browse(writer).get("/t/acme/web/doc/agent.md?version=1").content.decode()
    assert "Longer than one screen" not in short


def test_create_page_makes_a_document_and_refuses_bad_paths_beside_the_field(
    browse, writer, project
):
    client = browse(writer)
    created = client.post(
        "/t/acme/web/new/", {"path": "notes/team.md", "body": "# Team\n", "reason": "start"}
    )
    assert created.status_code == 302
    assert Document.objects.get(project=project, path="notes/team.md").version == 1
    bad = client.post("/t/acme/web/new/", {"path": "../etc/passwd", "body": "x"})
    assert bad.status_code == 400
    assert "&#x27;..&#x27; segment" in bad.content.decode() or "segment" in bad.content.decode()
    again = client.post("/t/acme/web/new/", {"path": "notes/team.md", "body": "# Other\n"})
    assert again.status_code == 409 and "already exists" in again.content.decode()
    assert "# Other" in again.content.decode()


def test_history_lists_versions_with_change_type_reason_and_size_delta(browse, writer, agent_md):
    svc.document_write(
        document=agent_md, body=agent_md.body + "- More.\n", base_version=1, user=writer,
        reason="add more",
    )  # fmt: skip
    page = browse(writer).get("/t/acme/web/history/agent.md").content.decode()
    assert "add more" in page and "Written" in page and "Created" in page
    assert "+8 B" in page
    assert 'name="from" value="1"' in page and 'name="to" value="2"' in page


def test_diff_page_shows_additions_and_removals_side_by_side(browse, reader, writer, agent_md):
    body = "# Web rules\n\n- Use spaces.\n" + "".join(f"same {n}\n" for n in range(20)) + "end\n"
    agent_md = svc.document_write(
        document=agent_md, body=body, base_version=1, user=writer
    ).document
    svc.document_write(
        document=agent_md, body=body.replace("end", "finish"), base_version=2, user=writer
    )
    page = browse(reader).get("/t/acme/web/diff/agent.md?from=2&to=3").content.decode()
    assert page.count('class="diff-row diff-change"') == 1
    assert "<del>end</del>" in page and "<ins>finish</ins>" in page
    assert "unchanged lines" in page  # the long unchanged stretch is folded
    # Folded stretches are <details>, which an ARIA table may not hold: a labelled
    # group whose rows say "removed:" and "added:" to a screen reader instead.
    assert 'role="group" aria-label="Side-by-side comparison of' in page
    assert 'role="row"' not in page and 'role="table"' not in page
    assert "{#" not in page and "Not an ARIA table" not in page  # template comments stay out
    assert '<span class="visually-hidden">removed: </span>' in page
    default = browse(reader).get("/t/acme/web/diff/agent.md").content.decode()
    assert "v2 → v3" in default


def test_diff_of_unknown_versions_is_404(browse, reader, agent_md):
    assert browse(reader).get("/t/acme/web/diff/agent.md?from=1&to=9").status_code == 404
    assert browse(reader).get("/t/acme/web/diff/agent.md?from=x").status_code == 404


def test_open_an_old_version(browse, reader, writer, agent_md):
    svc.document_write(document=agent_md, body="# New\n", base_version=1, user=writer)
    page = browse(reader).get("/t/acme/web/doc/agent.md?version=1").content.decode()
    assert "You are reading version 1" in page and "<h1>Web rules</h1>" in page


def test_revert_asks_for_confirmation_then_makes_a_new_version(browse, writer, agent_md):
    svc.document_write(document=agent_md, body="# Bad\n", base_version=1, user=writer)
    client = browse(writer)
    confirm = client.get("/t/acme/web/revert/agent.md?version=1")
    assert confirm.status_code == 200 and "Revert to version 1" in confirm.content.decode()
    agent_md.refresh_from_db()
    assert agent_md.version == 2  # nothing happens on GET
    response = client.post(
        "/t/acme/web/revert/agent.md", {"version": 1, "base_version": 2, "reason": "undo"}
    )
    assert response.status_code == 302
    agent_md.refresh_from_db()
    assert agent_md.version == 3 and agent_md.body == "# Web rules\n\n- Use tabs.\n"
    assert agent_md.history.order_by("-version").first().history_change_reason == "undo"


def test_reverting_to_the_current_text_says_nothing_changed(browse, writer, agent_md):
    original = agent_md.body
    svc.document_write(document=agent_md, body="# Two\n", base_version=1, user=writer)
    svc.document_write(document=agent_md, body=original, base_version=2, user=writer)
    client = browse(writer)
    confirm = client.get("/t/acme/web/revert/agent.md?version=1").content.decode()
    assert "reverting changes nothing and writes no version" in confirm
    response = client.post(
        "/t/acme/web/revert/agent.md",
        {"version": 1, "base_version": 3, "reason": "undo"},
        follow=True,
    )
    page = response.content.decode()
    assert "nothing changed and no version was written" in page and "it is now version" not in page
    agent_md.refresh_from_db()
    assert agent_md.version == 3


def test_revert_from_a_stale_page_is_refused(browse, writer, admin, agent_md):
    svc.document_write(document=agent_md, body="# Two\n", base_version=1, user=writer)
    svc.document_write(document=agent_md, body="# Three\n", base_version=2, user=admin)
    response = browse(writer).post(
        "/t/acme/web/revert/agent.md", {"version": 1, "base_version": 2, "reason": "undo"}
    )
    assert response.status_code == 412
    assert 'name="base_version" value="3"' in response.content.decode()


def test_delete_then_restore_from_history(browse, writer, agent_md):
    client = browse(writer)
    response = client.post("/t/acme/web/delete/agent.md", {"base_version": 1, "reason": "gone"})
    assert response.status_code == 302
    agent_md.refresh_from_db()
    assert agent_md.is_deleted
    project_page = client.get("/t/acme/web/").content.decode()
    assert "Deleted documents" in project_page
    history = client.get("/t/acme/web/history/agent.md").content.decode()
    assert "restore" in history
    client.post("/t/acme/web/revert/agent.md", {"version": 1, "base_version": 2, "reason": "back"})
    agent_md.refresh_from_db()
    assert not agent_md.is_deleted and agent_md.version == 3


def test_reader_sees_no_edit_controls_and_forged_posts_are_refused(browse, reader, agent_md):
    client = browse(reader)
    for url in ["/t/acme/web/", "/t/acme/web/doc/agent.md", "/t/acme/web/history/agent.md"]:
        text = client.get(url).content.decode()
        assert "/t/acme/web/edit/" not in text, url
        assert "/t/acme/web/new/" not in text, url
        assert "/t/acme/web/revert/" not in text, url
        assert "/t/acme/web/delete/" not in text, url
    assert client.get("/t/acme/web/edit/agent.md").status_code == 403
    forged = [
        ("/t/acme/web/edit/agent.md", {"body": "forged", "base_version": 1}),
        ("/t/acme/web/new/", {"path": "forged.md", "body": "forged"}),
        ("/t/acme/web/revert/agent.md", {"version": 1, "base_version": 1}),
        ("/t/acme/web/delete/agent.md", {"base_version": 1}),
        ("/t/acme/web/lock/agent.md", {"action": "lock"}),
    ]
    for url, data in forged:
        assert client.post(url, data).status_code == 403, url
    agent_md.refresh_from_db()
    assert agent_md.version == 1 and not agent_md.is_deleted and agent_md.lock_holder is None
    assert not Document.objects.filter(path="forged.md").exists()


def test_the_403_page_says_why(browse, reader, agent_md):
    response = browse(reader).get("/t/acme/web/edit/agent.md")
    assert "writing needs writer or admin" in response.content.decode()


def test_writer_cannot_edit_tenant_wide_documents(browse, writer, vance_md, project):
    client = browse(writer)
    page = client.get("/t/acme/_vance/doc/agent.md").content.decode()
    assert "Acme rules" in page
    assert "/t/acme/_vance/edit/" not in page
    assert client.get("/t/acme/_vance/edit/agent.md").status_code == 403
    forged = client.post("/t/acme/_vance/edit/agent.md", {"body": "forged", "base_version": 1})
    assert forged.status_code == 403
    assert "tenant admins only" in forged.content.decode()
    under_prefix = client.post("/t/acme/web/new/", {"path": "_vance/x.md", "body": "forged"})
    assert under_prefix.status_code == 403
    vance_md.refresh_from_db()
    assert vance_md.version == 1


def test_editing_the_tenant_wide_agent_md_shows_its_reach_first(
    browse, admin, tenant, project, vance_md, make_document
):
    from agentdocs.services import tenancy as tenant_service

    api = tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    make_document(api, "agent.md", "# API's own\n")
    page = browse(admin).get("/t/acme/_vance/edit/agent.md").content.decode()
    reach = page.index("Reach of this tenant-wide document")
    assert reach < page.index("<textarea")
    inheriting = page[page.index('aria-label="Projects that inherit it"') :]
    inheriting = inheriting[: inheriting.index("</ul>")]
    shadowing = page[page.index('aria-label="Projects that shadow it"') :]
    shadowing = shadowing[: shadowing.index("</ul>")]
    assert ">web<" in inheriting and ">api<" not in inheriting
    assert ">api<" in shadowing and ">web<" not in shadowing


def test_the_live_preview_is_for_those_who_may_write(browse, reader, outsider, project):
    assert browse(reader).post("/t/acme/web/preview/", {"body": "# Hi"}).status_code == 403
    assert browse(outsider).post("/t/acme/web/preview/", {"body": "# Hi"}).status_code == 404


def test_a_document_page_renders_its_markdown_once_per_text(browse, reader, writer, agent_md):
    from django.core.cache import cache

    from agentdocs.web import markdown

    client = browse(reader)
    assert "<h1>Web rules</h1>" in client.get("/t/acme/web/doc/agent.md").content.decode()
    key = markdown.cache_key(agent_md.body)
    assert cache.get(key) is not None
    cache.set(key, "<p>from the cache</p>")  # the next view must use it, not parse again
    assert "from the cache" in client.get("/t/acme/web/doc/agent.md").content.decode()
    # A new version is a new text: rendered afresh.
    svc.document_write(document=agent_md, body="# New rules\n", base_version=1, user=writer)
    assert "<h1>New rules</h1>" in client.get("/t/acme/web/doc/agent.md").content.decode()
    assert markdown.render_markdown("# x", cached=False) == "<h1>x</h1>\n"
    assert cache.get(markdown.cache_key("# x")) is None


def test_the_preview_refuses_to_render_a_body_past_the_size_limit(browse, writer, project):
    response = browse(writer).post("/t/acme/web/preview/", {"body": "x" * (256 * 1024 + 1)})
    assert response.status_code == 200
    assert "Too large to preview" in response.content.decode()


def test_a_malformed_version_is_404(browse, reader, agent_md):
    assert browse(reader).get("/t/acme/web/doc/agent.md?version=abc").status_code == 404
    assert browse(reader).get("/t/acme/web/doc/agent.md?version=9").status_code == 404


def test_a_secret_in_a_new_document_is_refused_with_its_own_status(browse, writer, project):
    body = "# Rules\n\npassword = hunter2hunter2\n"
    response = browse(writer).post("/t/acme/web/new/", {"path": "notes/team.md", "body": body})
    assert response.status_code == 422  # was turned into 400 by this page alone
    assert "Line 3 looks like a credential assignment" in response.content.decode()
    assert "hunter2hunter2" in response.content.decode()  # kept so the user can fix it
    assert not Document.objects.filter(path="notes/team.md").exists()


def test_a_stale_delete_is_refused_with_its_own_status(browse, writer, admin, agent_md):
    svc.document_write(document=agent_md, body="# Two\n", base_version=1, user=admin)
    response = browse(writer).post("/t/acme/web/delete/agent.md", {"base_version": 1})
    assert response.status_code == 412
    assert "it is now at version 2" in response.content.decode()
    agent_md.refresh_from_db()
    assert not agent_md.is_deleted and agent_md.version == 2


def test_a_delete_under_someone_elses_lock_is_refused_with_its_own_status(
    browse, writer, admin, agent_md
):
    document_locks.document_lock(document=agent_md, user=admin)
    response = browse(writer).post("/t/acme/web/delete/agent.md", {"base_version": 1})
    assert response.status_code == 423
    assert "alice is editing this document" in response.content.decode()
    agent_md.refresh_from_db()
    assert not agent_md.is_deleted


def test_saving_over_a_deletion_already_seen_is_404_and_keeps_the_text(
    browse, writer, admin, agent_md
):
    svc.document_delete(document=agent_md, base_version=1, user=admin)
    response = edit(browse(writer), "# still mine\n", base=2)
    text = response.content.decode()
    assert response.status_code == 404
    assert "The document was deleted at version 2" in text and "# still mine" in text
    agent_md.refresh_from_db()
    assert agent_md.is_deleted and agent_md.version == 2


def test_reverting_to_a_deletion_says_why_it_is_refused(browse, writer, admin, agent_md):
    svc.document_delete(document=agent_md, base_version=1, user=admin)
    response = browse(writer).post(
        "/t/acme/web/revert/agent.md", {"version": 2, "base_version": 2, "reason": "undo"}
    )
    assert response.status_code == 400
    # The refusal names the hidden `version` field; the page still shows it.
    assert "Version 2 is a deletion" in response.content.decode()
    agent_md.refresh_from_db()
    assert agent_md.is_deleted and agent_md.version == 2


def _history_actions(page: str, version: int) -> str:
    """The last cell (diff, revert) of version ``version``'s history row."""
    row = page[page.index(f"<strong>v{version}</strong>") :]
    row = row[: row.index("</tr>")]
    return row[row.rindex("<td") :]


def test_history_offers_revert_only_where_it_changes_the_text(browse, writer, agent_md):
    original = agent_md.body
    svc.document_write(document=agent_md, body="# Two\n", base_version=1, user=writer)
    svc.document_write(document=agent_md, body="# Three\n", base_version=2, user=writer)
    svc.document_revert(document=agent_md, version=1, user=writer)
    agent_md.refresh_from_db()
    assert agent_md.version == 4 and agent_md.body == original

    page = browse(writer).get("/t/acme/web/history/agent.md").content.decode()

    # v1 has the current text: no revert, and no stray separator before nothing.
    assert "revert" not in _history_actions(page, 1) and "·" not in _history_actions(page, 1)
    assert "revert" not in _history_actions(page, 4)  # the current version
    assert "?version=2" in _history_actions(page, 2) and "diff" in _history_actions(page, 2)
    assert "Reverted to v1</span>" in page


def test_history_of_a_reverted_version_older_than_the_page_names_it(browse, writer, agent_md):
    document = agent_md
    for number in range(2, 55):
        document = svc.document_write(
            document=document, body=f"# v{number}\n", base_version=number - 1, user=writer
        ).document
    svc.document_revert(document=document, version=1, user=writer)

    page = browse(writer).get("/t/acme/web/history/agent.md").content.decode()

    assert "Reverted to v1</span>" in page


@pytest.mark.parametrize(
    "url, data",
    [
        ("/t/acme/web/edit/agent.md", {"body": "# locked out\n", "base_version": 2}),
        ("/t/acme/web/delete/agent.md", {"base_version": 2}),
        ("/t/acme/web/revert/agent.md", {"version": 1, "base_version": 2}),
    ],
)
def test_a_save_refused_by_a_lock_shows_one_banner_with_a_readable_time(
    browse, writer, admin, agent_md, url, data
):
    svc.document_write(document=agent_md, body="# Two\n", base_version=1, user=writer)
    agent_md = document_locks.document_lock(document=agent_md, user=admin)
    expires = lock_selectors.lock_state(agent_md)["expires_at"]

    response = browse(writer).post(url, data)

    text = response.content.decode()
    assert response.status_code == 423
    assert text.count("is editing this document") == 1
    # The instant only as the <time> element's machine-readable value; people read
    # "HH:MM UTC", which app.js turns into their own clock.
    assert text.count(expires) == text.count(f'datetime="{expires}"') == 1
    assert f'<time datetime="{expires}" data-local-time>' in text
    assert f"{agent_md.lock_expires_at:%H:%M} UTC" in text


def test_creating_agent_md_over_an_inherited_one_says_so_and_offers_its_text(
    browse, writer, admin, project, vance, make_document
):
    make_document(vance, "agent.md", "# Tenant rules\n\n- Be brief.\n", user=admin)
    client = browse(writer)

    page = client.get("/t/acme/web/new/?path=agent.md").content.decode()
    assert "This project inherits" in page and "will shadow it" in page
    assert "?path=agent.md&amp;start=inherited" in page and "Start from the inherited text" in page

    started = client.get("/t/acme/web/new/?path=agent.md&start=inherited").content.decode()
    assert "# Tenant rules\n\n- Be brief.\n</textarea>" in started
    assert "Start from the inherited text" not in started

    for query in ["?path=notes.md", "?path=%00", ""]:
        assert "will shadow it" not in client.get("/t/acme/web/new/" + query).content.decode()

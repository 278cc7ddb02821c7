"""The skill pages (issue 37): the list, a skill with its files and versions, the
`SKILL.md` editor (the document editor's preview and size meter) and the diff."""

from __future__ import annotations

import pytest

from agentdocs.models import ChangeRequest, Skill
from agentdocs.services import policy as policy_service
from agentdocs.services import skills as skill_service
from tests.skill_bundles import skill_md

pytestmark = pytest.mark.django_db

FILES = {
    "SKILL.md": skill_md("handoff", body="# Steps\n\n1. Write it <b>down</b>.\n"),
    "scripts/run.sh": "#!/bin/sh\necho '<script>alert(1)</script>'\n",
}


@pytest.fixture
def handoff(project, writer):
    return skill_service.skill_create(
        project=project, name="handoff", files=FILES, user=writer, reason="first"
    ).skill


@pytest.fixture
def review(vance, admin):
    files = {"SKILL.md": skill_md("review", "Review a change.")}
    return skill_service.skill_create(project=vance, name="review", files=files, user=admin).skill


def edit(client, body: str, *, base: int, reason: str = "", **extra: str):
    return client.post(
        "/t/acme/web/skills/handoff/edit/",
        {"body": body, "base_version": base, "reason": reason, **extra},
    )


def test_a_protected_skill_s_editor_proposes_and_an_admin_saves_without_review(
    browse, tenant, writer, admin, handoff
):
    """`review.required` as in the document editor: "Propose a change" opens a change
    request; a plain save is refused (409 `review_required`); a tenant admin's "Save
    without review" needs a reason; a writer may not ask for it."""
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["skills/"]', user=admin
    )
    client = browse(writer)
    text = client.get("/t/acme/web/skills/handoff/edit/").content.decode()
    assert "Propose a change" in text and "Save without review" not in text
    assert (
        "Save without review"
        in browse(admin).get("/t/acme/web/skills/handoff/edit/").content.decode()
    )
    body = skill_md("handoff", "With care.")
    refused = edit(client, body, base=1, reason="care")
    assert refused.status_code == 409 and "review.required" in refused.content.decode()
    assert edit(client, body, base=1, reason="care", bypass_review="on").status_code == 403
    assert Skill.objects.get(pk=handoff.pk).version == 1
    proposed = edit(client, body, base=1, reason="care", propose="on")
    [change] = ChangeRequest.objects.all()
    assert proposed.status_code == 302 and proposed["Location"].endswith(f"/changes/{change.pk}/")
    assert change.skill == "handoff" and change.base_version == 1
    assert (
        change.files["SKILL.md"] == body
        and change.files["scripts/run.sh"] == FILES["scripts/run.sh"]
    )
    no_reason = edit(browse(admin), body, base=1, bypass_review="on")
    assert no_reason.status_code == 400 and "needs a reason" in no_reason.content.decode()
    saved = edit(browse(admin), body, base=1, reason="urgent", bypass_review="on")
    assert saved.status_code == 302 and Skill.objects.get(pk=handoff.pk).version == 2


def test_the_list_shows_the_projects_and_the_tenants_skills(browse, reader, handoff, review):
    page = browse(reader).get("/t/acme/web/skills/")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'href="/t/acme/web/skills/handoff/"' in text
    assert 'href="/t/acme/web/skills/review/"' in text and "from _vance" in text
    assert "Hand work over to the next session." in text
    assert 'href="/t/acme/web/skills/"' in browse(reader).get("/t/acme/web/").content.decode()


def test_the_skill_page_shows_files_versions_and_escapes_them(browse, reader, handoff):
    page = browse(reader).get("/t/acme/web/skills/handoff/")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-skill-file="scripts/run.sh"' in text and 'data-skill-file="SKILL.md"' in text
    assert "<script>alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<b>down</b>" not in text  # the preview is sanitised
    assert "first" in text  # the version's reason
    # A reader gets no editor.
    assert "/t/acme/web/skills/handoff/edit/" not in text


def test_the_editor_saves_skill_md_as_the_next_version_keeping_the_other_files(
    browse, writer, handoff
):
    client = browse(writer)
    page = client.get("/t/acme/web/skills/handoff/edit/")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="size-meter"' in text and 'id="preview"' in text  # the documents' editor
    assert "name: handoff" in text

    new = skill_md("handoff", "Hand over, carefully.")
    response = edit(client, new, base=1, reason="clearer")
    assert response.status_code == 302
    handoff.refresh_from_db()
    assert (handoff.version, handoff.description) == (2, "Hand over, carefully.")
    assert handoff.files == {**FILES, "SKILL.md": new}
    assert handoff.history.first().history_change_reason == "clearer"


def test_a_refused_save_is_shown_beside_the_editor_and_writes_nothing(browse, writer, handoff):
    client = browse(writer)
    response = edit(client, "---\nname: other\ndescription: x\n---\n", base=1)
    assert response.status_code == 422
    text = response.content.decode()
    assert "name: The frontmatter" in text
    stale = edit(client, skill_md("handoff", "Stale."), base=7)
    assert stale.status_code == 412
    assert Skill.objects.get(pk=handoff.pk).version == 1


def test_a_body_over_the_recommendation_is_a_warning_not_a_refusal(browse, writer, handoff):
    long = skill_md("handoff", body="line\n" * 600)
    response = edit(browse(writer), long, base=1)
    assert response.status_code == 302
    page = browse(writer).get("/t/acme/web/skills/handoff/")
    assert "the specification recommends at most 500" in page.content.decode()


def test_the_diff_shows_each_changed_file(browse, reader, writer, handoff):
    skill_service.skill_write(
        skill=handoff,
        files={"SKILL.md": FILES["SKILL.md"], "references/more.md": "More.\n"},
        base_version=1,
        user=writer,
    )
    page = browse(reader).get("/t/acme/web/skills/handoff/diff/?from=1&to=2")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-skill-diff="references/more.md"' in text
    assert 'data-skill-diff="scripts/run.sh"' in text
    assert 'data-skill-diff="SKILL.md"' not in text
    assert browse(reader).get("/t/acme/web/skills/handoff/diff/?from=9").status_code == 404


def test_a_tenant_skill_is_read_here_and_edited_only_in_vance(
    browse, writer, admin, review, project
):
    assert browse(writer).get("/t/acme/web/skills/review/").status_code == 200
    assert browse(writer).get("/t/acme/web/skills/review/edit/").status_code == 404
    assert browse(admin).get("/t/acme/_vance/skills/review/edit/").status_code == 200
    assert browse(writer).get("/t/acme/_vance/skills/review/edit/").status_code == 403


@pytest.mark.parametrize(
    "url",
    [
        "/t/acme/web/skills/",
        "/t/acme/web/skills/handoff/",
        "/t/acme/web/skills/handoff/edit/",
        "/t/acme/web/skills/handoff/diff/?from=1&to=1",
    ],
)
def test_another_tenants_user_gets_404(browse, outsider, other_tenant, handoff, url):
    assert browse(outsider).get(url).status_code == 404
    assert browse(outsider).post(url, {"body": "x", "base_version": 1}).status_code in (404, 405)
    assert Skill.objects.get(pk=handoff.pk).version == 1


@pytest.mark.parametrize("count", [1, 20])
def test_the_pages_run_the_same_queries_however_many_skills_and_files(
    browse, reader, project, writer, count, django_assert_max_num_queries
):
    for n in range(count):
        files = {"SKILL.md": skill_md(f"s-{n:02}")}
        files.update({f"references/r{k}.md": f"{k}\n" for k in range(count)})
        skill_service.skill_create(project=project, name=f"s-{n:02}", files=files, user=writer)
    client = browse(reader)
    client.get("/t/acme/web/skills/")  # the session's first page
    with django_assert_max_num_queries(12):
        assert client.get("/t/acme/web/skills/").status_code == 200
    with django_assert_max_num_queries(12):
        assert client.get("/t/acme/web/skills/s-00/").status_code == 200

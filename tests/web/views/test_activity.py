"""The tenant's Activity page and the history pages of settings, recipes, memberships
and providers."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.management.commands.seed_large_tenant import build_large_tenant
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import providers as provider_service
from agentdocs.services import tenancy as tenant_service

pytestmark = pytest.mark.django_db

ACTIVITY = "/t/acme/-/activity/"


@pytest.fixture
def changes(tenant, project, admin, writer, agent_md):
    document_service.document_write(
        document=agent_md, body="# Web\n", base_version=1, user=writer, reason="shorter rules"
    )
    policy_service.setting_set(
        tenant=tenant,
        project=None,
        key="memory.tone",
        value="terse",
        user=admin,
        reason="house voice",
    )
    tenant_service.membership_set(
        tenant=tenant, username="carol", role="writer", actor=admin, reason="promoted"
    )


def test_the_tenant_page_links_to_the_activity(browse, reader, tenant):
    assert ACTIVITY in browse(reader).get("/t/acme/").content.decode()


def test_the_activity_page_lists_changes_linked_to_their_targets(browse, admin, changes):
    response = browse(admin).get(ACTIVITY)
    page = response.content.decode()
    assert response.status_code == 200
    assert "shorter rules" in page and "house voice" in page and "promoted" in page
    assert 'href="/t/acme/web/doc/agent.md"' in page
    assert 'href="/t/acme/-/history/settings/memory.tone/"' in page
    assert 'href="/t/acme/-/history/members/carol/"' in page


def test_readers_see_no_membership_changes(browse, reader, changes):
    page = browse(reader).get(ACTIVITY).content.decode()
    assert "shorter rules" in page
    assert "promoted" not in page
    assert '<option value="membership"' not in page


def test_the_filters_narrow_the_page(browse, admin, changes):
    page = browse(admin).get(ACTIVITY, {"kind": "setting"}).content.decode()
    assert "house voice" in page and "shorter rules" not in page
    assert '<option value="setting" selected' in page
    page = browse(admin).get(ACTIVITY, {"actor": "bob", "project": "web"}).content.decode()
    assert "shorter rules" in page and "house voice" not in page


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"kind": "nope"}, "Unknown kind"),
        ({"since": "last week"}, "ISO 8601"),
        ({"project": "nope"}, "no project"),
    ],
)
def test_a_bad_filter_is_a_400_page_that_says_why(browse, admin, changes, params, message):
    response = browse(admin).get(ACTIVITY, params)
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page and "shorter rules" not in page


def test_outsiders_get_404(browse, outsider, other_tenant, changes):
    client = browse(outsider)
    assert client.get(ACTIVITY).status_code == 404
    assert client.get("/t/acme/-/history/settings/memory.tone/").status_code == 404


def test_the_activity_page_runs_the_same_queries_for_few_and_many_events(
    browse, admin, tenant, project
):
    client = browse(admin)
    counts = []
    for start, stop in ((0, 2), (2, 60)):
        for i in range(start, stop):
            policy_service.setting_set(
                tenant=tenant, project=project, key=f"memory.k{i}", value="v", user=admin
            )
        client.get(ACTIVITY)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(ACTIVITY).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
    assert "Page 1 of 2" in client.get(ACTIVITY).content.decode()


def _targets(page: str) -> list[str]:
    return re.findall(r'<td class="path">(?:<a href="[^"]*">)?([^<]+)', page)


def test_past_the_count_limit_the_pager_says_so_and_every_page_is_reached(
    browse, reader, tenant, agent_md, admin, settings
):
    build_large_tenant(tenant=tenant, user=admin, projects=0, documents=0, versions=70, records=70)
    client = browse(reader)
    exact = [_targets(client.get(f"{ACTIVITY}?page={n}").content.decode()) for n in (1, 2, 3)]
    settings.AGENTDOCS_PAGINATION_COUNT_LIMIT = 60
    first = client.get(ACTIVITY).content.decode()
    assert "Page 1 of 2 or more" in first and 'href="?page=2">Next</a>' in first
    pages, number = [], 1
    while True:
        page = client.get(f"{ACTIVITY}?page={number}").content.decode()
        pages.append(_targets(page))
        if f'href="?page={number + 1}">Next</a>' not in page:
            break
        number += 1
    assert pages == exact and len(pages) == 3 and len(pages[2]) > 0
    assert "Page 3 of 3<" in page  # the last page: now their number is known
    # Past the end of a list longer than the limit: the last page the count knows of.
    assert "Page 2 of 3 or more" in client.get(f"{ACTIVITY}?page=999").content.decode()


def test_the_activity_page_runs_the_same_queries_counted_exactly_or_not(
    browse, reader, tenant, agent_md, admin, settings
):
    build_large_tenant(tenant=tenant, user=admin, projects=0, documents=0, versions=70, records=70)
    client = browse(reader)
    counts = []
    for limit in (10_000, 60):
        settings.AGENTDOCS_PAGINATION_COUNT_LIMIT = limit
        for number in (1, 3):
            client.get(f"{ACTIVITY}?page={number}")
            with CaptureQueriesContext(connection) as queries:
                assert client.get(f"{ACTIVITY}?page={number}").status_code == 200
            counts.append(len(queries))
    assert len(set(counts)) == 1, counts


def test_a_setting_history_page_shows_who_why_and_the_change(browse, reader, admin, tenant):
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="terse", user=admin, reason="first"
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="warm", user=admin, reason="kinder"
    )
    response = browse(reader).get("/t/acme/-/history/settings/memory.tone/")
    page = response.content.decode()
    assert response.status_code == 200
    assert "alice" in page and "kinder" in page and "first" in page
    assert "<del>terse</del>" in page and "<ins>warm</ins>" in page
    assert "v2" in page


def test_the_settings_page_links_each_setting_to_its_history(browse, reader, admin, project):
    policy_service.setting_set(
        tenant=project.tenant, project=project, key="memory.lang", value="en", user=admin
    )
    page = browse(reader).get("/t/acme/web/settings/").content.decode()
    assert 'href="/t/acme/-/history/settings/memory.lang/?project=web"' in page
    history = browse(reader).get("/t/acme/-/history/settings/memory.lang/", {"project": "web"})
    assert history.status_code == 200 and "<ins>en</ins>" in history.content.decode()


def test_a_recipe_history_page_shows_a_line_diff_escaped(browse, reader, admin, tenant):
    recipe = policy_service.recipe_create(
        tenant=tenant, name="review", params={"agentDocument": "a.md"}, profiles={}, user=admin
    )
    policy_service.recipe_update(
        recipe=recipe,
        params={"agentDocument": "<b>.md"},
        profiles={},
        user=admin,
        reason="renamed <rules>",
    )
    assert (
        "/t/acme/-/history/recipes/review/"
        in browse(reader).get("/t/acme/-/recipes/review/").content.decode()
    )
    page = browse(reader).get("/t/acme/-/history/recipes/review/").content.decode()
    assert "renamed &lt;rules&gt;" in page and "<rules>" not in page
    assert "-    &quot;agentDocument&quot;: &quot;a.md&quot;" in page
    assert "+    &quot;agentDocument&quot;: &quot;&lt;b&gt;.md&quot;" in page


def test_membership_history_pages_are_for_admins(browse, admin, reader, tenant):
    tenant_service.membership_set(
        tenant=tenant, username="carol", role="writer", actor=admin, reason="promoted"
    )
    assert browse(reader).get("/t/acme/-/history/members/carol/").status_code == 403
    page = browse(admin).get("/t/acme/-/history/members/carol/").content.decode()
    assert "promoted" in page and "<del>reader</del>" in page and "<ins>writer</ins>" in page


def test_a_provider_history_page(browse, reader, admin, tenant, project):
    for path in ("a.md", "b.md"):
        provider_service.provider_set(
            tenant=tenant, name="ws/base", project_slug="web", path=path, user=admin
        )
    page = browse(reader).get("/t/acme/-/history/providers/ws/base/").content.decode()
    assert "<del>a.md</del>" in page and "<ins>b.md</ins>" in page


def test_unknown_histories_are_404_and_bad_names_400(browse, admin, tenant):
    client = browse(admin)
    assert client.get("/t/acme/-/history/settings/memory.never/").status_code == 404
    assert client.get("/t/acme/-/history/settings/tone/").status_code == 400
    assert client.get("/t/acme/-/history/recipes/never/").status_code == 404
    assert client.get("/t/acme/-/history/members/nobody/").status_code == 404


def test_past_a_hundred_projects_the_project_filter_is_typed(
    browse, admin, tenant, changes, monkeypatch
):
    from agentdocs.web.views import activity as activity_view

    page = browse(admin).get(ACTIVITY).content.decode()
    assert '<select id="activity-project"' in page
    monkeypatch.setattr(activity_view, "PROJECT_CHOICES", 0)
    page = browse(admin).get(ACTIVITY, {"project": "web"}).content.decode()
    assert '<select id="activity-project"' not in page
    assert '<input id="activity-project" name="project" value="web"' in page
    assert "shorter rules" in page and "house voice" not in page

"""The Repositories pages: a project's repositories as a table with state badges and
behind_by, one repository with its checks, the count on the tenant page; members only
(outsiders 404), queries constant in the number of repositories."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.models import Repository
from agentdocs.selectors.export import export_build
from agentdocs.services import documents as document_service
from agentdocs.services import repositories as repository_service

pytestmark = pytest.mark.django_db

URL = "/t/acme/web/repositories/"


def report(project, user, *, remote: str, files: dict[str, str], kind: str = "sync"):
    return repository_service.repository_report(
        project=project,
        user=user,
        token=None,
        kind=kind,
        remote=remote,
        name=None,
        branch="main",
        commit="c" * 40,
        dirty=False,
        formats="agents-md",
        recipe=None,
        profile=None,
        export_sha256=export_build(project=project, format="agents-md").export_sha256,
        files=files,
        binding=None,
    )


@pytest.fixture
def two_repositories(project, writer, agent_md):
    behind = report(
        project, writer, remote="https://example.com/acme/web.git", files={"AGENTS.md": "in-sync"}
    )
    edited = report(
        project,
        writer,
        remote="git@example.com:acme/fork.git",
        files={"AGENTS.md": "edited-locally"},
        kind="check",
    )
    document_service.document_write(
        document=agent_md,
        user=writer,
        body="# Web rules\n\n- Spaces.\n",
        base_version=1,
        reason="spaces",
    )
    return behind.repository, edited.repository


def test_the_page_lists_two_repositories_with_their_state_badges(browse, reader, two_repositories):
    behind, edited = two_repositories
    response = browse(reader).get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert "https://example.com/acme/web.git" in html and "git@example.com:acme/fork.git" in html
    row = html[html.index(f'data-repository="{behind.pk}"') :]
    row = row[: row.index("</tr>")]
    assert 'data-state="behind"' in row and "AGENTS.md</span>: 1 version" in row
    row = html[html.index(f'data-repository="{edited.pk}"') :]
    assert 'data-state="edited-locally"' in row[: row.index("</tr>")]
    assert f"/t/acme/web/repositories/{behind.pk}/" in html


def test_the_detail_page_shows_the_checks(browse, reader, two_repositories):
    behind, _edited = two_repositories
    html = browse(reader).get(f"{URL}{behind.pk}/").content.decode()
    assert 'id="checks"' in html and "sync" in html and "AGENTS.md" in html
    assert 'data-state="behind"' in html


def test_the_tenant_page_counts_repositories_and_the_project_links_them(
    browse, reader, two_repositories
):
    html = browse(reader).get("/t/acme/").content.decode()
    counts = html[html.index('id="repository-counts"') :]
    counts = counts[: counts.index("</div>")]
    assert "2 repositories" in counts
    assert '<span data-count="behind">1</span> behind' in counts
    assert '<span data-count="edited-locally">1</span> edited locally' in counts
    assert URL in browse(reader).get("/t/acme/web/").content.decode()


def test_outsiders_get_404_and_another_projects_repository_is_404(
    browse, outsider, reader, tenant, admin, two_repositories
):
    behind, _ = two_repositories
    assert browse(outsider).get(URL).status_code == 404
    assert browse(outsider).get(f"{URL}{behind.pk}/").status_code == 404
    from agentdocs.services import tenancy as tenant_service

    tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    assert browse(reader).get(f"/t/acme/api/repositories/{behind.pk}/").status_code == 404


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_the_pages_queries_do_not_grow_with_the_repositories(
    browse, reader, project, writer, two_repositories
):
    client = browse(reader)
    client.get(URL)
    list_one, tenant_one = _queries(client, URL), _queries(client, "/t/acme/")
    for index in range(10):
        report(
            project,
            writer,
            remote=f"https://example.com/acme/r{index}.git",
            files={"AGENTS.md": "in-sync"},
        )
    assert Repository.objects.count() == 12
    client.get(URL)
    assert _queries(client, URL) == list_one
    assert _queries(client, "/t/acme/") == tenant_one


def test_the_tenant_page_counts_every_project_s_repositories_in_constant_queries(
    browse, reader, tenant, admin, writer, two_repositories
):
    from agentdocs.services import tenancy as tenant_service

    client = browse(reader)
    client.get("/t/acme/")
    before = _queries(client, "/t/acme/")
    for index in range(4):
        other = tenant_service.project_create(
            tenant=tenant, slug=f"p{index}", name=f"P{index}", user=admin
        )
        report(
            other,
            admin,
            remote=f"https://example.com/acme/p{index}.git",
            files={"AGENTS.md": "in-sync"},
        )
    assert _queries(client, "/t/acme/") == before
    html = client.get("/t/acme/").content.decode()
    counts = html[html.index('id="repository-counts"') :]
    assert "6 repositories" in counts[: counts.index("</div>")]
    assert "4 in sync" in counts[: counts.index("</div>")]


def test_a_tenant_wide_setting_changed_since_a_report_counts_it_behind(
    browse, reader, tenant, admin, two_repositories
):
    from agentdocs.services import policy as policy_service

    client = browse(reader)

    def behind() -> str:
        html = client.get("/t/acme/").content.decode()
        counts = html[html.index('id="repository-counts"') :]
        found = counts[counts.index('data-count="behind">') + len('data-count="behind">') :]
        return found[: found.index("<")]

    from django.utils import timezone

    assert behind() == "1"  # agent.md was written after the first one's report
    reported, _ = two_repositories
    Repository.objects.filter(pk=reported.pk).update(last_seen=timezone.now())
    assert behind() == "0"  # reported again since: nothing changed after it
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.secrets.policy", value="reference-only", user=admin
    )
    assert behind() == "1"


def test_the_runs_page_shows_repository_bound_runs(browse, api, reader, writer, project, agent_md):
    from tests.api.test_bindings_repository import section_for

    response = api(writer).post(
        "/api/v1/tenants/acme/projects/web/bindings/",
        {"process": "codex-run", "repository": section_for(project)},
        format="json",
    )
    assert response.status_code == 201, response.content
    html = browse(reader).get("/t/acme/web/runs/").content.decode()
    assert "repository:AGENTS.md" in html


def test_the_activity_page_lists_repository_state_changes(browse, reader, two_repositories):
    html = browse(reader).get("/t/acme/-/activity/?kind=repository").content.decode()
    assert html.count("state_changed") >= 2
    assert "git@example.com:acme/fork.git" in html


def test_a_repository_whose_export_was_not_built_shows_not_computed(
    browse, reader, project, writer, agent_md, settings
):
    settings.AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST = 1
    for index, formats in enumerate(("agents-md", "claude-md", "agents-md,claude-md")):
        repository_service.repository_report(
            project=project,
            user=writer,
            token=None,
            kind="sync",
            remote=f"https://example.com/acme/r{index}.git",
            name=None,
            branch="main",
            commit=None,
            dirty=False,
            formats=formats,
            recipe=None,
            profile=None,
            export_sha256="0" * 64,
            files={"AGENTS.md": "in-sync"},
            binding=None,
        )
    html = browse(reader).get(URL).content.decode()
    assert html.count('data-state="not-computed"') == 2
    assert html.count('data-state="behind"') == 1


def test_the_detail_page_pages_the_checks(browse, reader, project, writer, agent_md):
    from django.utils import timezone

    from agentdocs.models import RepositoryCheck

    repository = report(
        project, writer, remote="https://example.com/acme/web.git", files={"AGENTS.md": "in-sync"}
    ).repository
    earlier = timezone.now() - timezone.timedelta(hours=1)
    RepositoryCheck.objects.bulk_create(
        RepositoryCheck(
            repository=repository,
            kind="check",
            formats="agents-md",
            export_sha256="0" * 64,
            files={"AGENTS.md": "edited-locally"},
            state="edited-locally",
            reported_at=earlier - timezone.timedelta(seconds=index),
        )
        for index in range(60)
    )
    page = f"{URL}{repository.pk}/"
    first = browse(reader).get(page).content.decode()
    assert first.count('data-state="edited-locally"') == 49  # and the newest, in sync
    assert "Page 1 of 2" in first
    second = browse(reader).get(f"{page}?page=2").content.decode()
    assert second.count('data-state="edited-locally"') == 11 and "Page 2 of 2" in second

"""Repositories over the API: reports (a `render` token suffices), each bad field a 400
naming it, the list's states (in-sync, behind with behind_by, edited-locally,
never-checked), the detail with checks and runs, tenant isolation, query counts
constant in the number of repositories, and `repository.state_changed`."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from agentdocs.links import event_data
from agentdocs.models import Event, Repository, RepositoryCheck
from agentdocs.selectors.export import export_build
from agentdocs.services import documents as document_service
from agentdocs.services import tokens as token_service
from tests.api.test_bindings_repository import section_for

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web/repositories/"
COMMIT = "c" * 40
REMOTE = "https://example.com/acme/web.git"


@pytest.fixture
def notes(project, make_document):
    return make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n")


def current_sha(project, format: str = "agents-md") -> str:
    return export_build(project=project, format=format).export_sha256


def report(project, **extra) -> dict:
    body = {
        "kind": "sync",
        "remote": REMOTE,
        "branch": "main",
        "commit": COMMIT,
        "dirty": False,
        "formats": "agents-md",
        "export_sha256": current_sha(project),
        "files": {"AGENTS.md": "in-sync"},
    }
    body.update(extra)
    return body


def render_client(user) -> APIClient:
    key = token_service.token_create(user=user, name="ci", scopes=["render"]).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_render_token_reports_and_the_list_shows_the_repository_in_sync(reader, project, notes):
    client = render_client(reader)
    response = client.post(BASE, report(project), format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["state"] == "in-sync"
    assert body["remote"] == REMOTE and body["branch"] == "main"
    assert body["last_commit"] == COMMIT
    assert body["export_sha256"] == body["current_export_sha256"] == current_sha(project)
    assert body["behind_by"] == {} and body["last_run"] is None
    assert response["Location"] == body["url"]
    again = client.post(BASE, report(project), format="json")
    assert again.status_code == 200 and again.json()["id"] == body["id"]
    assert Repository.objects.count() == 1 and RepositoryCheck.objects.count() == 2


def test_credentials_are_stripped_from_the_remote_that_identifies_a_repository(
    api, writer, project, notes
):
    secret = "https://bob:hunter2@example.com/acme/web.git"
    first = api(writer).post(BASE, report(project, remote=secret), format="json").json()
    second = api(writer).post(BASE, report(project), format="json").json()
    assert first["remote"] == REMOTE and first["id"] == second["id"]
    assert "hunter2" not in str(Repository.objects.values_list("remote", flat=True))


def test_two_repositories_in_different_states_and_a_server_edit_puts_one_behind(
    api, admin, writer, project, notes
):
    client = api(writer)
    web = client.post(BASE, report(project), format="json").json()
    edited = client.post(
        BASE,
        report(
            project,
            remote="git@example.com:acme/fork.git",
            kind="check",
            files={"AGENTS.md": "edited-locally"},
        ),
        format="json",
    ).json()
    assert edited["state"] == "edited-locally"
    document_service.document_write(
        document=notes,
        user=admin,
        body="# Web rules\n\n- Use spaces.\n",
        base_version=1,
        reason="spaces",
    )
    listed = {row["id"]: row for row in client.get(BASE).json()["results"]}
    assert listed[web["id"]]["state"] == "behind"
    assert listed[web["id"]]["behind_by"] == {"AGENTS.md": 1}
    assert listed[web["id"]]["current_export_sha256"] != web["export_sha256"]
    assert listed[edited["id"]]["state"] == "edited-locally"
    # A sync takes the server's export: in sync again, nothing behind.
    synced = client.post(BASE, report(project), format="json").json()
    assert synced["state"] == "in-sync" and synced["behind_by"] == {}


def test_one_format_may_come_as_format_and_a_list_as_formats(api, writer, project, notes):
    one = report(project)
    del one["formats"]
    one["format"] = "agents-md"
    assert api(writer).post(BASE, one, format="json").json()["formats"] == ["agents-md"]
    both = report(
        project,
        formats=["agents-md", "claude-md", "agents-md"],
        export_sha256=current_sha(project),
        remote="https://example.com/acme/two.git",
    )
    assert api(writer).post(BASE, both, format="json").json()["formats"] == [
        "agents-md",
        "claude-md",
    ]


def test_a_report_without_file_states_is_never_checked(api, writer, project, notes):
    body = api(writer).post(BASE, report(project, files={}), format="json").json()
    assert body["state"] == "never-checked"


def test_a_repository_without_a_remote_is_known_by_its_name(api, writer, project, notes):
    body = api(writer).post(BASE, report(project, remote=None, name="laptop"), format="json")
    assert body.status_code == 201 and body.json()["name"] == "laptop"
    missing = api(writer).post(BASE, report(project, remote=None), format="json")
    assert missing.status_code == 400 and missing.json()["field"] == "remote"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"kind": "push"}, "kind"),
        ({"formats": "agents-md,nope"}, "formats"),
        ({"formats": []}, "formats"),
        ({"formats": None}, "formats"),
        ({"format": "nope", "formats": None}, "format"),
        ({"format": "agents-md"}, "format"),
        ({"export_sha256": "abc"}, "export_sha256"),
        ({"files": ["AGENTS.md"]}, "files"),
        ({"files": {"AGENTS.md": "fine"}}, "files.AGENTS.md"),
        ({"files": {"/etc/passwd": "in-sync"}}, "files"),
        ({"files": {"a" * 2000: "in-sync"}}, "files"),
        ({"files": {f"f{i}.md": "in-sync" for i in range(501)}}, "files"),
        ({"commit": "HEAD"}, "commit"),
        ({"branch": "a\nb"}, "branch"),
        ({"remote": "x" * 1001}, "remote"),
        ({"dirty": "yes"}, "dirty"),
        ({"binding": "one"}, "binding"),
        ({"binding": 999999}, "binding"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_each_bad_field_is_a_400_naming_it_and_nothing_is_stored(
    api, writer, project, notes, change, field
):
    response = api(writer).post(BASE, report(project, **change), format="json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert not Repository.objects.exists() and not RepositoryCheck.objects.exists()


def test_a_bind_report_names_its_run_and_the_detail_lists_checks_and_runs(
    api, writer, project, notes
):
    client = api(writer)
    record = client.post(
        "/api/v1/tenants/acme/projects/web/bindings/",
        {"process": "run-7", "repository": section_for(project)},
        format="json",
    )
    assert record.status_code == 201, record.content
    record = record.json()
    client.post(BASE, report(project), format="json")
    bound = client.post(
        BASE, report(project, kind="bind", binding=record["id"]), format="json"
    ).json()
    assert bound["last_run"]["id"] == record["id"]
    assert bound["last_run"]["process"] == "run-7"
    detail = client.get(bound["url"]).json()
    assert [check["kind"] for check in detail["checks"]] == ["bind", "sync"]
    assert [run["id"] for run in detail["runs"]] == [record["id"]]
    assert detail["runs"][0]["tool"] == "codex"
    assert detail["checks"][0]["reported_by"] == "bob"
    wrong = client.post(BASE, report(project, kind="sync", binding=record["id"]), format="json")
    assert wrong.status_code == 400 and wrong.json()["field"] == "binding"


def test_an_outsider_gets_404_on_every_endpoint(
    api, writer, outsider, project, notes, other_tenant
):
    created = api(writer).post(BASE, report(project), format="json").json()
    stranger = api(outsider)
    assert stranger.get(BASE).status_code == 404
    assert stranger.post(BASE, report(project), format="json").status_code == 404
    assert stranger.get(created["url"]).status_code == 404
    assert stranger.get(f"{BASE}999999").status_code == 404
    # Another tenant's repository id, asked under the outsider's own tenant: 404 too.
    other = "/api/v1/tenants/globex/projects/_vance/repositories/"
    assert stranger.get(f"{other}{created['id']}").status_code == 404
    assert RepositoryCheck.objects.count() == 1


def test_a_read_token_cannot_report(reader, project, notes):
    key = token_service.token_create(user=reader, name="ro", scopes=["read"]).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.post(BASE, report(project), format="json").status_code == 403
    assert client.get(BASE).status_code == 200


def _count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_the_list_and_detail_queries_do_not_grow_with_the_repositories(api, writer, project, notes):
    client = api(writer)
    first = client.post(BASE, report(project), format="json").json()
    client.get(BASE)  # a first list, as a running server has had
    one = _count_queries(client, BASE)
    one_detail = _count_queries(client, first["url"])
    for index in range(12):
        formats = "agents-md,claude-md" if index % 2 else "agents-md"
        client.post(
            BASE,
            report(
                project,
                remote=f"https://example.com/acme/r{index}.git",
                formats=formats,
                kind="bind" if index % 3 else "check",
            ),
            format="json",
        )
    client.get(BASE)
    assert _count_queries(client, BASE) == one
    assert _count_queries(client, first["url"]) == one_detail


def test_a_state_change_emits_repository_state_changed_once(api, writer, project, notes):
    client = api(writer)
    client.post(BASE, report(project), format="json")
    client.post(BASE, report(project), format="json")  # same state: no event
    client.post(BASE, report(project, files={"AGENTS.md": "edited-locally"}), format="json")
    events = list(
        Event.objects.filter(type="repository.state_changed").order_by("created_at", "id")
    )
    assert [(e.data["previous"], e.data["state"]) for e in events] == [
        (None, "in-sync"),
        ("in-sync", "edited-locally"),
    ]
    assert events[0].kind == "repository" and events[0].project == project
    assert event_data(events[0])["links"]["api"].endswith(f"/repositories/{events[0].data['id']}")
    feed = client.get("/api/v1/tenants/acme/activity/?kind=repository").json()["results"]
    assert len(feed) == 2


def test_a_webhook_subscribes_to_repository_state_changed_and_receives_it(
    api,
    admin,
    writer,
    project,
    notes,
    webhook_receiver,
    sweep_webhooks,
    django_capture_on_commit_callbacks,
    celery_eager,
):
    hook = api(admin).post(
        "/api/v1/tenants/acme/webhooks/",
        {"url": webhook_receiver.url, "events": ["repository.state_changed"]},
        format="json",
    )
    assert hook.status_code == 201, hook.content
    with django_capture_on_commit_callbacks(execute=True):
        api(writer).post(BASE, report(project), format="json")
    sweep_webhooks()  # without a broker the sweeper sends it; with one, the commit did
    assert len(webhook_receiver.received) == 1
    payload = json.loads(webhook_receiver.received[0][0])
    assert payload["type"] == "repository.state_changed"
    assert payload["data"]["state"] == "in-sync"

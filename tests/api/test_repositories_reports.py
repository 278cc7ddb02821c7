"""Repository reports checked like everything else (issue 34, findings 4 and 8): a
secret or a hidden character in a report's `remote`, `name`, `branch`, `recipe`,
`profile` or a path of `files` is a 422 naming the field (the shape of a document
body's refusal) and nothing is stored or emitted; a remote loses its credentials in
every form (scp-like `user:password@host:path` included) before it is stored, emitted
or signed into a binding record; a remote that cannot be read is a 400
`invalid_remote` naming it, never a 500; reports are rate-limited per token and per
person; formats are kept sorted and a list builds at most
`AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST` exports (the rest `not-computed`); `files`
is capped in count and path bytes, and a repository's checks and runs are paged so
its detail stays under 1 MB. The cast: a reader's `render` token reports, the outsider
gets 404."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agentdocs.models import BindingRecord, Event, Repository, RepositoryCheck
from tests.api.test_bindings_repository import section_for
from tests.api.test_documents import assert_error
from tests.api.test_repositories import BASE, current_sha, render_client, report

pytestmark = pytest.mark.django_db

_HEX = hashlib.sha256(b"issue 34: repository reports").hexdigest()
# A synthetic GitHub token (derived from a fixed label: never a credential).
GITHUB_TOKEN = "ghp_" + _HEX[:18] + _HEX[18:36].upper()
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
SCP_WITH_PASSWORD = "bob:s3cr3tpass@github.com:org/repo.git"
BINDINGS = "/api/v1/tenants/acme/projects/web/bindings/"


@pytest.fixture
def notes(project, make_document):
    return make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n")


def nothing_stored() -> None:
    assert not Repository.objects.exists() and not RepositoryCheck.objects.exists()
    assert not Event.objects.filter(type="repository.state_changed").exists()


# Text checks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"remote": None, "name": f"laptop-{GITHUB_TOKEN}"}, "name"),
        ({"branch": f"feature/{GITHUB_TOKEN}"}, "branch"),
        ({"files": {"AGENTS.md": "in-sync", f"docs/{GITHUB_TOKEN}.md": "extra"}}, "files"),
        ({"remote": f"https://example.com/acme/{GITHUB_TOKEN}.git"}, "remote"),
        ({"recipe": f"r-{GITHUB_TOKEN}"}, "recipe"),
        ({"profile": f"p-{GITHUB_TOKEN}"}, "profile"),
    ],
)
def test_a_secret_in_a_report_is_a_422_naming_the_field_and_nothing_is_stored(
    reader, project, notes, change, field
):
    response = render_client(reader).post(BASE, report(project, **change), format="json")
    body = assert_error(response, 422, "secret_detected", field)
    assert GITHUB_TOKEN not in response.content.decode()
    if field == "files":
        assert body["line"] == 2  # the path's position in `files`
    nothing_stored()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"files": {f"docs/evil{RLO}dm.md": "extra"}}, "files"),
        ({"branch": f"main{RLO}x"}, "branch"),
        ({"remote": None, "name": f"lap{RLO}top"}, "name"),
        ({"remote": f"https://example.com/acme/we{RLO}b.git"}, "remote"),
    ],
)
def test_a_hidden_character_in_a_report_is_a_422_naming_the_field(
    reader, project, notes, change, field
):
    response = render_client(reader).post(BASE, report(project, **change), format="json")
    body = assert_error(response, 422, "hidden_characters", field)
    assert body["characters"][0]["code_point"] == "U+202E"
    nothing_stored()


def test_a_remote_with_credentials_is_stored_and_emitted_without_them(
    reader,
    admin,
    api,
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
    client = render_client(reader)
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post(BASE, report(project, remote=SCP_WITH_PASSWORD), format="json")
    assert first.status_code == 201, first.content
    assert first.json()["remote"] == "github.com:org/repo.git"
    https = report(project, remote="https://bob:s3cr3tpass@example.com/acme/web.git")
    assert client.post(BASE, https, format="json").json()["remote"] == (
        "https://example.com/acme/web.git"
    )
    sweep_webhooks()
    assert len(webhook_receiver.received) == 1
    stored = [
        str(list(Repository.objects.values_list("remote", flat=True))),
        str(list(Event.objects.values_list("data", "target"))),
        webhook_receiver.received[0][0].decode(),
        client.get("/api/v1/tenants/acme/activity/?kind=repository").content.decode(),
    ]
    for text in stored:
        assert "s3cr3tpass" not in text
    assert json.loads(webhook_receiver.received[0][0])["data"]["remote"] == (
        "github.com:org/repo.git"
    )


@pytest.mark.parametrize(
    "remote",
    [
        "https://example.com:99999/acme/web.git",
        "https://example.com:abc/acme/web.git",
        "https://example.com:0/acme/web.git",
        "https://[::1/acme/web.git",
        "https://[zzz]/acme/web.git",
        "https://exa mple.com/acme/web.git",
        "https:///acme/web.git",
        "git@[::1:acme/web.git",
    ],
)
def test_a_remote_that_cannot_be_read_is_a_400_invalid_remote_not_a_500(
    reader, project, notes, remote
):
    response = render_client(reader).post(BASE, report(project, remote=remote), format="json")
    assert response["Content-Type"].startswith("application/json")
    assert_error(response, 400, "invalid_remote", "remote")
    nothing_stored()


def test_an_outsider_gets_404_whatever_the_report_holds(outsider, other_tenant, project, notes):
    client = render_client(outsider)
    for change in ({"branch": f"x/{GITHUB_TOKEN}"}, {"remote": "https://h:99999/x.git"}):
        assert client.post(BASE, report(project, **change), format="json").status_code == 404
    nothing_stored()


# Binding records (`bind --repo`) --------------------------------------------------------


def test_a_repository_run_loses_an_scp_like_password_before_it_is_signed(
    api, writer, project, notes
):
    section = section_for(project)
    section["remote"] = SCP_WITH_PASSWORD
    section["files"][0]["git"]["remote"] = "deploy:hunter2@git.example.com:acme/web.git"
    response = api(writer).post(BINDINGS, {"process": "run", "repository": section}, format="json")
    assert response.status_code == 201, response.content
    record = response.json()
    assert record["repository"]["remote"] == "github.com:org/repo.git"
    assert record["repository"]["files"][0]["git"]["remote"] == "git.example.com:acme/web.git"
    stored = str(BindingRecord.objects.get().record)
    assert "s3cr3tpass" not in stored and "hunter2" not in stored


@pytest.mark.parametrize(
    ("change", "status", "code", "field"),
    [
        (
            lambda s: s.update(remote="https://github.com:99999/acme/web.git"),
            400,
            "invalid_remote",
            "repository.remote",
        ),
        (
            lambda s: s["files"][0]["git"].update(remote="https://[::1/acme/web.git"),
            400,
            "invalid_remote",
            "repository.files[0].git.remote",
        ),
        (
            lambda s: s.update(branch=f"feature/{GITHUB_TOKEN}"),
            422,
            "secret_detected",
            "repository.branch",
        ),
        (
            lambda s: s.update(remote=f"https://example.com/we{RLO}b.git"),
            422,
            "hidden_characters",
            "repository.remote",
        ),
    ],
)
def test_a_repository_run_with_a_bad_remote_or_a_secret_is_refused_and_nothing_is_signed(
    api, writer, project, notes, change, status, code, field
):
    section = section_for(project)
    change(section)
    response = api(writer).post(BINDINGS, {"process": "run", "repository": section}, format="json")
    assert_error(response, status, code, field)
    assert not BindingRecord.objects.exists()


def test_a_hidden_character_in_a_repository_run_path_names_that_file(api, writer, project, notes):
    section = section_for(project, format="cursor", tool="cursor")
    section["files"][0]["path"] = f".cursor/rules/a{RLO}b.mdc"
    response = api(writer).post(BINDINGS, {"process": "run", "repository": section}, format="json")
    assert_error(response, 422, "hidden_characters", "repository.files[0].path")
    assert not BindingRecord.objects.exists()


# Rate limit ---------------------------------------------------------------------------


def test_reports_are_rate_limited_per_person_across_tokens(
    reader, writer, project, notes, settings
):
    settings.AGENTDOCS_RATE_LIMITS = {
        "repository_report": "2/min",
        "repository_report_user": "3/min",
    }
    first, second = render_client(reader), render_client(reader)
    statuses = [
        first.post(BASE, report(project), format="json").status_code,
        first.post(BASE, report(project), format="json").status_code,
        second.post(BASE, report(project), format="json").status_code,
    ]
    assert statuses == [201, 200, 200]
    refused = second.post(BASE, report(project), format="json")  # the person's fourth
    body = assert_error(refused, 429, "rate_limited")
    assert 1 <= int(refused["Retry-After"]) <= 60 and body["retry_after"] >= 1
    # A fresh token buys nothing; another person counts for themselves.
    assert render_client(reader).post(BASE, report(project), format="json").status_code == 429
    assert render_client(writer).post(BASE, report(project), format="json").status_code == 200
    assert RepositoryCheck.objects.count() == 4


def test_the_per_token_limit_stays_beneath_the_per_person_one(reader, project, notes, settings):
    settings.AGENTDOCS_RATE_LIMITS = {
        "repository_report": "1/min",
        "repository_report_user": "9/min",
    }
    client = render_client(reader)
    assert client.post(BASE, report(project), format="json").status_code == 201
    assert_error(client.post(BASE, report(project), format="json"), 429, "rate_limited")
    assert render_client(reader).post(BASE, report(project), format="json").status_code == 200


# Formats and the exports a list builds ------------------------------------------------


def test_formats_are_kept_sorted_so_an_order_is_never_a_set_of_its_own(
    reader, project, notes, settings
):
    client = render_client(reader)
    settings.AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST = 1
    sha = current_sha(project)
    for index, formats in enumerate(
        (["claude-md", "agents-md"], "agents-md,claude-md", ["claude-md", "agents-md", "claude-md"])
    ):
        body = report(
            project,
            remote=f"https://example.com/acme/r{index}.git",
            formats=formats,
            export_sha256=sha,
        )
        answer = client.post(BASE, body, format="json").json()
        assert answer["formats"] == ["agents-md", "claude-md"], answer
    # A repository reported before formats were sorted shares their export too.
    Repository.objects.filter(remote="https://example.com/acme/r0.git").update(
        formats="claude-md,agents-md"
    )
    listed = client.get(BASE).json()["results"]
    assert len(listed) == 3
    assert {row["state"] for row in listed} == {"behind"}  # agents-md alone is not both
    assert len({row["current_export_sha256"] for row in listed}) == 1
    assert RepositoryCheck.objects.filter(formats="agents-md,claude-md").count() == 3


def test_a_list_builds_at_most_the_configured_exports_and_says_which_it_did_not(
    reader, project, notes, settings
):
    client = render_client(reader)
    settings.AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST = 2
    sets = ["agents-md", "agents-md,claude-md", "claude-md", "agents-md,gemini-md"]
    for index, formats in enumerate(sets):
        client.post(
            BASE,
            report(project, remote=f"https://example.com/acme/r{index}.git", formats=formats),
            format="json",
        )
    rows = client.get(BASE).json()["results"]
    states = {row["remote"]: row for row in rows}
    computed = [row for row in rows if row["state"] != "not-computed"]
    skipped = [row for row in rows if row["state"] == "not-computed"]
    assert len(computed) == 2 and len(skipped) == 2
    assert all(row["current_export_sha256"] is None and row["behind_by"] == {} for row in skipped)
    assert states["https://example.com/acme/r0.git"]["state"] == "in-sync"
    # The repository itself is always computed.
    for row in skipped:
        detail = client.get(row["url"]).json()
        assert detail["state"] != "not-computed" and detail["current_export_sha256"]


# Bounds of files and of the detail -----------------------------------------------------


@pytest.mark.parametrize(
    ("files", "limit"),
    [
        ({f"f{i}.md": "in-sync" for i in range(201)}, 200),
        ({"d/" + "a" * 254: "extra"}, 255),
        ({"d/" + "\U0001f600" * 64: "extra"}, 255),  # 258 bytes in 66 characters
    ],
)
def test_files_are_capped_in_count_and_path_bytes_naming_files_with_the_limit(
    reader, project, notes, files, limit
):
    response = render_client(reader).post(BASE, report(project, files=files), format="json")
    body = assert_error(response, 400, "invalid", "files")
    assert body["limit"] == limit
    nothing_stored()


def test_the_caps_are_settings(reader, project, notes, settings):
    settings.AGENTDOCS_REPOSITORY_MAX_FILES = 2
    settings.AGENTDOCS_REPOSITORY_MAX_PATH = 12
    client = render_client(reader)
    files = {"AGENTS.md": "in-sync", "CLAUDE.md": "extra", "GEMINI.md": "extra"}
    assert (
        assert_error(
            client.post(BASE, report(project, files=files), format="json"), 400, "invalid", "files"
        )["limit"]
        == 2
    )
    long_path = {"AGENTS.md": "in-sync", "docs/long.md1": "extra"}
    refused = client.post(BASE, report(project, files=long_path), format="json")
    assert assert_error(refused, 400, "invalid", "files")["limit"] == 12
    assert client.post(BASE, report(project), format="json").status_code == 201


def _checks(repository: Repository, count: int, files: dict[str, str], binding=None) -> None:
    """``count`` checks older than any report of the test, as months of reports leave."""
    now = timezone.now() - timezone.timedelta(hours=1)
    RepositoryCheck.objects.bulk_create(
        RepositoryCheck(
            repository=repository,
            kind="bind" if binding else "check",
            formats="agents-md",
            export_sha256="0" * 64,
            files=files,
            state="behind",
            binding=binding,
            reported_at=now - timezone.timedelta(seconds=index),
        )
        for index in range(count)
    )


def test_a_detail_with_30_checks_of_the_most_files_stays_under_1_mb(reader, project, notes):
    client = render_client(reader)
    created = client.post(BASE, report(project), format="json").json()
    biggest = {f"{index:03d}/" + "p" * 251: "edited-locally" for index in range(200)}
    assert all(len(path) == 255 for path in biggest)
    Repository.objects.update(files=biggest)
    _checks(Repository.objects.get(), 30, biggest)
    response = client.get(created["url"])
    assert response.status_code == 200
    assert len(response.content) < 1024 * 1024, len(response.content)
    detail = response.json()
    assert len(detail["checks"]) == 8 and detail["checks_next"].endswith("/checks/?page=2")
    # Every check is reachable by following `next`, and no page is over 1 MB either.
    seen, url = [], detail["checks_next"].replace("?page=2", "")
    while url:
        page = client.get(url)
        assert page.status_code == 200 and len(page.content) < 1024 * 1024
        seen += [check["id"] for check in page.json()["results"]]
        url = page.json()["next"]
    assert len(seen) == len(set(seen)) == 31
    assert [c["id"] for c in detail["checks"]] == seen[:8]


def test_runs_are_paged_and_the_detail_shows_the_first_page(api, reader, writer, project, notes):
    bound = api(writer).post(
        BINDINGS, {"process": "run-7", "repository": section_for(project)}, format="json"
    )
    assert bound.status_code == 201, bound.content
    client = render_client(reader)
    created = client.post(
        BASE, report(project, kind="bind", binding=bound.json()["id"]), format="json"
    ).json()
    repository = Repository.objects.get()
    _checks(repository, 55, {"AGENTS.md": "in-sync"}, binding=BindingRecord.objects.get())
    detail = client.get(created["url"]).json()
    assert len(detail["runs"]) == 50 and detail["runs"][0]["process"] == "run-7"
    assert detail["runs_next"].endswith("/runs/?page=2")
    second = client.get(detail["runs_next"]).json()
    assert second["count"] == 56 and len(second["results"]) == 6 and second["next"] is None
    assert second["results"][0]["tool"] == "codex"


def test_a_repository_with_few_checks_has_no_next_pages(reader, project, notes):
    client = render_client(reader)
    created = client.post(BASE, report(project), format="json").json()
    detail = client.get(created["url"]).json()
    assert detail["checks_next"] is None and detail["runs_next"] is None
    assert len(detail["checks"]) == 1 and detail["runs"] == []


def test_the_paged_lists_are_404_to_an_outsider_and_for_another_projects_repository(
    reader, outsider, other_tenant, project, notes
):
    created = render_client(reader).post(BASE, report(project), format="json").json()
    for tail in ("checks/", "runs/"):
        url = f"{created['url']}/{tail}"
        assert render_client(reader).get(url).status_code == 200
        assert render_client(outsider).get(url).status_code == 404
        other = f"/api/v1/tenants/globex/projects/_vance/repositories/{created['id']}/{tail}"
        assert render_client(outsider).get(other).status_code == 404
        assert render_client(reader).get(f"{BASE}999999/{tail}").status_code == 404


def _count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_the_paged_lists_queries_do_not_grow_with_the_checks(reader, project, notes):
    client = render_client(reader)
    created = client.post(BASE, report(project), format="json").json()
    repository = Repository.objects.get()
    urls = [created["url"], f"{created['url']}/checks/", f"{created['url']}/runs/"]
    client.get(created["url"])  # warm the render cache, as a running server has it
    before = [_count_queries(client, url) for url in urls]
    _checks(repository, 20, {"AGENTS.md": "in-sync"})
    assert [_count_queries(client, url) for url in urls] == before

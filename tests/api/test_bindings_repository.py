"""A binding record's `repository` section over the API: strict validation (400 naming
the field, nothing stored), the state checked against the server's export, tenant
isolation, query counts constant in the number of files, and the record's page."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agentdocs.models import BindingRecord
from agentdocs.selectors.export import export_build
from tests.services.test_signing import KEYS, run_cli

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web/bindings/"
BLOB = "a" * 40
COMMIT = "b" * 40


@pytest.fixture
def notes(project, make_document):
    return make_document(project, "agent.md", "# Web rules\n\n- Use tabs.\n")


def section_for(project, format: str = "agents-md", tool: str = "codex") -> dict:
    """The section a clean checkout of the server's export sends: every file in sync."""
    export = export_build(project=project, format=format)
    return {
        "tool": tool,
        "remote": "https://example.com/acme/web.git",
        "commit": COMMIT,
        "branch": "main",
        "dirty": False,
        "files": [
            {
                "path": file.path,
                "sha256": file.sha256,
                "bytes": file.size,
                "cut_at": None,
                "custody": "git",
                "git": {
                    "remote": "https://example.com/acme/web.git",
                    "commit": COMMIT,
                    "blob": BLOB,
                    "dirty": False,
                },
                "state": "in-sync",
            }
            for file in export.files
        ],
    }


def post(client, repository, process="run-1"):
    return client.post(BASE, {"process": process, "repository": repository}, format="json")


def test_a_repository_run_is_stored_with_the_export_it_can_be_rebuilt_from(
    api, writer, project, notes
):
    response = post(api(writer), section_for(project))
    assert response.status_code == 201, response.content
    record = response.json()
    assert record["manifest"]["source"] == "none"  # no context.json: an empty manifest
    [file] = record["repository"]["files"]
    assert file["path"] == "AGENTS.md"
    assert [s["path"] for s in file["sources"]] == ["agent.md"]
    assert record["repository"]["export"]["sha256"]
    reconstruction = api(writer).get(f"{BASE}{record['id']}/reconstruct").json()
    assert reconstruction["complete"] is True
    assert reconstruction["repository"][0]["verified"] is True


def test_a_repository_record_verifies_offline_and_a_changed_file_hash_fails(
    api, writer, project, notes, tmp_path
):
    record = post(api(writer), section_for(project)).json()
    answer = tmp_path / "record.json"
    answer.write_bytes(api(writer).get(f"{BASE}{record['id']}").content)
    keys = tmp_path / "keys.json"
    keys.write_bytes(api().get(KEYS).content)
    ok = run_cli("verify-record", str(answer), "--keys", str(keys), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    edited = json.loads(answer.read_text())
    edited["repository"]["files"][0]["sha256"] = "0" * 64
    answer.write_text(json.dumps(edited))
    bad = run_cli("verify-record", str(answer), "--keys", str(keys), cwd=tmp_path)
    assert bad.returncode == 1


def test_credentials_in_a_remote_are_stripped_by_the_server_too(api, writer, project, notes):
    section = section_for(project)
    section["remote"] = "https://x-access-token:ghp_abc@github.com/acme/web.git?token=1"
    section["files"][0]["git"]["remote"] = "https://user:pw@github.com:8443/acme/web.git"
    record = post(api(writer), section).json()
    assert record["repository"]["remote"] == "https://github.com/acme/web.git"
    assert (
        record["repository"]["files"][0]["git"]["remote"] == "https://github.com:8443/acme/web.git"
    )
    assert "ghp_abc" not in str(BindingRecord.objects.get().record)


def _broken(project, change):
    section = section_for(project)
    change(section)
    return section


CASES = [
    (lambda s: s.update(tool="notepad"), "repository.tool"),
    (lambda s: s.pop("dirty"), "repository"),
    (lambda s: s.update(extra=1), "repository"),
    (lambda s: s.update(commit="HEAD"), "repository.commit"),
    (lambda s: s.update(dirty="no"), "repository.dirty"),
    (lambda s: s.update(files="AGENTS.md"), "repository.files"),
    (lambda s: s["files"][0].update(path="../AGENTS.md"), "repository.files[0].path"),
    (lambda s: s["files"][0].update(path="CLAUDE.md"), "repository.files[0].path"),
    (lambda s: s["files"][0].update(sha256="xyz"), "repository.files[0].sha256"),
    (lambda s: s["files"][0].update(bytes=-1), "repository.files[0].bytes"),
    (lambda s: s["files"][0].update(cut_at=10**6), "repository.files[0].cut_at"),
    (lambda s: s["files"][0].update(state="fine"), "repository.files[0].state"),
    (lambda s: s["files"][0].update(custody="svn"), "repository.files[0].custody"),
    (lambda s: s["files"][0]["git"].update(blob="main"), "repository.files[0].git.blob"),
    (lambda s: s["files"][0].update(globs="*"), "repository.files[0].globs"),
    (lambda s: s["files"].append(copy.deepcopy(s["files"][0])), "repository.files[1].path"),
    # Claimed in sync, but not the server's export.
    (lambda s: s["files"][0].update(sha256="0" * 64), "repository.files[0].state"),
    # Claimed edited, but it is the server's export.
    (lambda s: s["files"][0].update(state="edited-locally"), "repository.files[0].state"),
]


@pytest.mark.parametrize(("change", "field"), CASES)
def test_a_bad_section_is_a_400_naming_the_field_and_stores_nothing(
    api, writer, project, notes, change, field
):
    response = post(api(writer), _broken(project, change))
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert BindingRecord.objects.count() == 0


def test_a_section_over_the_record_cap_is_413(api, writer, project, notes, settings):
    settings.AGENTDOCS_BINDING_MAX_RECORD_BYTES = 500
    response = post(api(writer), section_for(project))
    assert response.status_code == 413, response.content
    assert response.json()["field"] == "repository"
    assert BindingRecord.objects.count() == 0


def test_another_tenants_user_gets_404_and_nothing_is_stored(
    api, writer, outsider, other_tenant, project, notes
):
    section = section_for(project)
    assert post(api(outsider), section).status_code == 404
    record = post(api(writer), section).json()
    for path in ("", "/outdated", "/reconstruct", f"/compare/{record['id']}"):
        assert api(outsider).get(f"{BASE}{record['id']}{path}").status_code == 404, path
    assert BindingRecord.objects.count() == 1


def test_binding_queries_are_constant_in_the_number_of_files(
    api, writer, project, make_document, settings
):
    settings.AGENTDOCS_RENDER_CACHE = False  # the database path, as on a cold cache
    make_document(project, "agent.md", "# Web rules\n")
    client = api(writer)
    # Once first: what any first request of a process pays (the signing key, ...).
    assert post(client, section_for(project), process="warm-up").status_code == 201
    counts = []
    for round_, extra in enumerate((1, 20)):
        for n in range(extra - (1 if round_ else 0)):
            make_document(project, f".AGENTS/rule-{round_}-{n}.md", f"Rule {n}.\n")
        section = section_for(project, format="cursor", tool="cursor")
        with CaptureQueriesContext(connection) as queries:
            response = post(client, section, process=f"run-{round_}")
        assert response.status_code == 201, response.content
        counts.append((len(section["files"]), len(queries)))
    assert counts[0][0] < counts[1][0]
    assert counts[0][1] == counts[1][1], counts
    print(f"binding queries for {counts[0][0]} and {counts[1][0]} files: {counts}")


def test_the_record_page_shows_the_repository_section(client, writer, project, notes, api):
    section = section_for(project)
    section["files"][0]["state"] = "edited-locally"
    section["files"][0]["sha256"] = hashlib.sha256(b"edited").hexdigest()
    record = post(api(writer), section).json()
    assert record["problem_count"] == 1
    client.force_login(writer)
    page = client.get(f"/t/acme/web/bindings/{record['id']}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Repository" in html and "edited-locally" in html and BLOB[:12] in html

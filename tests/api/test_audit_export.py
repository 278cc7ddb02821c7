"""The chain's export bounded in time (issue 34, finding 8): a long chain is written to a
file by a task, and the request answers 202 at once with a progress link whose status
resource, once done, names the file's download path, size, sha256 and head; the
download serves that file. A short chain is still streamed at once."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.utils import timezone

from agentdocs.core.audit_chain import chain_link
from agentdocs.models import AuditExportRun, Document
from agentdocs.services import audit_export
from agentdocs.services import documents as document_service
from agentdocs.tasks import export_audit_chain

EXPORT = "/api/v1/tenants/acme/audit/export"
STATUS = "/api/v1/tenants/acme/audit/exports/{}"
DOWNLOAD = "/api/v1/tenants/acme/audit/exports/{}/download"


@pytest.fixture
def long_chain(settings):
    """Every chain is a long one."""
    settings.AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS = 0


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _streamed(client) -> bytes:
    response = client.get(EXPORT, HTTP_ACCEPT="application/jsonl")
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def test_a_short_chain_is_streamed_at_once(api, admin, tenant, rules, settings):
    settings.AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS = 10_000
    lines = _streamed(api(admin)).splitlines()
    assert json.loads(lines[-1])["head"]["seq"] == len(lines) - 1
    assert not AuditExportRun.objects.exists()


def test_a_long_chain_is_written_by_a_task_and_downloaded_from_its_file(
    api,
    admin,
    tenant,
    rules,
    media,
    settings,
    celery_eager,
    django_capture_on_commit_callbacks,
):
    client = api(admin)
    settings.AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS = 10_000
    streamed = _streamed(client)
    settings.AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS = 0

    with django_capture_on_commit_callbacks(execute=True):
        response = client.get(EXPORT, HTTP_ACCEPT="application/jsonl")
    assert response.status_code == 202
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    run = AuditExportRun.objects.get()
    assert body["id"] == run.pk
    assert body["progress"] == STATUS.format(run.pk) == response["Location"]
    rows = len(streamed.splitlines()) - 1
    assert body["total"] == rows

    done = client.get(body["progress"]).json()
    assert done["state"] == "done"
    assert done["written"] == rows
    assert done["download"] == DOWNLOAD.format(run.pk)
    assert done["bytes"] == len(streamed)
    assert done["sha256"] == hashlib.sha256(streamed).hexdigest()
    head = json.loads(streamed.splitlines()[-1])["head"]
    assert done["head"] == head
    assert done["finished_at"] is not None
    assert done["expires_at"] > done["created_at"]

    download = client.get(done["download"], HTTP_ACCEPT="application/jsonl")
    assert download.status_code == 200
    assert download["Content-Type"].startswith("application/jsonl")
    assert download["X-Content-SHA256"] == done["sha256"]
    assert 'filename="acme-history.jsonl"' in download["Content-Disposition"]
    content = b"".join(download.streaming_content)
    assert content == streamed
    # Anyone can recompute the chain from the file alone.
    previous = ""
    for line in content.splitlines()[:-1]:
        entry = json.loads(line)
        previous = chain_link(previous, model=entry["model"], row=entry["row"])
        assert entry["chain_sha256"] == previous
    assert head["chain_sha256"] == previous
    # The file lies in the media storage, not in the working tree.
    assert (media / run.file).exists()


def test_post_starts_an_export_asking_again_answers_it_and_its_file_waits_for_the_task(
    api, admin, tenant, rules, media
):
    """With a broker, the task runs in a worker after the commit: here it never runs."""
    client = api(admin)
    first = client.post(EXPORT)
    second = client.post(EXPORT, HTTP_ACCEPT="application/jsonl")
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] == second.json()["id"]
    assert (first.json()["state"], first.json()["download"]) == ("queued", None)
    assert AuditExportRun.objects.count() == 1

    not_ready = client.get(DOWNLOAD.format(first.json()["id"]))
    assert not_ready.status_code == 409
    assert not_ready.json()["error"] == "export_not_ready"
    assert not_ready.json()["field"] == "id"

    # The worker takes it.
    assert export_audit_chain(first.json()["id"]) == first.json()["total"]
    assert client.get(DOWNLOAD.format(first.json()["id"])).status_code == 200
    # Once done, asking again starts a new one.
    assert client.post(EXPORT).json()["id"] != first.json()["id"]


def test_an_export_the_storage_refuses_fails_and_says_why(
    api, admin, tenant, rules, settings, tmp_path, celery_eager, django_capture_on_commit_callbacks
):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the media folder should be")
    settings.MEDIA_ROOT = blocked
    client = api(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(EXPORT)
    status = client.get(response["Location"]).json()
    assert status["state"] == "failed"
    assert status["error"]
    assert status["download"] is None
    assert client.get(DOWNLOAD.format(status["id"])).json()["error"] == "export_not_ready"


def test_the_request_costs_the_same_queries_however_long_the_chain(
    api, admin, tenant, rules, long_chain, media, django_assert_max_num_queries
):
    client = api(admin)
    client.get(EXPORT)  # the session's first request pays for its own set-up
    AuditExportRun.objects.all().delete()
    with django_assert_max_num_queries(12) as short:
        assert client.get(EXPORT).status_code == 202
    AuditExportRun.objects.all().delete()
    document = Document.objects.get(pk=rules.pk)
    for version in range(document.version, document.version + 30):
        document = document_service.document_write(
            document=document, body=f"v{version + 1}", base_version=version, user=admin, reason=""
        ).document
    with django_assert_max_num_queries(len(short.captured_queries)):
        assert client.get(EXPORT).status_code == 202


def test_an_expired_export_is_gone_and_its_file_deleted_by_the_next_one(
    api, admin, tenant, rules, media, settings
):
    client = api(admin)
    old = client.post(EXPORT).json()["id"]
    export_audit_chain(old)
    name = AuditExportRun.objects.get(pk=old).file
    assert default_storage.exists(name)
    AuditExportRun.objects.filter(pk=old).update(
        created_at=timezone.now()
        - timedelta(days=settings.AGENTDOCS_AUDIT_EXPORT_KEEP_DAYS, hours=1)
    )
    for url in (STATUS.format(old), DOWNLOAD.format(old)):
        response = client.get(url)
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"
    client.post(EXPORT)
    assert not AuditExportRun.objects.filter(pk=old).exists()
    assert not default_storage.exists(name)


def test_the_task_tells_its_progress_as_it_writes(tenant, admin, rules, media, monkeypatch):
    monkeypatch.setattr(audit_export, "PROGRESS_EVERY", 2)
    run = audit_export.audit_export_start(tenant=tenant, user=admin)  # queued: no worker
    seen: list[int] = []
    lines = audit_export.audit_chain_lines

    def watched(*, tenant):
        for line in lines(tenant=tenant):
            yield line
            seen.append(AuditExportRun.objects.values_list("written", flat=True).get(pk=run.pk))

    monkeypatch.setattr(audit_export, "audit_chain_lines", watched)
    export_audit_chain(run.pk)
    run.refresh_from_db()
    assert run.state == "done"
    assert run.written == run.total == run.head_seq
    assert run.started_at is not None
    # Seen once each line is written: the count moves every 2 lines while writing.
    assert seen[:4] == [0, 2, 2, 4]


def test_exports_are_for_admins_other_members_403_outsiders_404(
    api, admin, writer, reader, outsider, tenant, other_tenant, rules, media
):
    made = api(admin).post(EXPORT).json()["id"]
    export_audit_chain(made)
    for user in (writer, reader):
        assert api(user).post(EXPORT).status_code == 403
        assert api(user).get(STATUS.format(made)).status_code == 403
        assert api(user).get(DOWNLOAD.format(made)).status_code == 403
    for url in (EXPORT, STATUS.format(made), DOWNLOAD.format(made)):
        response = api(outsider).get(url)
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"
    assert api(outsider).post(EXPORT).status_code == 404
    # Another tenant's export is missing from this tenant, and a bad id too.
    theirs = api(outsider).post("/api/v1/tenants/globex/audit/export").json()["id"]
    for missing in (theirs, "x", "0", "99999999999999999999999"):
        for url in (STATUS, DOWNLOAD):
            response = api(admin).get(url.format(missing))
            assert response.status_code == 404
            assert response.json()["error"] == "not_found"
    assert AuditExportRun.objects.filter(tenant=tenant).count() == 1

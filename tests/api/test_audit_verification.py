"""The chain's verification bounded in time (issue 34, finding 8): a long chain is walked
by a task, and the request answers 202 at once with a progress link whose status
resource answers the report once done; a short chain is still answered at once."""

from __future__ import annotations

import pytest
from django.db import connection

from agentdocs.models import AuditVerification, Document
from agentdocs.services import audit_chain
from agentdocs.services import documents as document_service

VERIFY = "/api/v1/tenants/acme/audit/verify"
STATUS = "/api/v1/tenants/acme/audit/verifications/{}"


@pytest.fixture
def long_chain(settings):
    """Every chain is a long one."""
    settings.AGENTDOCS_AUDIT_VERIFY_SYNC_ROWS = 0


def test_a_short_chain_is_answered_at_once_with_the_report(api, admin, tenant, rules, settings):
    settings.AGENTDOCS_AUDIT_VERIFY_SYNC_ROWS = 10_000
    response = api(admin).get(VERIFY)
    assert response.status_code == 200
    assert response.json() == audit_chain.audit_chain_report(tenant=tenant)
    assert response.json()["ok"] is True
    assert not AuditVerification.objects.exists()


def test_a_long_chain_is_handed_to_a_task_and_the_status_link_answers_the_report(
    api, admin, tenant, rules, long_chain, celery_eager, django_capture_on_commit_callbacks
):
    client = api(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.get(VERIFY)
    assert response.status_code == 202
    body = response.json()
    verification = AuditVerification.objects.get()
    assert body["id"] == verification.pk
    assert body["progress"] == STATUS.format(verification.pk) == response["Location"]
    assert body["total"] == audit_chain.audit_chain_report(tenant=tenant)["checked"]

    status = client.get(body["progress"])
    assert status.status_code == 200
    done = status.json()
    assert done["state"] == "done"
    assert done["report"] == {"ok": True, "checked": body["total"], "broken_at": None}
    assert done["checked"] == body["total"]
    assert done["finished_at"] is not None


def test_post_starts_a_verification_whose_report_names_the_break(
    api, admin, tenant, rules, celery_eager, django_capture_on_commit_callbacks
):
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Document._meta.db_table} SET body = %s WHERE id = %s", ["evil", rules.pk]
        )
    client = api(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(VERIFY)
    assert response.status_code == 202
    report = client.get(response["Location"]).json()["report"]
    assert report["ok"] is False
    broken = report["broken_at"]
    assert (broken["reason"], broken["model"], broken["id"]) == (
        "live_mismatch",
        "agentdocs.document",
        rules.pk,
    )


def test_asking_again_while_one_is_on_its_way_answers_that_one(api, admin, tenant, rules):
    """With a broker, the task runs in a worker after the commit: here it never runs."""
    client = api(admin)
    first = client.post(VERIFY)
    second = client.post(VERIFY)
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] == second.json()["id"]
    assert first.json()["state"] == "queued"
    assert AuditVerification.objects.count() == 1
    status = client.get(first["Location"]).json()
    assert (status["state"], status["report"]) == ("queued", None)


def test_the_request_costs_the_same_queries_however_long_the_chain(
    api, admin, tenant, project, rules, long_chain, django_assert_max_num_queries
):
    client = api(admin)
    client.get(VERIFY)  # the session's first request pays for its own set-up
    AuditVerification.objects.all().delete()
    with django_assert_max_num_queries(12) as short:
        assert client.get(VERIFY).status_code == 202
    AuditVerification.objects.all().delete()
    document = Document.objects.get(pk=rules.pk)
    for version in range(document.version, document.version + 30):
        document = document_service.document_write(
            document=document, body=f"v{version + 1}", base_version=version, user=admin, reason=""
        ).document
    with django_assert_max_num_queries(len(short.captured_queries)):
        assert client.get(VERIFY).status_code == 202


def test_the_task_tells_its_progress_as_it_walks(tenant, admin, rules, monkeypatch):
    monkeypatch.setattr(audit_chain, "PROGRESS_EVERY", 2)
    seen: list[int] = []
    original = audit_chain.audit_chain_verify

    def watching(*, tenant, progress=None):
        def tell(walked: int) -> None:
            assert progress is not None
            progress(walked)
            seen.append(AuditVerification.objects.get().checked)

        return original(tenant=tenant, progress=tell)

    monkeypatch.setattr(audit_chain, "audit_chain_verify", watching)
    verification = AuditVerification.objects.create(tenant=tenant, requested_by=admin, total=9)
    from agentdocs.tasks import verify_audit_chain

    assert verify_audit_chain(verification.pk) is True
    assert seen[:2] == [2, 4]
    verification.refresh_from_db()
    assert verification.state == "done"
    assert verification.started_at is not None


def test_verifications_are_for_admins_other_members_403_outsiders_404(
    api, admin, writer, reader, outsider, tenant, other_tenant, rules
):
    made = api(admin).post(VERIFY).json()["id"]
    for user in (writer, reader):
        assert api(user).post(VERIFY).status_code == 403
        assert api(user).get(STATUS.format(made)).status_code == 403
    for url in (VERIFY, STATUS.format(made)):
        response = api(outsider).get(url)
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"
    assert api(outsider).post(VERIFY).status_code == 404
    # Another tenant's verification is missing from this tenant, and a bad id too.
    theirs = api(outsider).post("/api/v1/tenants/globex/audit/verify").json()["id"]
    for missing in (theirs, "x", "0", "99999999999999999999999"):
        response = api(admin).get(STATUS.format(missing))
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"
    assert AuditVerification.objects.filter(tenant=tenant).count() == 1

"""Skills through the API: a skill's whole life, the `_vance` cascade, the checks on
every file, optimistic concurrency, permissions, tenant isolation and query counts."""

from __future__ import annotations

import pytest
from django.db import connection

from agentdocs.models import Skill
from agentdocs.services import audit_chain
from agentdocs.services import skills as skill_service
from agentdocs.services import tenancy as tenant_service
from tests.skill_bundles import skill_md, skill_url, skills_url

VERIFY = "/api/v1/tenants/acme/audit/verify"


@pytest.fixture
def created(api, writer, project, bundle):
    response = api(writer).post(
        skills_url(), {"name": "handoff", "files": bundle(), "reason": "first"}, format="json"
    )
    assert response.status_code == 201, response.json()
    return response


def test_a_skills_whole_life_create_read_write_versions_diff_revert_delete(
    api, writer, created, bundle
):
    client = api(writer)
    body = created.json()
    assert (body["name"], body["version"], body["project"]) == ("handoff", 1, "web")
    assert [f["path"] for f in body["files"]] == ["SKILL.md", "scripts/run.sh"]
    assert body["description"] == "Hand work over to the next session."
    assert body["warnings"] == []
    etag = created["ETag"]
    assert client.get(skill_url("handoff"), HTTP_IF_NONE_MATCH=etag).status_code == 304

    # PUT replaces the whole set: the script goes, a reference comes.
    files = {"SKILL.md": skill_md("handoff"), "references/checklist.md": "- [ ] notes\n"}
    written = client.put(
        skill_url("handoff"),
        {"files": files, "reason": "checklist"},
        format="json",
        HTTP_IF_MATCH=etag,
    )
    assert written.status_code == 200, written.json()
    assert written.json()["version"] == 2
    assert [f["path"] for f in written.json()["files"]] == ["SKILL.md", "references/checklist.md"]

    # The same bundle again writes no version.
    again = client.put(skill_url("handoff"), {"files": files, "version": 2}, format="json")
    assert again.json()["version"] == 2

    versions = client.get(skill_url("handoff", rest="/versions/")).json()
    assert versions["count"] == 2
    newest = versions["results"][0]
    assert (newest["version"], newest["user"], newest["reason"], newest["change_type"]) == (
        2,
        "bob",
        "checklist",
        "written",
    )
    one = client.get(skill_url("handoff", rest="/versions/1")).json()
    assert [f["path"] for f in one["files"]] == ["SKILL.md", "scripts/run.sh"]

    diff = client.get(skill_url("handoff", rest="/diff?from=1&to=2")).json()
    assert [(f["path"], f["status"]) for f in diff["files"]] == [
        ("references/checklist.md", "added"),
        ("scripts/run.sh", "removed"),
    ]
    assert "+- [ ] notes" in diff["files"][0]["diff"]

    reverted = client.post(
        skill_url("handoff", rest="/revert"), {"version": 1, "reason": "back"}, format="json"
    )
    assert reverted.status_code == 200, reverted.json()
    assert reverted.json()["version"] == 3
    assert [f["path"] for f in reverted.json()["files"]] == ["SKILL.md", "scripts/run.sh"]
    assert reverted.json()["sha256"] == created.json()["sha256"]

    deleted = client.delete(skill_url("handoff"), {"version": 3, "reason": "gone"}, format="json")
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
    assert client.get(skill_url("handoff")).status_code == 404
    assert client.get(skills_url()).json()["count"] == 0
    # History of a deleted skill stays; a revert brings it back as version 5.
    back = client.post(skill_url("handoff", rest="/revert"), {"version": 3}, format="json")
    assert (back.status_code, back.json()["version"]) == (200, 5)
    kinds = [row.change_type for row in Skill.objects.get().history.order_by("version")]
    assert kinds == ["created", "written", "reverted", "deleted", "restored"]


def test_a_stale_or_missing_base_version_writes_nothing(api, writer, created, bundle):
    client = api(writer)
    files = bundle(**{"references/a.md": "a\n"})
    assert client.put(skill_url("handoff"), {"files": files}, format="json").status_code == 428
    client.put(skill_url("handoff"), {"files": files, "version": 1}, format="json")
    stale = client.put(
        skill_url("handoff"),
        {"files": bundle(), "reason": "late"},
        format="json",
        HTTP_IF_MATCH=created["ETag"],
    )
    assert stale.status_code == 412
    assert stale.json()["error"] == "version_conflict"
    assert stale.json()["current_version"] == 2
    assert Skill.objects.get().version == 2


def test_creating_an_existing_skill_is_409(api, writer, created, bundle):
    again = api(writer).post(skills_url(), {"name": "handoff", "files": bundle()}, format="json")
    assert again.status_code == 409
    assert again.json()["field"] == "name"


@pytest.mark.parametrize(
    ("files", "status", "error", "field"),
    [
        ({"assets/logo.png": "\x89PNG"}, 422, "binary_file", "files/assets/logo.png"),
        ({"scripts/run.sh": "a\x07b"}, 422, "binary_file", "files/scripts/run.sh"),
        # A NUL is refused by the API's parser, as in every request body (no value holds one).
        ({"scripts/run.sh": "a\x00b"}, 400, "invalid", "files.scripts/run.sh"),
        (
            {"scripts/run.sh": "export AWS_ACCESS_KEY_ID=AKIAZ7Q2M4R8T6V3X5N9\n"},
            422,
            "secret_detected",
            "files/scripts/run.sh",
        ),
        ({"references/a.md": "see\u202ehere\n"}, 422, "hidden_characters", "files/references/a.md"),
        ({"SKILL.md": skill_md("other")}, 422, "invalid_skill", "files/SKILL.md#name"),
        (
            {"SKILL.md": "---\nname: handoff\n---\n"},
            422,
            "invalid_skill",
            "files/SKILL.md#description",
        ),
        ({"notes.txt": "x"}, 422, "invalid_skill", "files/notes.txt"),
        ({"references/аpi.md": "x"}, 400, "confusable_path", "files/references/аpi.md"),
        ({"references/big.md": "x" * 300_000}, 413, "too_large", "files/references/big.md"),
    ],
)
def test_a_refused_file_is_named_and_nothing_is_written(
    api, writer, project, bundle, files, status, error, field
):
    response = api(writer).post(
        skills_url(), {"name": "handoff", "files": bundle(**files)}, format="json"
    )
    assert response.status_code == status, response.json()
    body = response.json()
    assert (body["error"], body["field"]) == (error, field)
    assert set(body) >= {"error", "detail", "field"}
    assert not Skill.objects.exists()


def test_a_write_with_a_refused_file_keeps_the_current_version(api, writer, created, bundle):
    response = api(writer).put(
        skill_url("handoff"),
        {"files": bundle(**{"assets/x.gif": "GIF89a"}), "version": 1},
        format="json",
    )
    assert response.status_code == 422
    assert Skill.objects.get().version == 1


def test_the_size_caps_are_settings(api, writer, project, bundle, settings):
    settings.AGENTDOCS_SKILL_MAX_BYTES = 200
    response = api(writer).post(
        skills_url(),
        {"name": "handoff", "files": bundle(**{"references/a.md": "x" * 150})},
        format="json",
    )
    assert response.status_code == 413
    assert (response.json()["field"], response.json()["limit"]) == ("files", 200)


def test_a_long_body_is_a_warning_in_the_response_not_a_refusal(api, writer, project):
    body = "".join(f"{i}. Do step {i}.\n" for i in range(700))
    response = api(writer).post(
        skills_url(),
        {"name": "long", "files": {"SKILL.md": skill_md("long", body=body)}},
        format="json",
    )
    assert response.status_code == 201
    assert "700 lines" in response.json()["warnings"][0]


def test_unknown_fields_and_wrong_shapes_are_400_naming_the_field(api, writer, project):
    client = api(writer)
    response = client.post(skills_url(), {"name": "x", "files": {}, "labels": []}, format="json")
    assert (response.status_code, response.json()["field"]) == (400, "labels")
    response = client.post(skills_url(), {"name": "x", "files": ["SKILL.md"]}, format="json")
    assert (response.status_code, response.json()["field"]) == (400, "files")
    response = client.post(skills_url(), {"name": "Bad_Name", "files": {}}, format="json")
    assert (response.status_code, response.json()["field"]) == (422, "name")


def test_vance_skills_are_offered_to_every_project_and_a_project_skill_replaces_one(
    api, admin, writer, project, vance, bundle
):
    tenant_service.project_create(tenant=project.tenant, slug="api", name="API", user=admin)
    admin_client = api(admin)
    for name in ("handoff", "review"):
        files = {"SKILL.md": skill_md(name, description=f"tenant {name}")}
        made = admin_client.post(
            skills_url("_vance"), {"name": name, "files": files}, format="json"
        )
        assert made.status_code == 201
    files = {"SKILL.md": skill_md("handoff", description="project handoff")}
    assert (
        api(writer)
        .post(skills_url(), {"name": "handoff", "files": files}, format="json")
        .status_code
        == 201
    )

    listed = api(writer).get(skills_url()).json()["results"]
    assert [(s["name"], s["project"], s["description"]) for s in listed] == [
        ("handoff", "web", "project handoff"),
        ("review", "_vance", "tenant review"),
    ]
    other = api(writer).get(skills_url("api")).json()["results"]
    assert [(s["name"], s["project"]) for s in other] == [
        ("handoff", "_vance"),
        ("review", "_vance"),
    ]
    read = api(writer).get(skill_url("review")).json()
    assert (read["project"], read["description"]) == ("_vance", "tenant review")
    assert api(writer).get(skill_url("review", rest="/versions/")).json()["count"] == 1

    # An inherited skill is written where it lives: not through the project.
    put = api(writer).put(skill_url("review"), {"files": files, "version": 1}, format="json")
    assert (put.status_code, put.json()["field"]) == (404, "name")
    assert "_vance" in put.json()["detail"]

    # Deleting the project's skill lets the tenant's show again.
    api(writer).delete(skill_url("handoff"), {"version": 1}, format="json")
    assert api(writer).get(skill_url("handoff")).json()["project"] == "_vance"


def test_vance_skills_are_written_by_tenant_admins_only(api, writer, reader, vance):
    files = {"SKILL.md": skill_md("handoff")}
    response = api(writer).post(
        skills_url("_vance"), {"name": "handoff", "files": files}, format="json"
    )
    assert response.status_code == 403
    assert api(reader).get(skills_url("_vance")).status_code == 200
    assert not Skill.objects.exists()


def test_readers_read_and_may_not_write(api, reader, created, bundle):
    client = api(reader)
    assert client.get(skill_url("handoff")).status_code == 200
    assert client.get(skills_url()).status_code == 200
    assert (
        client.post(
            skills_url(), {"name": "other", "files": bundle("other")}, format="json"
        ).status_code
        == 403
    )
    assert (
        client.put(
            skill_url("handoff"), {"files": bundle(), "version": 1}, format="json"
        ).status_code
        == 403
    )
    assert client.delete(skill_url("handoff"), {"version": 1}, format="json").status_code == 403
    assert (
        client.post(skill_url("handoff", rest="/revert"), {"version": 1}, format="json").status_code
        == 403
    )
    assert Skill.objects.get().version == 1


def test_an_outsider_of_another_tenant_gets_404_on_every_endpoint(
    api, outsider, other_tenant, created, bundle
):
    client = api(outsider)
    answers = [
        client.get(skills_url()),
        client.post(skills_url(), {"name": "x", "files": bundle("x")}, format="json"),
        client.get(skill_url("handoff")),
        client.put(skill_url("handoff"), {"files": bundle(), "version": 1}, format="json"),
        client.delete(skill_url("handoff"), {"version": 1}, format="json"),
        client.get(skill_url("handoff", rest="/versions/")),
        client.get(skill_url("handoff", rest="/versions/1")),
        client.get(skill_url("handoff", rest="/diff?from=1")),
        client.post(skill_url("handoff", rest="/revert"), {"version": 1}, format="json"),
        client.get(skills_url("_vance")),
    ]
    assert [r.status_code for r in answers] == [404] * len(answers)
    assert Skill.objects.get().version == 1


def test_versions_and_diff_refuse_what_is_not_there(api, writer, created):
    client = api(writer)
    missing = client.get(skill_url("handoff", rest="/versions/9"))
    assert (missing.status_code, missing.json()["field"]) == (404, "version")
    assert client.get(skill_url("handoff", rest="/diff")).json()["field"] == "from"
    assert client.get(skill_url("handoff", rest="/diff?from=7")).status_code == 404
    assert client.get(skill_url("nothing")).status_code == 404


def test_skill_writes_are_chained_and_audit_verify_stays_ok(api, admin, writer, created, bundle):
    client = api(writer)
    client.put(
        skill_url("handoff"),
        {"files": bundle(**{"references/a.md": "a\n"}), "version": 1},
        format="json",
    )
    client.post(skill_url("handoff", rest="/revert"), {"version": 1}, format="json")
    skill = Skill.objects.get()
    rows = skill.history.all()
    assert rows.count() == 3
    assert all(row.chain_sha256 and row.chain_tenant == skill.project.tenant_id for row in rows)
    report = api(admin).get(VERIFY).json()
    assert report["ok"] is True, report
    models = {row.model for row in audit_chain.chain_rows(tenant=skill.project.tenant)[1]}
    assert "agentdocs.historicalskill" in models


def test_a_skill_file_changed_by_sql_is_a_live_mismatch(api, admin, created):
    skill = Skill.objects.get()
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Skill._meta.db_table} SET files = %s WHERE id = %s",
            ['{"SKILL.md": "---\\nname: handoff\\ndescription: obey\\n---\\n"}', skill.pk],
        )
    broken = api(admin).get(VERIFY).json()["broken_at"]
    assert (broken["reason"], broken["model"], broken["id"]) == (
        "live_mismatch",
        "agentdocs.skill",
        skill.pk,
    )
    assert broken["columns"] == ["files"]


@pytest.mark.parametrize("count", [1, 25])
def test_list_read_versions_and_diff_run_a_constant_number_of_queries(
    api, writer, project, count, django_assert_num_queries
):
    skill = None
    for i in range(count):
        name = f"skill-{i}"
        files = {
            "SKILL.md": skill_md(name),
            **{f"references/{n}.md": f"{n}\n" for n in range(count)},
        }
        skill = skill_service.skill_create(
            project=project, name=name, files=files, user=writer
        ).skill
    for n in range(count):
        files = dict(skill.files, **{"references/0.md": f"v{n}\n"})
        skill = skill_service.skill_write(
            skill=skill, files=files, base_version=n + 1, user=writer
        ).skill
    client = api(writer)
    # token and access (1) + count (1) + page (1)
    with django_assert_num_queries(3):
        assert client.get(skills_url()).status_code == 200
    # token and access (1) + the skill (1)
    with django_assert_num_queries(2):
        assert client.get(skill_url(skill.name)).status_code == 200
    # token and access + skill + count + page
    with django_assert_num_queries(4):
        assert client.get(skill_url(skill.name, rest="/versions/")).status_code == 200
    # token and access + skill + both versions
    with django_assert_num_queries(3):
        assert client.get(skill_url(skill.name, rest="/diff?from=1")).status_code == 200
    with django_assert_num_queries(3):
        assert client.get(skill_url(skill.name, rest="/versions/1")).status_code == 200


@pytest.mark.parametrize("count", [1, 40])
def test_a_write_runs_a_constant_number_of_queries_whatever_the_files(
    api, writer, project, count, django_assert_num_queries
):
    files = {"SKILL.md": skill_md("handoff"), **{f"references/{n}.md": "x\n" for n in range(count)}}
    skill_service.skill_create(project=project, name="handoff", files=files, user=writer)
    client = api(writer)
    client.get(skills_url())  # the token's first use is behind us
    changed = {**files, "references/0.md": "y\n"}
    # token and access, the skill, the review policy (`review.required`), its row
    # lock, the write, its history row, the chain head (moved in one statement; its
    # link stored by the history row's trigger), the event: 10, whatever the number
    # of files.
    with django_assert_num_queries(10):
        response = client.put(skill_url("handoff"), {"files": changed, "version": 1}, format="json")
    assert response.status_code == 200


def test_every_version_of_a_skill_is_in_the_activity_feed(api, writer, reader, outsider, created):
    api(writer).delete(skill_url("handoff"), {"version": 1, "reason": "gone"}, format="json")
    feed = api(reader).get("/api/v1/tenants/acme/activity/?kind=skill").json()["results"]
    assert [(e["type"], e["action"], e["target"], e["version"]) for e in feed] == [
        ("skill.changed", "deleted", "handoff", 2),
        ("skill.changed", "created", "handoff", 1),
    ]
    assert feed[0]["reason"] == "gone"
    assert api(outsider).get("/api/v1/tenants/acme/activity/").status_code == 404

"""Change requests of skills (issue 37): a proposed next version of a skill, all its
files, through the change-request API with a document's lifecycle (review, approve,
reject, merge; a stale base merged three-way file by file, conflicts per file), and
`review.required` on skills (`skills/<name>`), as on documents: a direct write answers
409 `review_required` naming `name` with `propose_url`, for everyone, unless a tenant
admin bypasses review with a reason; the files are proposed through `changes/`. A
label's move by a member who may not bypass review answers 202 with a change request."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agentdocs.models import ChangeRequest, Event, Role, Skill, SkillLabel
from agentdocs.services import policy as policy_service
from agentdocs.services import skill_labels as skill_label_service
from agentdocs.services import skills as skill_service
from agentdocs.services import tenancy as tenant_service
from tests.api.test_documents import assert_error
from tests.skill_bundles import skill_md, skill_url

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
# The script as version 2 of `handoff` has it.
V2 = {"scripts/run.sh": "#!/bin/sh\necho handoff v2\n"}


@pytest.fixture
def handoff(project, writer, bundle):
    """The skill `handoff` at version 2 (v2 changed its script), labelled canary at v1."""
    skill = skill_service.skill_create(
        project=project, name="handoff", files=bundle(), user=writer, reason="first"
    ).skill
    skill = skill_service.skill_write(
        skill=skill,
        files=bundle(**V2),
        base_version=1,
        user=writer,
        reason="second",
    ).skill
    skill_label_service.skill_label_move(skill=skill, name="canary", version=1, user=writer)
    return skill


@pytest.fixture
def erin(tenant, admin):
    """A second writer, to review what bob proposes."""
    get_user_model().objects.create_user(username="erin", password="erin-password")
    tenant_service.membership_set(tenant=tenant, username="erin", role=Role.WRITER, actor=admin)
    return get_user_model().objects.get(username="erin")


@pytest.fixture
def reviewed(tenant, admin):
    """Every skill is under `review.required`."""
    policy_service.setting_set(
        tenant=tenant, project=None, key="review.required", value='["skills/"]', user=admin
    )


def propose(api, user, files, *, base_version=2, name="handoff", base=BASE, **extra):
    payload = {"skill": name, "files": files, "base_version": base_version, "reason": "tidy"}
    return api(user).post(f"{base}/changes/", {**payload, **extra}, format="json")


def review(api, user, change_id, decision="approve", base=BASE):
    return api(user).post(
        f"{base}/changes/{change_id}/reviews", {"decision": decision}, format="json"
    )


def merge(api, user, change_id, base=BASE):
    return api(user).post(f"{base}/changes/{change_id}/merge", format="json")


def test_a_proposed_version_of_a_skill_is_reviewed_and_merged_as_its_next_version(
    api, handoff, bundle, reader, writer, admin
):
    files = bundle(**V2, **{"references/notes.md": "# Notes\n"})
    files["SKILL.md"] = skill_md("handoff", body="# Steps\n\n1. Write it down.\n2. Say so.\n")
    response = propose(api, reader, files)
    assert response.status_code == 201, response.content
    change = response.json()
    assert change["skill"] == "handoff" and change["path"] == "skills/handoff"
    assert change["base_version"] == 2 and change["state"] == "open"
    assert change["label"] is None and change["proposer"] == "carol"
    opened = Event.objects.get(type="change.opened")
    assert opened.data["skill"] == "handoff" and opened.target == str(change["id"])
    assert Skill.objects.get(pk=handoff.pk).version == 2  # nothing written yet

    detail = api(reader).get(f"{BASE}/changes/{change['id']}").json()
    assert detail["diff_against_base"] is None and detail["current_version"] == 2
    against_base = detail["files_against_base"]
    assert against_base["from_version"] == 2
    by_path = {file["path"]: file for file in against_base["files"]}
    assert set(by_path) == {"SKILL.md", "references/notes.md"}
    assert by_path["references/notes.md"]["status"] == "added"
    assert by_path["SKILL.md"]["status"] == "modified" and by_path["SKILL.md"]["added"] == 1
    assert "+2. Say so." in by_path["SKILL.md"]["diff"]
    assert detail["mergeable"] is True and detail["conflicts"] == []
    whole = api(reader).get(against_base["whole_diff_url"])
    assert whole.status_code == 200 and "+++ handoff (change #" in whole.content.decode()

    assert review(api, writer, change["id"]).status_code == 201
    merged = merge(api, admin, change["id"])
    assert merged.status_code == 200, merged.content
    body = merged.json()
    assert body["state"] == "merged" and body["merged_version"] == 3
    skill = Skill.objects.get(pk=handoff.pk)
    assert skill.version == 3 and skill.files == files
    record = skill.history.get(version=3)
    assert record.history_user.username == "carol"
    assert f"change #{change['id']}" in record.history_change_reason
    assert "approved by bob" in record.history_change_reason
    types = list(
        Event.objects.filter(kind="change").order_by("created_at").values_list("type", flat=True)
    )
    assert types == ["change.opened", "change.approved", "change.merged"]


def test_a_stale_proposal_is_merged_file_by_file_onto_the_current_version(
    api, handoff, bundle, reader, writer, admin
):
    # Based on v2, carol adds a reference; bob then changes the script (v3).
    files = bundle(**V2, **{"references/a.md": "A\n"})
    change = propose(api, reader, files).json()
    skill_service.skill_write(
        skill=handoff,
        files=bundle(**{"scripts/run.sh": "#!/bin/sh\necho handoff v3\n"}),
        base_version=2,
        user=writer,
        reason="v3",
    )
    detail = api(reader).get(f"{BASE}/changes/{change['id']}").json()
    assert detail["mergeable"] is True and detail["current_version"] == 3
    assert [f["path"] for f in detail["files_against_current"]["files"]] == [
        "references/a.md",
        "scripts/run.sh",
    ]
    review(api, writer, change["id"])
    assert merge(api, admin, change["id"]).status_code == 200
    skill = Skill.objects.get(pk=handoff.pk)
    assert skill.version == 4
    assert skill.files["scripts/run.sh"] == "#!/bin/sh\necho handoff v3\n"  # theirs kept
    assert skill.files["references/a.md"] == "A\n"  # yours added


def test_overlapping_edits_are_conflicts_named_by_file_and_nothing_is_merged(
    api, handoff, bundle, reader, writer, admin
):
    change = propose(api, reader, bundle(**{"scripts/run.sh": "#!/bin/sh\necho carol\n"})).json()
    skill_service.skill_write(
        skill=handoff,
        files=bundle(**{"scripts/run.sh": "#!/bin/sh\necho bob\n"}),
        base_version=2,
        user=writer,
        reason="v3",
    )
    detail = api(reader).get(f"{BASE}/changes/{change['id']}").json()
    assert detail["mergeable"] is False
    assert [conflict["path"] for conflict in detail["conflicts"]] == ["scripts/run.sh"]
    review(api, writer, change["id"])
    refused = merge(api, admin, change["id"])
    body = assert_error(refused, 409, "merge_conflict", "files/scripts/run.sh")
    assert body["conflicts"][0]["path"] == "scripts/run.sh"
    assert f"Change #{change['id']}" in body["detail"]
    assert Skill.objects.get(pk=handoff.pk).version == 3
    assert ChangeRequest.objects.get(pk=change["id"]).state == "approved"


def test_a_rejected_skill_change_is_closed_and_writes_nothing(api, handoff, bundle, reader, writer):
    change = propose(api, reader, bundle(**{"references/a.md": "A\n"})).json()
    assert review(api, writer, change["id"], "reject").status_code == 201
    assert ChangeRequest.objects.get(pk=change["id"]).state == "rejected"
    assert_error(merge(api, writer, change["id"]), 409, "change_closed")
    assert Skill.objects.get(pk=handoff.pk).version == 2


def test_bad_proposals_are_refused_naming_the_field_and_open_nothing(api, handoff, bundle, reader):
    assert_error(propose(api, reader, bundle(), path="agent.md"), 400, "invalid", "path")
    no_files = api(reader).post(
        f"{BASE}/changes/", {"skill": "handoff", "base_version": 2}, format="json"
    )
    assert_error(no_files, 400, "invalid", "files")
    binary = propose(api, reader, bundle(**{"assets/logo.png": "\x89PNG\r\n"}))
    assert binary.status_code == 422 and binary.json()["field"].startswith("files/assets/logo.png")
    assert_error(propose(api, reader, bundle(), base_version=9), 404, "not_found", "base_version")
    same = propose(api, reader, bundle(**V2))
    assert_error(same, 400, "invalid", "files")
    assert_error(propose(api, reader, bundle("ghost"), name="ghost"), 404, "not_found", "name")
    assert not ChangeRequest.objects.exists()


def test_an_outsider_gets_404_for_a_skill_change(
    api, handoff, bundle, reader, outsider, other_tenant
):
    assert propose(api, outsider, bundle()).status_code == 404
    change = propose(api, reader, bundle(**{"references/a.md": "A\n"})).json()
    assert api(outsider).get(f"{BASE}/changes/{change['id']}").status_code == 404
    assert review(api, outsider, change["id"]).status_code == 404


def assert_review_required(response):
    body = assert_error(response, 409, "review_required", "name")
    assert body["propose_url"] == f"{BASE}/changes/", body
    return body


def bypassed_events(name="handoff"):
    return [
        event.data["review_bypassed"]
        for event in Event.objects.filter(type="skill.changed", target=name).order_by("version")
    ]


def test_under_review_a_direct_write_answers_409_and_the_files_are_proposed(
    api, handoff, bundle, writer, admin, erin, reviewed
):
    files = bundle(**V2, **{"references/a.md": "A\n"})
    payload = {"files": files, "version": 2, "reason": "add a"}
    # Everyone, a tenant admin too, is refused a direct write: nothing is written.
    for user in (writer, admin):
        assert_review_required(api(user).put(skill_url("handoff"), payload, format="json"))
    assert Skill.objects.get(pk=handoff.pk).version == 2
    assert not ChangeRequest.objects.exists()
    # The member proposes the files through the changes API.
    proposed = propose(api, writer, files, reason="add a")
    assert proposed.status_code == 201, proposed.content
    change = proposed.json()
    assert change["skill"] == "handoff" and change["base_version"] == 2
    assert change["state"] == "open" and change["reason"] == "add a"
    # A tenant admin bypasses review with a reason: the write is a version, and its
    # event says review was bypassed.
    direct = api(admin).put(
        skill_url("handoff"),
        {
            "files": bundle(**V2, **{"references/b.md": "B\n"}),
            "version": 2,
            "reason": "hotfix",
            "bypass_review": True,
        },
        format="json",
    )
    assert direct.status_code == 200, direct.content
    assert direct.json()["version"] == 3
    assert bypassed_events()[-1] is True and bypassed_events()[0] is False
    # The proposal merges onto v3, file by file.
    review(api, erin, change["id"])
    assert merge(api, erin, change["id"]).status_code == 200
    skill = Skill.objects.get(pk=handoff.pk)
    assert {"references/a.md", "references/b.md"} <= set(skill.files)
    assert bypassed_events()[-1] is False
    # Deleting a protected skill is refused as well (a deletion is not proposed).
    for user in (writer, admin):
        assert_review_required(
            api(user).delete(skill_url("handoff"), {"version": 4}, format="json")
        )
    assert not Skill.objects.get(pk=handoff.pk).is_deleted


def test_under_review_bypassing_needs_a_tenant_admin_and_a_reason(
    api, handoff, bundle, writer, admin, outsider, reviewed
):
    files = bundle(**V2, **{"references/a.md": "A\n"})
    no_reason = api(admin).put(
        skill_url("handoff"),
        {"files": files, "version": 2, "bypass_review": True},
        format="json",
    )
    assert_error(no_reason, 400, "invalid", "reason")
    by_writer = api(writer).put(
        skill_url("handoff"),
        {"files": files, "version": 2, "reason": "now", "bypass_review": True},
        format="json",
    )
    assert_error(by_writer, 403, "forbidden", "bypass_review")
    not_boolean = api(admin).put(
        skill_url("handoff"),
        {"files": files, "version": 2, "reason": "now", "bypass_review": "yes"},
        format="json",
    )
    assert not_boolean.status_code == 400 and not_boolean.json()["field"] == "bypass_review"
    other_tenant = api(outsider).put(
        skill_url("handoff"),
        {"files": files, "version": 2, "reason": "now", "bypass_review": True},
        format="json",
    )
    assert other_tenant.status_code == 404, other_tenant.content
    assert Skill.objects.get(pk=handoff.pk).version == 2
    # Delete and revert take the same bypass.
    reverted = api(admin).post(
        skill_url("handoff", rest="/revert"),
        {"version": 1, "reason": "back", "bypass_review": True},
        format="json",
    )
    assert reverted.status_code == 200, reverted.content
    assert reverted.json()["version"] == 3
    deleted = api(admin).delete(
        skill_url("handoff"),
        {"version": 3, "reason": "gone", "bypass_review": True},
        format="json",
    )
    assert deleted.status_code == 200, deleted.content
    assert Skill.objects.get(pk=handoff.pk).is_deleted
    assert bypassed_events()[-2:] == [True, True]


def test_bypass_review_on_an_unprotected_skill_changes_nothing_and_is_not_recorded(
    api, handoff, bundle, admin
):
    response = api(admin).put(
        skill_url("handoff"),
        {"files": bundle(), "version": 2, "reason": "back", "bypass_review": True},
        format="json",
    )
    assert response.status_code == 200 and response.json()["version"] == 3
    assert bypassed_events()[-1] is False


def test_under_review_a_new_skill_is_refused_proposed_and_merging_creates_it(
    api, project, bundle, writer, admin, erin, reviewed
):
    for user in (writer, admin):
        assert_review_required(
            api(user).post(
                f"{BASE}/skills/", {"name": "deploy", "files": bundle("deploy")}, format="json"
            )
        )
    assert not Skill.objects.filter(name="deploy").exists()
    proposed = propose(api, writer, bundle("deploy"), name="deploy", base_version=0)
    assert proposed.status_code == 201, proposed.content
    change = proposed.json()
    assert change["base_version"] == 0 and change["skill"] == "deploy"
    detail = api(erin).get(f"{BASE}/changes/{change['id']}").json()
    assert detail["files_against_base"]["from_version"] is None
    assert detail["files_against_current"] is None and detail["mergeable"] is True
    review(api, erin, change["id"])
    merged = merge(api, erin, change["id"])
    assert merged.status_code == 200 and merged.json()["merged_version"] == 1
    skill = Skill.objects.get(name="deploy")
    assert skill.files == bundle("deploy") and skill.history.get().history_user == writer
    # A tenant admin creates one directly with a reason.
    created = api(admin).post(
        f"{BASE}/skills/",
        {"name": "ship", "files": bundle("ship"), "reason": "urgent", "bypass_review": True},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert bypassed_events("ship") == [True]


def test_under_review_a_skill_label_move_and_removal_are_change_requests(
    api, handoff, writer, erin, reviewed
):
    moved = api(writer).put(
        skill_url("handoff", rest="/labels/staging"), {"version": 1}, format="json"
    )
    assert moved.status_code == 202, moved.content
    assert moved.json()["label"] == "staging" and moved.json()["label_action"] == "move"
    removed = api(writer).delete(skill_url("handoff", rest="/labels/canary"), format="json")
    assert removed.status_code == 202, removed.content
    assert removed.json()["label_action"] == "remove" and removed.json()["base_version"] == 1
    assert set(SkillLabel.objects.values_list("name", flat=True)) == {"canary"}
    for change in (moved.json(), removed.json()):
        review(api, erin, change["id"])
        assert merge(api, erin, change["id"]).status_code == 200
    assert dict(SkillLabel.objects.values_list("name", "version")) == {"staging": 1}


def test_protected_labels_and_vance_skills_are_refused_to_a_writer(
    api, handoff, vance, bundle, writer, admin, reviewed
):
    production = api(writer).put(
        skill_url("handoff", rest="/labels/production"), {"version": 2}, format="json"
    )
    assert_error(production, 403, "forbidden", "label")
    skill_service.skill_create(project=vance, name="shared", files=bundle("shared"), user=admin)
    vance_move = api(writer).put(
        skill_url("shared", project="_vance", rest="/labels/canary"), {"version": 1}, format="json"
    )
    assert vance_move.status_code == 403
    by_admin = api(admin).put(
        skill_url("shared", project="_vance", rest="/labels/canary"), {"version": 1}, format="json"
    )
    assert by_admin.status_code == 201, by_admin.content


def test_an_approval_of_a_skill_change_counts_only_while_its_reviewer_may_review(
    api, tenant, handoff, bundle, reader, admin, erin
):
    change = propose(api, reader, bundle(**{"references/a.md": "A\n"})).json()
    review(api, erin, change["id"])
    tenant_service.membership_set(tenant=tenant, username="erin", role=Role.READER, actor=admin)
    detail = api(reader).get(f"{BASE}/changes/{change['id']}").json()
    assert detail["approvals"] == [] and detail["approvals_not_counting"] == ["erin"]
    assert_error(merge(api, admin, change["id"]), 409, "not_approved")
    assert Skill.objects.get(pk=handoff.pk).version == 2


def test_reading_a_skill_change_does_not_grow_with_its_files(
    api, handoff, bundle, reader, django_assert_max_num_queries
):
    few = propose(api, reader, bundle(**{"references/a.md": "A\n"})).json()
    many = propose(
        api, reader, bundle(**{f"references/{n}.md": f"{n}\n" for n in range(40)})
    ).json()
    client = api(reader)
    client.get(f"{BASE}/changes/{few['id']}")
    with django_assert_max_num_queries(16) as counted:
        assert client.get(f"{BASE}/changes/{few['id']}").status_code == 200
    with django_assert_max_num_queries(len(counted.captured_queries)):
        assert client.get(f"{BASE}/changes/{many['id']}").status_code == 200


def test_under_review_a_revert_answers_409_and_the_old_files_are_proposed(
    api, handoff, bundle, writer, admin, reviewed
):
    for user in (writer, admin):
        assert_review_required(
            api(user).post(
                skill_url("handoff", rest="/revert"),
                {"version": 1, "reason": "back"},
                format="json",
            )
        )
    assert Skill.objects.get(pk=handoff.pk).version == 2
    proposed = propose(api, writer, bundle(), reason="back")
    assert proposed.status_code == 201, proposed.content
    change = ChangeRequest.objects.get(pk=proposed.json()["id"])
    assert change.base_version == 2 and change.files == bundle()
    assert change.reason == "back" and Skill.objects.get(pk=handoff.pk).version == 2


def test_under_review_an_import_of_a_skill_answers_409_and_imports_nothing(
    api, project, bundle, writer, reviewed
):
    """As an imported protected document: the import's write is a direct write."""
    files = [
        {"path": f".claude/skills/deploy/{path}", "content": text}
        for path, text in bundle("deploy").items()
    ]
    response = api(writer).post(f"{BASE}/import/", {"files": files}, format="json")
    assert_review_required(response)
    assert not Skill.objects.filter(name="deploy").exists()
    plan = api(writer).post(f"{BASE}/import/", {"files": files, "dry_run": True}, format="json")
    assert plan.status_code == 200, plan.content

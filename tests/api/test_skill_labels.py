"""Labels of skills (issue 37), as documents have them: list, move, remove; who may;
history rows in the tenant's hash chain; events; reading a skill by label through the
API, the Memory Block's skills index and MCP, where a canary label reaches only the
recipe that asks for it; tenant isolation and query counts."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from agentdocs.models import BindingRecord, Event, SkillLabel
from agentdocs.services import audit_chain as audit_chain_service
from agentdocs.services import policy as policy_service
from agentdocs.services import skill_labels as skill_label_service
from agentdocs.services import skills as skill_service
from tests.api.test_documents import assert_error
from tests.conftest import api_token_key
from tests.skill_bundles import skill_md, skill_url

pytestmark = pytest.mark.django_db

T = "/api/v1/tenants/acme"
VERIFY = f"{T}/audit/verify"
MEMORY_BLOCK = f"{T}/projects/web/memory-block/"
ONE = "#!/bin/sh\necho one\n"
TWO = "#!/bin/sh\necho two\n"


def _files(name: str, description: str, script: str) -> dict[str, str]:
    return {"SKILL.md": skill_md(name, description), "scripts/run.sh": script}


@pytest.fixture
def handoff(project, writer):
    """The project's `handoff` at version 2: version 1 says "one", version 2 "two"."""
    skill = skill_service.skill_create(
        project=project, name="handoff", files=_files("handoff", "Version one.", ONE), user=writer
    ).skill
    return skill_service.skill_write(
        skill=skill,
        files=_files("handoff", "Version two.", TWO),
        base_version=1,
        user=writer,
        reason="two",
    ).skill


def move(api, user, label, version, *, name="handoff", project="web", reason="ship it"):
    return api(user).put(
        skill_url(name, project=project, rest=f"/labels/{label}"),
        {"version": version, "reason": reason},
        format="json",
    )


def test_a_writer_creates_moves_lists_and_removes_a_skill_label(api, handoff, writer):
    created = move(api, writer, "canary", 1)
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["label"], body["name"], body["skill"], body["version"]) == (
        "canary",
        "canary",
        "handoff",
        1,
    )
    assert body["moved_by"] == "bob" and body["reason"] == "ship it" and body["moved_at"]

    moved = move(api, writer, "canary", 2, reason="newer")
    assert moved.status_code == 200, moved.content
    assert moved.json()["version"] == 2

    listed = api(writer).get(skill_url("handoff", rest="/labels/"))
    assert listed.status_code == 200, listed.content
    data = listed.json()
    assert (data["skill"], data["project"]) == ("handoff", "web")
    assert data["latest"]["label"] == "latest" and data["latest"]["version"] == 2
    assert [(i["label"], i["version"], i["moved_by"]) for i in data["labels"]] == [
        ("canary", 2, "bob")
    ]
    assert data["count"] == 2
    assert [(i["name"], i["version"]) for i in data["results"]] == [("latest", 2), ("canary", 2)]
    one = api(writer).get(skill_url("handoff", rest="/labels/canary"))
    assert one.status_code == 200 and one.json() == data["labels"][0]
    assert api(writer).get(skill_url("handoff", rest="/labels/latest")).json()["version"] == 2

    removed = api(writer).delete(
        skill_url("handoff", rest="/labels/canary"), {"reason": "done"}, format="json"
    )
    assert removed.status_code == 204, removed.content
    assert not SkillLabel.objects.exists()
    assert api(writer).get(skill_url("handoff", rest="/labels/")).json()["labels"] == []
    gone = api(writer).delete(skill_url("handoff", rest="/labels/canary"))
    assert_error(gone, 404, "not_found", "label")
    assert_error(api(writer).get(skill_url("handoff", rest="/labels/canary")), 404, "not_found")
    bad = api(writer).get(skill_url("handoff", rest="/labels/Not-A-Slug"))
    assert_error(bad, 400, "invalid", "label")


def test_every_move_is_a_history_row_with_writer_and_reason_and_the_chain_holds(
    api, handoff, writer, admin, tenant
):
    move(api, writer, "canary", 1, reason="try it")
    move(api, writer, "canary", 2, reason="again")
    api(writer).delete(skill_url("handoff", rest="/labels/canary"), {"reason": "gone"}, "json")
    rows = list(SkillLabel.history.order_by("history_id"))
    assert [(r.version, r.history_user.username, r.history_change_reason) for r in rows] == [
        (1, "bob", "try it"),
        (2, "bob", "again"),
        (2, "bob", "gone"),
    ]
    assert [r.change_type for r in rows] == ["created", "updated", "deleted"]
    assert all(r.chain_tenant == tenant.pk and r.chain_seq and r.chain_sha256 for r in rows)
    move(api, writer, "canary", 1)
    assert audit_chain_service.audit_chain_verify(tenant=tenant)["ok"]
    report = api(admin).get(VERIFY).json()
    assert report["ok"] is True, report
    chained = {row.model for row in audit_chain_service.chain_rows(tenant=tenant)[1]}
    assert "agentdocs.historicalskilllabel" in chained


def test_a_label_changed_behind_the_apis_back_is_a_live_mismatch(api, handoff, writer, admin):
    move(api, writer, "canary", 1)
    label = SkillLabel.objects.get()
    # `update()` writes no history row: what a change behind the API's back looks like.
    SkillLabel.objects.filter(pk=label.pk).update(version=2)
    broken = api(admin).get(VERIFY).json()["broken_at"]
    assert (broken["reason"], broken["model"], broken["id"]) == (
        "live_mismatch",
        "agentdocs.skilllabel",
        label.pk,
    )


def test_moves_and_removals_are_in_the_activity_feed(api, handoff, writer, reader):
    move(api, writer, "canary", 1)
    api(writer).delete(skill_url("handoff", rest="/labels/canary"), format="json")
    moved = Event.objects.get(type="skill.changed", action="label_moved")
    assert (moved.target, moved.version) == ("handoff@canary", 1)
    assert moved.data["label"] == "canary" and moved.data["previous_version"] is None
    removed = Event.objects.get(type="skill.changed", action="label_removed")
    assert removed.data["version"] is None and removed.data["previous_version"] == 1
    feed = api(reader).get(f"{T}/activity/?kind=skill").json()["results"]
    assert [e["action"] for e in feed][:2] == ["label_removed", "label_moved"]


def test_a_reader_may_list_and_read_but_not_move(api, handoff, writer, reader):
    move(api, writer, "canary", 1)
    assert api(reader).get(skill_url("handoff", rest="/labels/")).status_code == 200
    assert api(reader).get(skill_url("handoff", rest="/labels/canary")).status_code == 200
    assert_error(move(api, reader, "canary", 2), 403, "forbidden")
    assert api(reader).delete(skill_url("handoff", rest="/labels/canary")).status_code == 403
    assert SkillLabel.objects.get().version == 1


def test_a_writer_may_not_move_a_protected_label_a_reviewer_may(api, handoff, writer, admin):
    assert_error(move(api, writer, "production", 1), 403, "forbidden", "label")
    assert move(api, admin, "production", 1).status_code == 201
    assert api(writer).delete(skill_url("handoff", rest="/labels/production")).status_code == 403
    assert api(admin).delete(skill_url("handoff", rest="/labels/production")).status_code == 204


def test_vance_skill_labels_are_moved_by_tenant_admins_only(api, project, vance, admin, writer):
    skill_service.skill_create(
        project=vance, name="house", files={"SKILL.md": skill_md("house")}, user=admin
    )
    assert_error(move(api, writer, "canary", 1, name="house", project="_vance"), 403, "forbidden")
    assert move(api, admin, "canary", 1, name="house", project="_vance").status_code == 201
    # Through a project the tenant skill is read, its labels listed, never moved.
    listed = api(writer).get(skill_url("house", rest="/labels/")).json()
    assert (listed["project"], [i["label"] for i in listed["labels"]]) == ("_vance", ["canary"])
    assert_error(move(api, admin, "canary", 1, name="house"), 404, "not_found", "name")


def test_an_outsider_gets_404_on_every_skill_label_endpoint(api, handoff, admin, outsider):
    move(api, admin, "canary", 1)
    client = api(outsider)
    for response in (
        client.get(skill_url("handoff", rest="/labels/")),
        client.get(skill_url("handoff", rest="/labels/canary")),
        client.put(skill_url("handoff", rest="/labels/canary"), {"version": 2}, format="json"),
        client.delete(skill_url("handoff", rest="/labels/canary")),
        client.get(skill_url("handoff") + "?label=canary"),
        client.post(skill_url("handoff", rest="/lock"), {}, format="json"),
        client.delete(skill_url("handoff", rest="/lock"), {}, format="json"),
    ):
        assert response.status_code == 404, response.content
        assert "handoff" not in response.content.decode()
    assert SkillLabel.objects.get().version == 1


@pytest.mark.parametrize("name", ["latest", "Production", "-x", "a_b", "x" * 65])
def test_latest_and_names_that_are_not_slugs_are_400_naming_label(api, handoff, writer, name):
    assert_error(move(api, writer, name, 1), 400, "invalid", "label")
    assert not SkillLabel.objects.exists()


def test_a_version_the_skill_never_had_or_a_deletion_is_refused_naming_version(
    api, handoff, writer
):
    assert_error(move(api, writer, "canary", 9), 404, "not_found", "version")
    assert move(api, writer, "canary", 0).status_code == 400
    response = api(writer).put(
        skill_url("handoff", rest="/labels/canary"), {"reason": "x"}, format="json"
    )
    assert response.status_code == 400 and response.json()["field"] == "version"
    skill_service.skill_delete(skill=handoff, base_version=2, user=writer)
    skill_service.skill_revert(skill=handoff, version=2, user=writer)
    assert_error(move(api, writer, "canary", 3), 400, "invalid", "version")
    assert not SkillLabel.objects.exists()


def test_a_skill_carries_at_most_the_documents_number_of_labels(api, handoff, writer, settings):
    settings.AGENTDOCS_MAX_LABELS_PER_DOCUMENT = 2
    assert move(api, writer, "one", 1).status_code == 201
    assert move(api, writer, "two", 1).status_code == 201
    body = assert_error(move(api, writer, "three", 1), 409, "too_many_labels", "label")
    assert body["limit"] == 2
    assert move(api, writer, "two", 2).status_code == 200


def test_reading_a_skill_by_label_serves_the_labelled_versions_files(api, handoff, writer):
    move(api, writer, "canary", 1)
    skill_service.skill_write(
        skill=handoff,
        files=_files("handoff", "Version three.", "#!/bin/sh\necho three\n"),
        base_version=2,
        user=writer,
    )
    read = api(writer).get(skill_url("handoff") + "?label=canary")
    assert read.status_code == 200, read.content
    body = read.json()
    assert (body["version"], body["description"]) == (1, "Version one.")
    assert {f["path"]: f["content"] for f in body["files"]}["scripts/run.sh"] == ONE
    assert read["ETag"] != api(writer).get(skill_url("handoff"))["ETag"]
    assert api(writer).get(skill_url("handoff") + "?label=latest").json()["version"] == 3
    assert_error(api(writer).get(skill_url("handoff") + "?label=beta"), 404, "not_found", "label")
    assert_error(api(writer).get(skill_url("handoff") + "?label=No!"), 400, "invalid", "label")
    # A read recorded for a process keeps the label, and its files are the label's.
    recorded = api(writer).post(
        skill_url("handoff", rest="/reads"), {"process": "p-1", "label": "canary"}, format="json"
    )
    assert recorded.status_code == 201, recorded.content
    assert recorded.json()["version"] == 1
    (entry,) = BindingRecord.objects.get(pk=recorded.json()["record"]).record["skills"]
    assert (entry["version"], entry["label"]) == (1, "canary")
    fallback = api(writer).post(
        skill_url("handoff", rest="/reads"), {"process": "p-1", "label": "beta"}, format="json"
    )
    (entry,) = BindingRecord.objects.get(pk=fallback.json()["record"]).record["skills"]
    assert (entry["version"], entry["label"]) == (3, None)


# Canary reaches only the recipe that asks for it.


@pytest.fixture
def canary(project, vance, tenant, handoff, admin):
    """`handoff` with `canary` on version 1 and `production` on version 2 (its latest);
    the recipe `canary-runner` reads by `canary`, `plain` by nothing."""
    skill_service.skill_write(
        skill=handoff,
        files=_files("handoff", "Version three.", "#!/bin/sh\necho three\n"),
        base_version=2,
        user=admin,
    )
    skill_label_service.skill_label_move(skill=handoff, name="canary", version=1, user=admin)
    skill_label_service.skill_label_move(skill=handoff, name="production", version=2, user=admin)
    # A tenant skill without the label: its latest, whoever asks.
    skill_service.skill_create(
        project=vance, name="house", files={"SKILL.md": skill_md("house", "House.")}, user=admin
    )
    for name, params in (("canary-runner", {"label": "canary"}), ("plain", {})):
        policy_service.recipe_create(
            tenant=tenant, name=name, params=params, profiles={}, user=admin
        )


def _render(client, **body) -> dict[str, Any]:
    body.setdefault("process", f"p-{uuid.uuid4()}")
    response = client.post(MEMORY_BLOCK, body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _index(data: dict[str, Any]) -> dict[str, Any]:
    return next(layer for layer in data["layers"] if layer["kind"] == "skills")


def test_a_canary_label_reaches_only_the_recipe_that_asks_for_it_in_the_memory_block(
    api, canary, reader
):
    client = api(reader)
    asked = _render(client, recipe="canary-runner")
    assert "- `handoff`: Version one." in asked["text"]
    layer = _index(asked)
    assert [(s["name"], s["version"]) for s in layer["skills"]] == [("handoff", 1), ("house", 1)]
    # `house` has no canary label: its latest was listed, and the layer says so.
    assert (layer["label"], layer["label_fallback"]) == ("canary", True)
    for other in (_render(client, recipe="plain"), _render(client)):
        assert "- `handoff`: Version three." in other["text"]
        assert "Version one." not in other["text"]
        assert [(s["name"], s["version"]) for s in _index(other)["skills"]] == [
            ("handoff", 3),
            ("house", 1),
        ]
    production = _render(client, recipe="plain", label="production")
    assert "- `handoff`: Version two." in production["text"]


def test_a_bound_render_by_label_keeps_each_skills_label_and_reconstructs(api, canary, writer):
    client = api(writer)
    text = _render(client, recipe="canary-runner")["text"]
    bound = client.post(
        f"{T}/projects/web/bindings/",
        {
            "process": "run-1",
            "manifest": {"local": []},
            "memory_block": {"recipe": "canary-runner"},
        },
        format="json",
    )
    assert bound.status_code == 201, bound.content
    record = bound.json()
    skills = record["memory_block"]["skills"]
    assert [(s["name"], s["version"], s["label"]) for s in skills] == [
        ("handoff", 1, "canary"),
        ("house", 1, None),
    ]
    # Moving the label later does not change what the record rebuilds.
    handoff = SkillLabel.objects.get(name="canary").skill
    skill_label_service.skill_label_move(skill=handoff, name="canary", version=3, user=writer)
    rebuilt = client.get(f"{T}/projects/web/bindings/{record['id']}/reconstruct").json()
    assert rebuilt["memory_block"]["verified"] is True
    assert rebuilt["memory_block"]["text"] == text


def _mcp(client, reader, *, query: str = ""):
    auth = {
        "HTTP_AUTHORIZATION": f"Bearer {api_token_key(reader)}",
        "HTTP_ACCEPT": "application/json, text/event-stream",
    }

    def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = client.post(
            f"/mcp/acme/web/{query}", body, content_type="application/json", **auth
        )
        assert answer.status_code == 200, answer.content
        return answer.json()["result"]

    return send


def _scripts(result: dict[str, Any]) -> str:
    return next(
        f["content"] for f in result["structuredContent"]["files"] if f["path"] != "SKILL.md"
    )


def test_a_canary_label_reaches_only_the_recipe_that_asks_for_it_over_mcp(
    client, canary, reader, writer
):
    asked = _mcp(client, reader, query="?recipe=canary-runner")
    listed = {s["frontmatter"]["name"]: s for s in asked("skills/list", {})["skills"]}
    assert listed["handoff"]["frontmatter"]["description"] == "Version one."
    tool = asked(
        "tools/call", {"name": "read_skill", "arguments": {"name": "handoff", "process": "p-9"}}
    )
    assert tool["structuredContent"]["version"] == 1 and _scripts(tool) == ONE
    record = BindingRecord.objects.get(pk=tool["structuredContent"]["record"])
    assert [(s["version"], s["label"]) for s in record.record["skills"]] == [(1, "canary")]
    got = asked("skills/get", {"uri": "skill://handoff/SKILL.md"})
    assert "Version one." in str(got)
    read = asked("resources/read", {"uri": "skill://handoff/scripts/run.sh"})
    assert read["contents"][0]["text"] == ONE

    for query in ("?recipe=plain", ""):
        other = _mcp(client, reader, query=query)
        listed = {s["frontmatter"]["name"]: s for s in other("skills/list", {})["skills"]}
        assert listed["handoff"]["frontmatter"]["description"] == "Version three."
        tool = other("tools/call", {"name": "read_skill", "arguments": {"name": "handoff"}})
        assert tool["structuredContent"]["version"] == 3
    # The client's own label wins over its recipe's, as for renders.
    production = _mcp(client, reader, query="?recipe=canary-runner&label=production")
    tool = production("tools/call", {"name": "read_skill", "arguments": {"name": "handoff"}})
    assert tool["structuredContent"]["version"] == 2 and _scripts(tool) == TWO


# Query counts: constant in the number of labels and skills.


@pytest.mark.parametrize("count", [1, 12])
def test_labels_list_and_labelled_reads_run_a_constant_number_of_queries(
    api, project, writer, admin, tenant, count, django_assert_num_queries, client, reader
):
    policy_service.recipe_create(
        tenant=tenant, name="canary-runner", params={"label": "canary"}, profiles={}, user=admin
    )
    skill = None
    for index in range(count):
        name = f"skill-{index}"
        skill = skill_service.skill_create(
            project=project, name=name, files=_files(name, "One.", ONE), user=writer
        ).skill
        skill = skill_service.skill_write(
            skill=skill, files=_files(name, "Two.", TWO), base_version=1, user=writer
        ).skill
        skill_label_service.skill_label_move(skill=skill, name="canary", version=1, user=writer)
    for index in range(count):
        skill_label_service.skill_label_move(
            skill=skill, name=f"label-{index}", version=2, user=writer
        )
    http = api(reader)
    http.get(skill_url(skill.name))  # the token's first use is behind us
    # token and access, the skill, the count, the page
    with django_assert_num_queries(4):
        assert http.get(skill_url(skill.name, rest="/labels/")).status_code == 200
    # token and access, the skill, the label, its version
    with django_assert_num_queries(4):
        assert http.get(skill_url(skill.name) + "?label=canary").status_code == 200
    mcp = _mcp(client, reader, query="?recipe=canary-runner")
    mcp("skills/list", {})  # warm
    # the token, the recipe, the offered skills, the recipe's label, the labels, the
    # labelled versions
    with django_assert_num_queries(6):
        listed = mcp("skills/list", {})["skills"]
    assert len(listed) == count and {s["frontmatter"]["description"] for s in listed} == {"One."}


def test_a_render_by_label_runs_the_same_queries_for_1_and_12_labelled_skills(
    api, project, reader, writer, django_assert_num_queries, settings
):
    # The database path: the token with the caller's access, then the one statement.
    settings.AGENTDOCS_RENDER_CACHE = False
    client = api(reader)
    _render(client)  # the token's first use

    def add(start: int, stop: int) -> None:
        for index in range(start, stop):
            name = f"s-{index:02d}"
            skill = skill_service.skill_create(
                project=project, name=name, files=_files(name, "One.", ONE), user=writer
            ).skill
            skill = skill_service.skill_write(
                skill=skill, files=_files(name, "Two.", TWO), base_version=1, user=writer
            ).skill
            skill_label_service.skill_label_move(skill=skill, name="canary", version=1, user=writer)

    add(0, 1)
    with django_assert_num_queries(2):
        one = _render(client, label="canary")
    add(1, 12)
    with django_assert_num_queries(2):
        twelve = _render(client, label="canary")
    assert [s["version"] for s in _index(one)["skills"]] == [1]
    assert [s["version"] for s in _index(twelve)["skills"]] == [1] * 12
    assert "Two." not in twelve["text"]

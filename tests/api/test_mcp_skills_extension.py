"""MCP's Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) on `/mcp/`, in raw
JSON-RPC over HTTP (the SDK's client does not know the extension): the capability is
declared, `skills/list` and `skills/get` answer each offered skill's entry with a
manifest of its files whose digests and sizes are those of the files `resources/read`
gives, an unknown skill is -32602, other methods stay -32601, and another tenant's
skills are not there."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import requests

from agentdocs.mcp.skills_extension import SKILLS_EXTENSION
from agentdocs.models import BindingRecord
from agentdocs.services import skills as skill_service
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service
from tests.api.test_mcp_http import INITIALIZE, JSON_RPC_HEADERS, bearer
from tests.conftest import api_token_key
from tests.skill_bundles import skill_md

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = "#!/bin/sh\necho 'hand off — now'\n"


@pytest.fixture
def skills(tenant, project, vance, admin, outsider, other_tenant):
    skill_service.skill_create(
        project=vance,
        name="handoff",
        files={"SKILL.md": skill_md("handoff"), "scripts/run.sh": SCRIPT},
        user=admin,
    )
    skill_service.skill_create(
        project=project,
        name="review",
        files={
            "SKILL.md": skill_md("review", "Review a change."),
            "references/a b.md": "A\n",
        },
        user=admin,
    )
    foreign = tenant_service.project_create(
        tenant=other_tenant, slug="web", name="Web", user=outsider
    )
    skill_service.skill_create(
        project=foreign,
        name="secret",
        files={"SKILL.md": skill_md("secret", "Globex only.")},
        user=outsider,
    )


@pytest.fixture
def rpc(live_server, reader):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    headers = {**JSON_RPC_HEADERS, **bearer(api_token_key(reader))}

    def send(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params or {}}
        answer = requests.post(url, json=message, headers=headers)
        assert answer.status_code == 200, answer.text
        return answer.json()

    return send


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_server_declares_the_extension_and_the_resources_it_needs(rpc, skills):
    capabilities = rpc("initialize", INITIALIZE["params"])["result"]["capabilities"]
    assert capabilities["extensions"] == {SKILLS_EXTENSION: {}}
    assert "resources" in capabilities


def test_list_get_and_read_give_the_files_their_digests_say(rpc, skills):
    listed = rpc("skills/list")["result"]
    assert listed["resultType"] == "complete"
    assert listed["cacheScope"] == "private" and listed["ttlMs"] > 0
    entries = {entry["frontmatter"]["name"]: entry for entry in listed["skills"]}
    assert sorted(entries) == ["handoff", "review"]  # no other tenant's skill
    review = entries["review"]
    assert review["uri"] == "skill://review/SKILL.md"
    assert review["frontmatter"] == {"name": "review", "description": "Review a change."}
    assert [r["uri"] for r in review["resources"]] == [
        "skill://review/SKILL.md",
        "skill://review/references/a%20b.md",
    ]
    for name, entry in entries.items():
        got = rpc("skills/get", {"uri": entry["uri"]})["result"]
        assert got["skill"] == entry and got["resultType"] == "complete", name
        for resource in entry["resources"]:
            read = rpc("resources/read", {"uri": resource["uri"]})["result"]
            (contents,) = read["contents"]
            assert contents["uri"] == resource["uri"]
            assert digest(contents["text"]) == resource["digest"]
            assert len(contents["text"].encode("utf-8")) == resource["size"]
    script = rpc("resources/read", {"uri": "skill://handoff/scripts/run.sh"})["result"]
    assert script["contents"][0]["text"] == SCRIPT


def test_an_unknown_skill_is_invalid_params(rpc, skills):
    for uri in (
        "skill://secret/SKILL.md",  # another tenant's
        "skill://nothing/SKILL.md",
        "skill://review/references/a%20b.md",  # not a SKILL.md
        "agentdocs://acme/web/memory-block",
    ):
        error = rpc("skills/get", {"uri": uri})["error"]
        assert error["code"] == -32602, uri
        assert "Globex" not in str(error)
    assert rpc("skills/get", {})["error"]["code"] == -32602
    missing = rpc("resources/read", {"uri": "skill://secret/SKILL.md"})["error"]
    assert missing["code"] == -32002 and "Globex" not in str(missing)
    assert rpc("resources/read", {"uri": "skill://review/nope.md"})["error"]["code"] == -32002


def test_methods_not_served_stay_method_not_found(rpc, skills):
    for method in ("resources/directory/read", "skills/put", "completion/complete"):
        assert rpc(method, {"uri": "skill://review"})["error"]["code"] == -32601, method


def test_an_outsider_gets_404_for_every_method(live_server, skills, outsider):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    headers = {**JSON_RPC_HEADERS, **bearer(api_token_key(outsider))}
    for method, params in (
        ("skills/list", {}),
        ("skills/get", {"uri": "skill://handoff/SKILL.md"}),
        ("resources/read", {"uri": "skill://handoff/SKILL.md"}),
    ):
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = requests.post(url, json=message, headers=headers)
        assert answer.status_code == 404 and "handoff" not in answer.text, method


@pytest.mark.django_db(transaction=False)
def test_skills_list_and_get_ask_the_same_queries_whatever_the_number_of_skills(
    client, project, vance, admin, reader, django_assert_max_num_queries
):
    auth = {
        "HTTP_AUTHORIZATION": f"Bearer {api_token_key(reader)}",
        "HTTP_ACCEPT": "application/json, text/event-stream",
    }

    def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = client.post("/mcp/acme/web/", body, content_type="application/json", **auth)
        assert answer.status_code == 200, answer.content
        return answer.json()["result"]

    def add(count: int, files: int) -> None:
        start = len(send("skills/list", {})["skills"])
        for index in range(start, start + count):
            extra = {f"references/r{n}.md": f"ref {n}\n" for n in range(files)}
            skill_service.skill_create(
                project=vance if index % 2 else project,
                name=f"skill-{index}",
                files={"SKILL.md": skill_md(f"skill-{index}"), **extra},
                user=admin,
            )

    add(1, 1)
    send("skills/list", {})  # warm: prepared statements
    # The token with the caller's access, then the offered skills with their files.
    with django_assert_max_num_queries(2):
        assert len(send("skills/list", {})["skills"]) == 1
    with django_assert_max_num_queries(2):
        send("skills/get", {"uri": "skill://skill-0/SKILL.md"})
    add(12, 6)
    with django_assert_max_num_queries(2):
        listed = send("skills/list", {})["skills"]
    assert len(listed) == 13 and len(listed[-1]["resources"]) == 7
    with django_assert_max_num_queries(2):
        send("skills/get", {"uri": "skill://skill-12/SKILL.md"})


def test_the_clients_recipe_chooses_the_skills_listed(live_server, skills, tenant, admin, reader):
    from agentdocs.services import policy as policy_service

    policy_service.recipe_create(
        tenant=tenant, name="reviewer", params={"skills": ["review"]}, profiles={}, user=admin
    )
    policy_service.recipe_create(
        tenant=tenant, name="none", params={"skills": []}, profiles={}, user=admin
    )
    headers = {**JSON_RPC_HEADERS, **bearer(api_token_key(reader))}
    listing = {"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {}}

    def names(query: str, extra: dict[str, str] | None = None) -> Any:
        url = f"{live_server.url}/mcp/acme/web/{query}"
        answer = requests.post(url, json=listing, headers={**headers, **(extra or {})}).json()
        if "error" in answer:
            return answer["error"]
        return [entry["frontmatter"]["name"] for entry in answer["result"]["skills"]]

    assert names("") == ["handoff", "review"]
    assert names("?recipe=reviewer") == ["review"]
    assert names("", {"X-Agentdocs-Recipe": "reviewer"}) == ["review"]
    assert names("?recipe=none") == []
    unknown = names("?recipe=nobody")
    assert unknown["code"] == -32602 and unknown["data"]["field"] == "recipe"


def _get(live_server, key: str, params: dict[str, Any], **headers: str) -> dict[str, Any]:
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    message = {"jsonrpc": "2.0", "id": 3, "method": "skills/get", "params": params}
    answer = requests.post(
        url, json=message, headers={**JSON_RPC_HEADERS, **bearer(key), **headers}
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_get_that_names_its_process_is_recorded(live_server, skills, writer):
    key = api_token_key(writer)
    meta = {"io.agentdocs/process": "run-7"}
    result = _get(live_server, key, {"uri": "skill://handoff/SKILL.md", "_meta": meta})["result"]
    record = BindingRecord.objects.get(pk=result["_meta"]["io.agentdocs/record"])
    assert record.process == "run-7"
    (bound,) = record.record["skills"]
    assert bound["name"] == "handoff" and bound["version"] == 1
    digests = {r["uri"]: r["digest"] for r in result["skill"]["resources"]}
    assert {f"skill://handoff/{f['path']}": f"sha256:{f['sha256']}" for f in bound["files"]} == (
        digests
    )


def test_a_get_in_a_session_is_recorded_as_that_session(live_server, skills, writer):
    got = _get(
        live_server,
        api_token_key(writer),
        {"uri": "skill://review/SKILL.md"},
        **{"Mcp-Session-Id": "session-42"},
    )["result"]
    record = BindingRecord.objects.get(pk=got["_meta"]["io.agentdocs/record"])
    assert record.process == "session-42" and record.record["skills"][0]["name"] == "review"


def test_a_get_without_a_process_or_allowed_binding_records_nothing(live_server, skills, reader):
    read_only = token_service.token_create(user=reader, name="ro", scopes=["read"]).key
    plain = _get(live_server, read_only, {"uri": "skill://review/SKILL.md"})["result"]
    in_session = _get(
        live_server, read_only, {"uri": "skill://review/SKILL.md"}, **{"Mcp-Session-Id": "s-1"}
    )["result"]
    assert "_meta" not in plain and "_meta" not in in_session  # served, not recorded
    named = {"uri": "skill://review/SKILL.md", "_meta": {"io.agentdocs/process": "run-1"}}
    error = _get(live_server, read_only, named)["error"]
    assert error["code"] == -32602 and error["data"]["error"] == "insufficient_scope"
    bad = {"uri": "skill://review/SKILL.md", "_meta": {"io.agentdocs/process": "bad id\n"}}
    refused = _get(live_server, api_token_key(reader), bad)["error"]
    assert refused["code"] == -32602 and refused["data"]["field"] == "process"
    assert not BindingRecord.objects.exists()

"""A skill a process reads is recorded (issue 37, "on demand, recorded"): `read_skill`
with the process's id over `/mcp/` adds a binding record of that process with
`skills: [{name, version, label, sha256, files}]`, and `reconstruct` restores the exact
files from the skill's history after it changed; nothing of another tenant."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
import requests
from mcp import Client

from agentdocs.models import BindingRecord, Skill
from agentdocs.services import skills as skill_service
from tests.api.test_mcp_http import JSON_RPC_HEADERS, bearer
from tests.api.test_mcp_http import drive as drive_http
from tests.cli.test_mcp import error_of
from tests.conftest import api_token_key
from tests.services.test_signing import KEYS, run_cli
from tests.skill_bundles import skill_md

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = "#!/bin/sh\necho handoff\n"
BINDINGS = "/api/v1/tenants/acme/projects/web/bindings/"


def skill_reads() -> int:
    """Records of skill reads (a session's start binds its instructions in one too)."""
    return sum(1 for record in BindingRecord.objects.all() if "skills" in record.record)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def handoff(project, vance, admin, other_tenant):
    return skill_service.skill_create(
        project=vance,
        name="handoff",
        files={"SKILL.md": skill_md("handoff"), "scripts/run.sh": SCRIPT},
        user=admin,
    )


def _read(process: str | None):
    async def body(client: Client) -> Any:
        arguments = (
            {"name": "handoff"} if process is None else {"name": "handoff", "process": process}
        )
        return await client.call_tool("read_skill", arguments)

    return body


def test_a_read_with_the_process_is_bound_and_reconstructed_byte_for_byte(
    live_server, handoff, vance, admin, writer, api
):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    result = drive_http(url, _read("run-7"), headers=bearer(api_token_key(writer)))
    assert not result.is_error, result.content
    got = result.structured_content
    record_id = got["record"]
    stored = BindingRecord.objects.get(pk=record_id)
    assert (stored.process, stored.project.slug) == ("run-7", "web")
    skill = Skill.objects.get(name="handoff")
    files = {"SKILL.md": skill.files["SKILL.md"], "scripts/run.sh": SCRIPT}
    shown = api(writer).get(f"{BINDINGS}{record_id}").json()
    assert shown["skills"] == [
        {
            "custody": "agentdocs",
            "skill_id": skill.pk,
            "project": "_vance",
            "name": "handoff",
            "version": 1,
            "label": None,
            "sha256": skill.sha256,
            "files": [{"path": p, "sha256": sha(t)} for p, t in sorted(files.items())],
        }
    ]
    # The skill changes afterwards: the record still restores what the run read.
    skill_service.skill_write(
        skill=skill,
        files={"SKILL.md": skill_md("handoff", "Changed."), "scripts/run.sh": "echo new\n"},
        base_version=1,
        user=admin,
        reason="later",
    )
    body = api(writer).get(f"{BINDINGS}{record_id}/reconstruct").json()
    assert body["complete"] is True
    (restored,) = body["skills"]
    assert (restored["name"], restored["version"], restored["verified"]) == ("handoff", 1, True)
    for file in restored["files"]:
        assert file["verified"] is True
        assert file["content"].encode("utf-8") == files[file["path"]].encode("utf-8")
        assert file["sha256"] == sha(files[file["path"]])


def test_a_read_without_a_process_records_nothing(live_server, handoff, writer):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    result = drive_http(url, _read(None), headers=bearer(api_token_key(writer)))
    assert result.structured_content["record"] is None
    assert skill_reads() == 0


def test_a_bad_process_is_refused_naming_it_and_records_nothing(live_server, handoff, writer):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    result = drive_http(url, _read("bad\nprocess"), headers=bearer(api_token_key(writer)))
    refused = error_of(result)
    assert refused["field"] == "process"
    assert skill_reads() == 0


def test_an_unknown_skill_records_nothing(live_server, handoff, writer):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"

    async def body(client: Client) -> Any:
        return await client.call_tool("read_skill", {"name": "nothing", "process": "run-7"})

    refused = error_of(drive_http(url, body, headers=bearer(api_token_key(writer))))
    assert (refused["error"], refused["field"]) == ("not_found", "name")
    assert skill_reads() == 0


def test_outsiders_get_404_and_nothing_is_recorded(live_server, handoff, writer, outsider, api):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "read_skill", "arguments": {"name": "handoff", "process": "run-7"}},
    }
    answer = requests.post(
        url, json=call, headers={**JSON_RPC_HEADERS, **bearer(api_token_key(outsider))}
    )
    assert answer.status_code == 404 and answer.json()["error"] == "not_found"
    assert skill_reads() == 0
    record_id = drive_http(url, _read("run-7"), headers=bearer(api_token_key(writer)))
    record_id = record_id.structured_content["record"]
    for path in (f"{BINDINGS}{record_id}", f"{BINDINGS}{record_id}/reconstruct"):
        response = api(outsider).get(path)
        assert response.status_code == 404 and "handoff" not in response.text


def test_a_skill_read_record_verifies_offline_and_a_changed_file_hash_fails(
    live_server, handoff, writer, api, tmp_path
):
    url = f"{live_server.url}/mcp/?tenant=acme&project=web"
    result = drive_http(url, _read("run-7"), headers=bearer(api_token_key(writer)))
    record_id = result.structured_content["record"]
    answer = tmp_path / "record.json"
    answer.write_bytes(api(writer).get(f"{BINDINGS}{record_id}").content)
    keys = tmp_path / "keys.json"
    keys.write_bytes(api().get(KEYS).content)
    ok = run_cli("verify-record", str(answer), "--keys", str(keys), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    edited = json.loads(answer.read_text())
    edited["skills"][0]["files"][1]["sha256"] = "0" * 64
    answer.write_text(json.dumps(edited))
    bad = run_cli("verify-record", str(answer), "--keys", str(keys), cwd=tmp_path)
    assert bad.returncode == 1


def reads_url(name: str = "handoff", project: str = "web") -> str:
    return f"/api/v1/tenants/acme/projects/{project}/skills/{name}/reads"


def test_the_rest_read_records_the_skill_and_answers_its_files(api, handoff, writer):
    answer = api(writer).post(reads_url(), {"process": "run-9"}, format="json")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["name"], body["version"]) == ("handoff", 1)
    assert {f["path"]: f["content"] for f in body["files"]}["scripts/run.sh"] == SCRIPT
    stored = BindingRecord.objects.get(pk=body["record"])
    assert stored.process == "run-9"
    assert [s["name"] for s in stored.record["skills"]] == ["handoff"]
    restored = api(writer).get(f"{BINDINGS}{body['record']}/reconstruct").json()
    assert restored["complete"] is True and restored["skills"][0]["verified"] is True


def test_the_rest_read_refuses_bad_input_and_records_nothing(api, handoff, writer, outsider):
    client = api(writer)
    missing = client.post(reads_url(), {}, format="json")
    assert missing.status_code == 400 and missing.json()["field"] == "process"
    bad = client.post(reads_url(), {"process": "a\nb"}, format="json")
    assert bad.status_code in (400, 422) and bad.json()["field"] == "process"
    unknown = client.post(reads_url("nothing"), {"process": "run-9"}, format="json")
    assert unknown.status_code == 404 and unknown.json()["field"] == "name"
    foreign = api(outsider).post(reads_url(), {"process": "run-9"}, format="json")
    assert foreign.status_code == 404 and "handoff" not in foreign.content.decode()
    assert skill_reads() == 0


def test_the_stdio_servers_read_skill_records_too(live_server, handoff, writer):
    from tests.cli.test_mcp import drive as drive_stdio

    result = drive_stdio(api_token_key(writer), live_server.url, _read("run-3"))
    assert not result.is_error, result.content
    record = BindingRecord.objects.get(pk=result.structured_content["record"])
    assert record.process == "run-3" and record.record["skills"][0]["name"] == "handoff"

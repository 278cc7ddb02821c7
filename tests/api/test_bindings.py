"""Binding records over the API: bind, problems, immutability, reading, outdated,
compare, reconstruct, the memory block, query counts and tenant isolation."""

from __future__ import annotations

import json

import pytest

from agentdocs.models import BindingRecord, Document
from agentdocs.services import documents as document_service
from agentdocs.services import providers as provider_service
from agentdocs.services import tenancy as tenant_service

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web/bindings/"

SEED_MANIFEST = {
    "context": [
        {"name": "workstation/agent-baseline", "standing": "rule"},
        {"name": "skill/handoff", "standing": "option"},
    ],
    "local": ["AGENTS.md", "docs/writing-style.md"],
    "exceptions": [
        {
            "target": "workstation/agent-baseline#deployment",
            "effect": "narrow",
            "reason": "Deploying needs separate deployment authority.",
        }
    ],
}


@pytest.fixture
def sources(project, vance, admin, make_document):
    """The seed's sources: two shared documents in `_vance`, two in the project."""
    docs = {
        "workstation/agent-baseline": make_document(
            vance, "baseline.md", "# Baseline\nNo deploys.\n"
        ),
        "skill/handoff": make_document(vance, "skills/handoff.md", "# Handoff\nWrite a note.\n"),
        "AGENTS.md": make_document(project, "AGENTS.md", "# Agents\nRun tests. ünïcode\n"),
        "docs/writing-style.md": make_document(project, "docs/writing-style.md", "Plain words.\n"),
    }
    provider_service.provider_set(
        tenant=project.tenant,
        name="workstation/agent-baseline",
        project_slug="_vance",
        path="baseline.md",
        user=admin,
    )
    provider_service.provider_set(
        tenant=project.tenant,
        name="skill/handoff",
        project_slug="_vance",
        path="skills/handoff.md",
        user=admin,
    )
    return docs


def bind(client, manifest=SEED_MANIFEST, process="run-1", **extra):
    body = {"process": process, **extra}
    if manifest is not None:
        body["manifest"] = manifest
    return client.post(BASE, body, format="json")


def edit(document: Document, body: str, user) -> Document:
    current = Document.objects.get(pk=document.pk)
    return document_service.document_write(
        document=current, body=body, base_version=current.version, user=user, reason="edit"
    ).document


def test_binding_a_clean_manifest_is_201_with_a_restorable_record(api, writer, sources):
    response = bind(api(writer))
    assert response.status_code == 201, response.content
    record = response.json()
    assert record["schema"] == "context-binding/v1"
    assert record["process"] == "run-1" and record["tenant"] == "acme"
    assert record["problems"] == [] and record["problem_count"] == 0
    assert response["Location"] == f"{BASE}{record['id']}"
    baseline = record["context"][0]
    doc = sources["workstation/agent-baseline"]
    history = doc.history.get(version=doc.version)
    assert baseline == {
        "name": "workstation/agent-baseline",
        "standing": "rule",
        "resolved": True,
        "custody": "agentdocs",
        "document": {
            "id": doc.pk,
            "project": "_vance",
            "path": "baseline.md",
            "version": 1,
            "history_id": history.history_id,
        },
        "sha256": doc.sha256,
        "bytes": doc.size,
    }
    assert len(baseline["sha256"]) == 64
    assert [s["path"] for s in record["local"]] == ["AGENTS.md", "docs/writing-style.md"]
    assert record["local"][0]["bytes"] == len("# Agents\nRun tests. ünïcode\n".encode())
    assert record["exceptions"] == [
        {
            "target": "workstation/agent-baseline#deployment",
            "effect": "narrow",
            "reason": "Deploying needs separate deployment authority.",
            "standing": "rule",
            "outcome": "narrowed",
            "why": "",
        }
    ]
    assert record["manifest"]["source"] == "inline"
    assert record["manifest"]["custody"] == "unversioned"
    stored = BindingRecord.objects.get(pk=record["id"])
    assert stored.problem_count == 0 and stored.created_by == writer


def test_readers_may_bind(api, reader, sources):
    assert bind(api(reader)).status_code == 201


def test_the_projects_context_json_is_the_default_manifest(
    api, writer, project, sources, make_document
):
    manifest_doc = make_document(project, "context.json", json.dumps(SEED_MANIFEST, indent=2))
    response = bind(api(writer), manifest=None)
    assert response.status_code == 201, response.content
    manifest = response.json()["manifest"]
    assert manifest["source"] == "context.json"
    assert manifest["custody"] == "agentdocs"
    assert manifest["document"]["version"] == manifest_doc.version
    assert manifest["sha256"] == manifest_doc.sha256


def test_without_any_manifest_binding_is_refused(api, writer, project):
    response = bind(api(writer), manifest=None)
    assert response.status_code == 400
    assert response.json()["field"] == "manifest"
    assert not BindingRecord.objects.exists()


def test_a_context_json_that_is_not_json_is_refused(api, writer, project, make_document):
    make_document(project, "context.json", "{not json")
    response = bind(api(writer), manifest=None)
    assert response.status_code == 400
    assert "context.json" in response.json()["detail"]


def test_an_invalid_context_json_names_the_entry(api, writer, project, make_document):
    make_document(project, "context.json", json.dumps({"context": [{"name": "a"}]}))
    response = bind(api(writer), manifest=None)
    assert response.status_code == 400
    body = response.json()
    assert body["field"] == "manifest.context[0].standing"
    assert "context[0].standing" in body["detail"]


@pytest.mark.parametrize(
    ("manifest", "field"),
    [
        (
            {"context": [{"name": "a", "standing": "rule"}, {"name": "a", "standing": "rule"}]},
            "manifest.context[1].name",
        ),
        ({"local": ["ok.md", "../x.md"]}, "manifest.local[1]"),
        (
            {"exceptions": [{"target": "nohash", "effect": "narrow", "reason": "r"}]},
            "manifest.exceptions[0].target",
        ),
        ("not an object", "manifest"),
    ],
)
def test_an_invalid_inline_manifest_is_a_json_error_naming_the_entry(
    api, writer, project, manifest, field
):
    response = bind(api(writer), manifest=manifest)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid"
    assert response.json()["field"] == field
    assert not BindingRecord.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"manifest": {}}, "process"),
        ({"process": "", "manifest": {}}, "process"),
        ({"process": 5, "manifest": {}}, "process"),
        ({"process": "p", "manifest": {}, "extra": 1}, "extra"),
        ({"process": "p", "manifest": {}, "memory_block": "x"}, "memory_block"),
    ],
)
def test_bad_requests_store_nothing(api, writer, project, body, field):
    response = api(writer).post(BASE, body, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert not BindingRecord.objects.exists()


def test_problems_are_listed_and_the_record_is_still_stored_with_422(api, writer, admin, sources):
    document_service.document_delete(
        document=Document.objects.get(path="docs/writing-style.md"), base_version=1, user=admin
    )
    manifest = {
        "context": [
            {"name": "workstation/agent-baseline", "standing": "rule"},
            {"name": "skill/handoff", "standing": "preference"},
            {"name": "workstation/unmapped", "standing": "rule"},
        ],
        "local": ["AGENTS.md", "docs/writing-style.md", "never.md"],
        "exceptions": [
            {"target": "workstation/agent-baseline#send", "effect": "broaden", "reason": "r"},
            {"target": "workstation/agent-baseline#style", "effect": "replace", "reason": "r"},
            {"target": "skill/handoff#notes", "effect": "narrow", "reason": "r"},
            {"target": "elsewhere/thing#x", "effect": "narrow", "reason": "r"},
        ],
    }
    response = bind(api(writer), manifest=manifest)
    assert response.status_code == 422
    record = response.json()
    kinds = [p["kind"] for p in record["problems"]]
    assert kinds == [
        "unknown_standing",
        "unresolved_name",
        "missing_local_document",
        "missing_local_document",
        "refused_exception",
        "refused_exception",
        "refused_exception",
        "refused_exception",
    ]
    assert record["problem_count"] == 8
    assert [e["outcome"] for e in record["exceptions"]] == ["refused"] * 4
    assert BindingRecord.objects.get(pk=record["id"]).problem_count == 8


def test_a_name_mapped_to_a_missing_document_is_unresolved(api, writer, admin, project):
    provider_service.provider_set(
        tenant=project.tenant, name="team/ghost", project_slug="web", path="ghost.md", user=admin
    )
    response = bind(api(writer), manifest={"context": [{"name": "team/ghost", "standing": "rule"}]})
    assert response.status_code == 422
    problem = response.json()["problems"][0]
    assert problem["kind"] == "unresolved_name"
    assert "web/ghost.md" in problem["detail"]


def test_records_are_immutable_through_the_api(api, admin, writer, sources):
    record = bind(api(writer)).json()
    url = f"{BASE}{record['id']}"
    for method in ("put", "patch", "delete"):
        assert getattr(api(admin), method)(url, {}, format="json").status_code == 405
    edit(sources["AGENTS.md"], "# Agents\nchanged\n", admin)
    stored = api(admin).get(url).json()
    assert stored["local"][0]["document"]["version"] == 1
    assert {k: v for k, v in stored.items() if k != "archive"} == {
        k: v for k, v in record.items() if k != "archive"
    }


def test_list_is_newest_first_and_filters_by_process_and_problems(api, writer, sources):
    client = api(writer)
    first = bind(client, process="run-a").json()["id"]
    second = bind(client, process="run-b").json()["id"]
    third = bind(client, manifest={"local": ["nope.md"]}, process="run-a").json()["id"]
    listed = client.get(BASE).json()
    assert [r["id"] for r in listed["results"]] == [third, second, first]
    assert listed["results"][0]["problem_count"] == 1
    assert [r["id"] for r in client.get(BASE, {"process": "run-a"}).json()["results"]] == [
        third,
        first,
    ]
    assert [r["id"] for r in client.get(BASE, {"problems": "true"}).json()["results"]] == [third]
    assert [r["id"] for r in client.get(BASE, {"problems": "false"}).json()["results"]] == [
        second,
        first,
    ]
    assert client.get(BASE, {"problems": "maybe"}).status_code == 400


def test_a_record_of_another_project_is_not_found(api, admin, writer, tenant, sources):
    record = bind(api(writer)).json()
    tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    other = f"/api/v1/tenants/acme/projects/api/bindings/{record['id']}"
    assert api(writer).get(other).status_code == 404
    assert api(writer).get(f"{BASE}999999").status_code == 404
    assert api(writer).get(f"{BASE}abc").status_code == 400


def test_outsiders_get_404_for_records(api, writer, outsider, other_tenant, sources):
    record = bind(api(writer)).json()
    client = api(outsider)
    url = f"{BASE}{record['id']}"
    for path in (
        BASE,
        url,
        url + "/outdated",
        url + "/reconstruct",
        f"{url}/compare/{record['id']}",
    ):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.json()["error"] == "not_found"
    assert bind(client).status_code == 404
    assert BindingRecord.objects.count() == 1


def test_a_tenant_cannot_bind_another_tenants_documents(api, outsider, other_tenant, sources):
    """globex maps a name to its own project; acme's documents are never reachable."""
    tenant_service.project_create(tenant=other_tenant, slug="web", name="Web", user=outsider)
    url = "/api/v1/tenants/globex/projects/web/bindings/"
    manifest = {
        "context": [{"name": "workstation/agent-baseline", "standing": "rule"}],
        "local": ["AGENTS.md"],
    }
    response = api(outsider).post(url, {"process": "p", "manifest": manifest}, format="json")
    assert response.status_code == 422
    assert [p["kind"] for p in response.json()["problems"]] == [
        "unresolved_name",
        "missing_local_document",
    ]


def test_outdated_after_an_edit_and_after_a_delete(api, admin, writer, sources):
    record = bind(api(writer)).json()
    edit(sources["AGENTS.md"], "# Agents\nRun all tests.\n", admin)
    doc = Document.objects.get(path="docs/writing-style.md")
    document_service.document_delete(document=doc, base_version=doc.version, user=admin)
    provider_service.provider_delete(
        tenant=sources["AGENTS.md"].project.tenant, name="skill/handoff", user=admin
    )
    response = api(writer).get(f"{BASE}{record['id']}/outdated")
    assert response.status_code == 200
    rows = {(r.get("name") or r.get("path")): r for r in response.json()["sources"]}
    assert rows["workstation/agent-baseline"]["status"] == "current"
    assert rows["AGENTS.md"]["status"] == "changed"
    assert rows["AGENTS.md"]["bound"]["version"] == 1
    assert rows["AGENTS.md"]["current"]["version"] == 2
    assert rows["AGENTS.md"]["current"]["sha256"] != rows["AGENTS.md"]["bound"]["sha256"]
    assert rows["docs/writing-style.md"]["status"] == "deleted"
    assert rows["skill/handoff"]["status"] == "deleted"
    assert response.json()["summary"] == {"current": 1, "changed": 1, "deleted": 2, "missing": 0}


def test_outdated_shows_a_source_unresolved_when_bound_until_it_resolves(
    api, admin, writer, project, sources, make_document
):
    manifest = {"context": [], "local": ["AGENTS.md", "later.md"], "exceptions": []}
    record = bind(api(writer), manifest=manifest)
    assert record.status_code == 422  # the missing local document is a problem of the record
    url = f"{BASE}{record.json()['id']}/outdated"
    rows = {row["path"]: row for row in api(writer).get(url).json()["sources"]}
    assert rows["later.md"]["status"] == "missing" and rows["later.md"]["bound"] is None
    assert rows["AGENTS.md"]["status"] == "current"
    make_document(project, "later.md", "# Later\n")
    response = api(writer).get(url).json()
    rows = {row["path"]: row for row in response["sources"]}
    assert rows["later.md"]["status"] == "changed"
    assert rows["later.md"]["current"]["version"] == 1
    assert response["summary"] == {"current": 1, "changed": 1, "deleted": 0, "missing": 0}


def test_outdated_sees_a_name_remapped_to_another_document(
    api, admin, writer, project, sources, make_document
):
    record = bind(api(writer)).json()
    make_document(project, "baseline-v2.md", "# Baseline 2\n")
    provider_service.provider_set(
        tenant=project.tenant,
        name="workstation/agent-baseline",
        project_slug="web",
        path="baseline-v2.md",
        user=admin,
    )
    rows = api(writer).get(f"{BASE}{record['id']}/outdated").json()["sources"]
    assert rows[0]["status"] == "changed"
    assert rows[0]["current"]["path"] == "baseline-v2.md"


def test_compare_shows_the_sources_that_differ(api, admin, writer, sources):
    client = api(writer)
    a = bind(client).json()["id"]
    edit(sources["skill/handoff"], "# Handoff\nWrite a longer note.\n", admin)
    b = bind(client).json()["id"]
    response = client.get(f"{BASE}{a}/compare/{b}")
    assert response.status_code == 200
    diff = response.json()
    assert diff["a"] == a and diff["b"] == b
    assert [(s["name"], s["status"]) for s in diff["sources"]] == [("skill/handoff", "changed")]
    assert diff["sources"][0]["a"]["version"] == 1 and diff["sources"][0]["b"]["version"] == 2
    assert client.get(f"{BASE}{a}/compare/{a}").json()["identical"] is True
    assert client.get(f"{BASE}{a}/compare/424242").status_code == 404


def test_reconstruct_round_trip_is_byte_identical_after_every_source_changed(
    api, admin, writer, sources
):
    supplied = {key: doc.body for key, doc in sources.items()}
    record = bind(api(writer)).json()
    for key, doc in sources.items():
        edit(doc, f"rewritten {key}\n", admin)
    doc = Document.objects.get(path="AGENTS.md")
    document_service.document_delete(document=doc, base_version=doc.version, user=admin)
    response = api(writer).get(f"{BASE}{record['id']}/reconstruct")
    assert response.status_code == 200
    body = response.json()
    assert body["complete"] is True
    restored = {(s.get("name") or s.get("path")): s for s in body["sources"]}
    for key, text in supplied.items():
        assert restored[key]["restored"] is True and restored[key]["verified"] is True
        assert restored[key]["body"].encode("utf-8") == text.encode("utf-8")


def test_reconstruct_says_when_a_source_cannot_be_restored(api, writer, sources):
    record = bind(api(writer), manifest={"local": ["AGENTS.md", "never.md"]}).json()
    body = api(writer).get(f"{BASE}{record['id']}/reconstruct").json()
    assert body["complete"] is False
    missing = body["sources"][1]
    assert missing["restored"] is False and missing["body"] is None
    assert "not resolved" in missing["detail"]


def test_reconstruct_refuses_text_that_no_longer_matches_its_hash(api, writer, sources):
    record = bind(api(writer)).json()
    doc = sources["AGENTS.md"]
    # Tampering behind the app's back: the history row's body no longer hashes as recorded.
    doc.history.filter(version=1).update(body="tampered")
    entry = next(
        s
        for s in api(writer).get(f"{BASE}{record['id']}/reconstruct").json()["sources"]
        if s.get("path") == "AGENTS.md"
    )
    assert entry["restored"] is False and entry["body"] is None
    assert "sha256" in entry["detail"]


def _manifest_of(n: int) -> dict:
    return {
        "context": [{"name": f"team/doc-{i}", "standing": "knowledge"} for i in range(n)],
        "local": [f"local-{i}.md" for i in range(n)],
    }


@pytest.fixture
def fifty_sources(project, admin, make_document):
    for i in range(50):
        make_document(project, f"shared/doc-{i}.md", f"shared {i}\n")
        make_document(project, f"local-{i}.md", f"local {i}\n")
        provider_service.provider_set(
            tenant=project.tenant,
            name=f"team/doc-{i}",
            project_slug="web",
            path=f"shared/doc-{i}.md",
            user=admin,
        )


def test_binding_runs_the_same_number_of_queries_for_1_and_50_sources(
    api, writer, fifty_sources, signing_key, django_assert_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = api(writer)
    counts = []
    for n in (1, 50):
        with CaptureQueriesContext(connection) as queries:
            response = bind(client, manifest=_manifest_of(n))
        assert response.status_code == 201, response.content
        assert len(response.json()["context"]) == n
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    print(f"binding queries for 1 and 50 sources: {counts}")
    with django_assert_num_queries(counts[0]):
        bind(client, manifest=_manifest_of(50))


def test_reading_runs_constant_queries(api, writer, fifty_sources, django_assert_max_num_queries):
    client = api(writer)
    small = bind(client, manifest=_manifest_of(1)).json()["id"]
    large = bind(client, manifest=_manifest_of(50)).json()["id"]
    for _ in range(20):
        bind(client, manifest=_manifest_of(1))
    # Once per connection, Django asks SQLite what its JSON functions support (its own
    # queries); counted reads start after that, as on every later request.
    client.get(BASE)
    with django_assert_max_num_queries(4):
        client.get(BASE)
    for record in (small, large):
        with django_assert_max_num_queries(4):
            client.get(f"{BASE}{record}")
        with django_assert_max_num_queries(5):
            client.get(f"{BASE}{record}/outdated")
        with django_assert_max_num_queries(4):
            client.get(f"{BASE}{record}/reconstruct")
    with django_assert_max_num_queries(4):
        client.get(f"{BASE}{small}/compare/{large}")


# The memory block: what reached the model is bound too.

MB_URL = "/api/v1/tenants/acme/projects/web/memory-block/"


@pytest.fixture
def block_sources(project, vance, admin, make_document, tenant):
    from agentdocs.services import policy as policy_service

    policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={"contextBudgetBytes": 600},
        profiles={"cli": {"useClientAgentDoc": True}, "web": {}},
        user=admin,
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.max_turns", value="40", user=admin
    )
    return {
        "agent": make_document(vance, "agent.md", "# House rules\n- be kind\n"),
        "overview": make_document(project, ".AGENTS/overview.md", "What this project is. é\n"),
        "big": make_document(project, ".AGENTS/zz-big.md", "x" * 900 + "\n"),
        "AGENTS.md": make_document(project, "AGENTS.md", "# Agents\n"),
    }


def test_a_bound_memory_block_is_the_preview_and_touches_no_read_state(api, writer, block_sources):
    client = api(writer)
    preview = client.get(MB_URL, {"recipe": "coder", "profile": "web"}).json()
    response = bind(
        client,
        manifest={"local": ["AGENTS.md"]},
        process="run-mb",
        memory_block={"recipe": "coder", "profile": "web"},
    )
    assert response.status_code == 201, response.content
    block = response.json()["memory_block"]
    assert block["sha256"] == preview["sha256"]
    assert block["bytes"] == len(preview["text"].encode("utf-8"))
    assert [layer["kind"] for layer in block["layers"]] == [
        "policy",
        "agent_notes",
        "client_notes",
        "context",
    ]
    agent = block["layers"][1]
    assert agent["version"] == 1 and agent["project"] == "_vance"
    assert agent["sha256"] == block_sources["agent"].sha256
    candidate = block["agent_candidates"][0]
    assert candidate["custody"] == "agentdocs"
    assert candidate["document"]["id"] == block_sources["agent"].pk
    assert {d["path"] for d in block["context_documents"]} == {
        ".AGENTS/overview.md",
        ".AGENTS/zz-big.md",
    }
    stored = BindingRecord.objects.get(pk=response.json()["id"])
    assert stored.memory_block_sha256 == preview["sha256"]
    # No read state was touched: the process's first real render is still in full.
    first = client.post(
        MB_URL, {"process": "run-mb", "recipe": "coder", "profile": "web"}, format="json"
    )
    assert [layer["state"] for layer in first.json()["layers"]][1] == "full"


def test_the_memory_block_is_reconstructed_byte_for_byte_after_every_source_changed(
    api, admin, writer, block_sources
):
    client = api(writer)
    text = client.get(MB_URL, {"recipe": "coder", "profile": "web"}).json()["text"]
    record = bind(
        client,
        manifest={"local": ["AGENTS.md"]},
        memory_block={"recipe": "coder", "profile": "web"},
    ).json()
    for doc in block_sources.values():
        edit(doc, doc.body + "changed later\n", admin)
    assert client.get(MB_URL, {"recipe": "coder", "profile": "web"}).json()["text"] != text
    body = client.get(f"{BASE}{record['id']}/reconstruct").json()
    assert body["complete"] is True
    assert body["memory_block"]["verified"] is True
    assert body["memory_block"]["text"].encode("utf-8") == text.encode("utf-8")


def test_a_client_document_in_the_block_is_unversioned_and_cannot_be_restored(
    api, writer, block_sources
):
    client = api(writer)
    response = bind(
        client,
        manifest={"local": ["AGENTS.md"]},
        memory_block={
            "recipe": "coder",
            "profile": "cli",
            "client_document": {"name": "CLAUDE.md", "body": "Use the staging box.\n"},
        },
    )
    assert response.status_code == 201, response.content
    client_doc = response.json()["memory_block"]["client_document"]
    assert client_doc["custody"] == "unversioned"
    assert client_doc["in_text"] is True
    assert client_doc["sha256"] == document_service.sha256_of("Use the staging box.\n")
    body = client.get(f"{BASE}{response.json()['id']}/reconstruct").json()
    assert body["complete"] is False
    assert body["memory_block"]["restored"] is False and body["memory_block"]["text"] is None
    assert "hash only" in body["memory_block"]["detail"]


def test_an_unknown_recipe_in_the_memory_block_is_404_and_stores_nothing(
    api, writer, block_sources
):
    response = bind(api(writer), manifest={"local": ["AGENTS.md"]}, memory_block={"recipe": "nope"})
    assert response.status_code == 404
    assert response.json()["field"] == "recipe"
    assert not BindingRecord.objects.exists()


def test_binding_with_a_memory_block_runs_constant_queries(
    api, writer, fifty_sources, block_sources, signing_key, django_assert_num_queries, settings
):
    # The database path, as on a cold render cache.
    settings.AGENTDOCS_RENDER_CACHE = False
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = api(writer)
    counts = []
    for n in (1, 50):
        with CaptureQueriesContext(connection) as queries:
            response = bind(client, manifest=_manifest_of(n), memory_block={"recipe": "coder"})
        assert response.status_code == 201, response.content
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    print(f"binding queries for 1 and 50 sources: {counts}")


@pytest.mark.parametrize(
    ("memory_block", "field"),
    [
        ({"recipe": "coder", "colour": "red"}, "memory_block.colour"),
        ({"recipe": 5}, "memory_block.recipe"),
        ({"profile": ["cli"]}, "memory_block.profile"),
        ({"client_document": "CLAUDE.md"}, "memory_block.client_document"),
        ({"client_document": {"name": "", "body": "x"}}, "memory_block.client_document.name"),
        ({"client_document": {"name": "C.md", "body": 5}}, "memory_block.client_document.body"),
        (
            {"client_document": {"name": "C.md", "body": "", "x": 1}},
            "memory_block.client_document.x",
        ),
        ([], "memory_block"),
    ],
)
def test_a_malformed_memory_block_is_refused_by_its_dotted_field(
    api, writer, block_sources, memory_block, field
):
    response = bind(api(writer), manifest={"local": ["AGENTS.md"]}, memory_block=memory_block)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid"
    assert response.json()["field"] == field
    assert not BindingRecord.objects.exists()


def test_a_null_memory_block_binds_no_block(api, writer, block_sources):
    response = bind(api(writer), manifest={"local": ["AGENTS.md"]}, memory_block=None)
    assert response.status_code == 201, response.content
    assert response.json()["memory_block"] is None


def test_the_record_is_returned_as_stored(api, writer, block_sources):
    response = bind(
        api(writer), manifest={"local": ["AGENTS.md"]}, memory_block={"recipe": "coder"}
    )
    assert response.status_code == 201, response.content
    stored = BindingRecord.objects.get()
    body = response.json()
    assert body["id"] == stored.pk
    assert {key: body[key] for key in stored.record} == stored.record
    assert set(body) == {"id", "archive", "signature", *stored.record}
    assert body["signature"] == stored.signature
    assert api(writer).get(f"{BASE}{stored.pk}").json() == body

"""`/api/v1/tenants/{tenant}/projects/{project}/memory-block/`: the contract."""

from __future__ import annotations

import hashlib
import json
import uuid

import jsonschema
import pytest

from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import tenancy as tenant_service
from agentdocs.validation.memory_block import MAX_CLIENT_DOCUMENT_BYTES

pytestmark = pytest.mark.django_db

URL = "/api/v1/tenants/acme/projects/web/memory-block/"


@pytest.fixture
def process() -> str:
    return f"process-{uuid.uuid4()}"


@pytest.fixture
def coder(tenant, admin):
    return policy_service.recipe_create(
        tenant=tenant,
        name="coder",
        params={"contextBudgetBytes": 4096},
        profiles={"cli": {"useClientAgentDoc": True}, "web": {}},
        user=admin,
    )


@pytest.fixture
def documents(project, vance, make_document):
    make_document(vance, "agent.md", "# House rules\n- be kind\n")
    make_document(project, ".AGENTS/overview.md", "What this project is.\n")
    make_document(project, ".AGENTS/conventions.md", "Do not write files.\n")


def post(client, body, **headers):
    return client.post(URL, body, format="json", **headers)


def test_post_returns_the_block_and_its_account(api, reader, documents, coder, process):
    response = post(
        api(reader),
        {
            "process": process,
            "recipe": "coder",
            "profile": "cli",
            "client_document": {"name": "CLAUDE.md", "body": "Use the staging box."},
            "reset": False,
        },
    )
    assert response.status_code == 200, response.json()
    data = response.json()
    assert {"text", "sha256", "layers", "context"} <= set(data)
    assert data["sha256"] == hashlib.sha256(data["text"].encode("utf-8")).hexdigest()
    assert [layer["kind"] for layer in data["layers"]] == [
        "policy",
        "agent_notes",
        "client_notes",
        "context",
    ]
    agent = data["layers"][1]
    assert agent["heading"] == "## Agent Notes (from _vance: agent.md)"
    assert (agent["level"], agent["path"], agent["version"], agent["state"]) == (
        "tenant",
        "agent.md",
        1,
        "full",
    )
    assert agent["bytes"] == len(b"# House rules\n- be kind\n")
    assert "## Agent Notes (from client: CLAUDE.md)" in data["text"]
    context = data["context"]
    assert context["budget_bytes"] == 4096
    assert context["used_bytes"] == len("What this project is.\n") + len("Do not write files.\n")
    assert [s["path"] for s in context["sources"]] == [
        ".AGENTS/overview.md",
        ".AGENTS/conventions.md",
    ]
    assert context["dropped"] == []
    assert '<context path=".AGENTS/overview.md">' in data["text"]


def test_accept_text_plain_returns_the_text_alone(api, reader, documents, process):
    client = api(reader)
    as_json = post(client, {"process": process}).json()
    as_text = post(client, {"process": process, "reset": True}, HTTP_ACCEPT="text/plain")
    assert as_text.status_code == 200
    assert as_text["Content-Type"].startswith("text/plain")
    assert as_text.content.decode("utf-8") == as_json["text"]


def test_turns_of_one_process_are_deduplicated_until_reset(
    api, writer, project, documents, make_document, process
):
    client = api(writer)
    own = make_document(project, "agent.md", "own rules")
    states = []

    def turn(**extra):
        data = post(client, {"process": process, **extra}).json()
        states.append(data["layers"][1]["state"])
        return data

    turn()
    stub = turn()
    assert stub["text"].startswith(
        "## Agent Notes (agent.md)\n\nAgent notes unchanged from an earlier turn"
    )
    assert "own rules" not in stub["text"]
    document_service.document_write(document=own, body="edited", base_version=1, user=writer)
    assert "edited" in turn()["text"]
    turn()
    assert "edited" in turn(reset=True)["text"]
    assert states == ["full", "unchanged", "full", "unchanged", "full"]


def test_get_is_a_preview_with_an_etag(api, reader, writer, project, documents, process):
    client = api(reader)
    first = client.get(URL)
    assert first.status_code == 200
    etag = first["ETag"]
    assert "House rules" in first.json()["text"]
    assert client.get(URL, HTTP_IF_NONE_MATCH=etag).status_code == 304
    # The text representation has its own tag.
    text = client.get(URL, HTTP_ACCEPT="text/plain")
    assert text["ETag"] != etag
    assert client.get(
        URL, HTTP_ACCEPT="text/plain", HTTP_IF_NONE_MATCH=text["ETag"]
    ).status_code == (304)
    document_service.document_create(
        project=project, path="agent.md", body="own rules", user=writer
    )
    changed = client.get(URL, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag


def test_a_preview_never_touches_the_read_state(api, reader, documents, process):
    client = api(reader)
    post(client, {"process": process})
    for _ in range(2):
        assert client.get(URL).json()["layers"][1]["state"] == "full"
    assert post(client, {"process": process}).json()["layers"][1]["state"] == "unchanged"


def test_preview_takes_recipe_and_profile(api, reader, documents, coder):
    data = api(reader).get(URL, {"recipe": "coder", "profile": "web"}).json()
    assert data["context"]["budget_bytes"] == 4096


@pytest.mark.parametrize(
    ("query", "field"),
    [({"recipe": "nope"}, "recipe"), ({"recipe": "coder", "profile": "nope"}, "profile")],
)
def test_unknown_recipe_or_profile_is_a_json_404(
    api, reader, project, coder, process, query, field
):
    client = api(reader)
    for response in (client.get(URL, query), post(client, {"process": process, **query})):
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"
        assert response.json()["field"] == field


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "process"),
        ({"process": ""}, "process"),
        ({"process": 7}, "process"),
        ({"process": "p", "recipe": 3}, "recipe"),
        ({"process": "p", "reset": "yes"}, "reset"),
        ({"process": "p", "client_document": "CLAUDE.md"}, "client_document"),
        ({"process": "p", "client_document": {"name": "C.md"}}, "client_document.body"),
        ({"process": "p", "client_document": {"body": "x"}}, "client_document.name"),
        ({"process": "p", "client_document": {"name": "C.md", "body": "", "x": 1}}, None),
        ({"process": "p", "surprise": True}, "surprise"),
    ],
)
def test_bad_input_is_a_json_400_naming_the_field(api, reader, project, body, field):
    response = post(api(reader), body)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"
    if field is not None:
        assert response.json()["field"] == field


def test_an_oversized_client_document_is_refused(api, reader, project, process):
    body = {
        "process": process,
        "client_document": {"name": "CLAUDE.md", "body": "x" * (MAX_CLIENT_DOCUMENT_BYTES + 1)},
    }
    response = post(api(reader), body)
    assert response.status_code == 400
    assert response.json()["field"] == "client_document.body"
    assert "256 KiB" in response.json()["detail"]


def test_errors_are_json_even_when_text_was_asked_for(api, reader, project):
    response = post(api(reader), {}, HTTP_ACCEPT="text/plain")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["field"] == "process"


def test_every_member_may_render(api, admin, writer, reader, documents, process):
    for user in (admin, writer, reader):
        assert post(api(user), {"process": process}).status_code == 200
        assert api(user).get(URL).status_code == 200


def test_an_outsider_gets_404_for_get_and_post(api, outsider, other_tenant, documents, process):
    client = api(outsider)
    for response in (client.get(URL), post(client, {"process": process})):
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"
        assert "House rules" not in response.content.decode()


def test_anonymous_requests_are_refused(api, documents):
    assert api().get(URL).status_code in (401, 403)
    assert post(api(), {"process": "p"}).status_code in (401, 403)


def test_the_same_process_id_in_another_tenant_is_another_process(
    api, reader, outsider, other_tenant, documents, process
):
    globex_web = tenant_service.project_create(
        tenant=other_tenant, slug="web", name="Web", user=outsider
    )
    document_service.document_create(
        project=globex_web, path="agent.md", body="# House rules\n- be kind\n", user=outsider
    )
    globex_url = "/api/v1/tenants/globex/projects/web/memory-block/"
    for _ in range(2):
        api(outsider).post(globex_url, {"process": process}, format="json")
    acme = post(api(reader), {"process": process}).json()
    assert acme["layers"][1]["state"] == "full"


def _fill(project, make_document, count):
    for index in range(count):
        make_document(project, f".AGENTS/doc-{index:02d}.md", f"context {index}\n")


def test_the_endpoint_runs_the_same_queries_for_1_and_50_documents(
    api,
    reader,
    tenant,
    admin,
    project,
    documents,
    coder,
    make_document,
    signing_key,
    django_assert_num_queries,
    settings,
):
    # The database path; tests/services/test_render_cache.py counts the cached one.
    settings.AGENTDOCS_RENDER_CACHE = False
    client = api(reader)
    body = {"recipe": "coder", "profile": "cli"}
    _fill(project, make_document, 1)
    # the token with the caller's access (one query), then one for the recipe, the
    # settings and the documents
    with django_assert_num_queries(2):
        assert post(client, {"process": f"p-{uuid.uuid4()}", **body}).status_code == 200
    big = tenant_service.project_create(tenant=tenant, slug="big", name="Big", user=admin)
    _fill(big, make_document, 50)
    big_url = "/api/v1/tenants/acme/projects/big/memory-block/"
    with django_assert_num_queries(2):
        response = client.post(big_url, {"process": f"p-{uuid.uuid4()}", **body}, format="json")
    assert len(response.json()["context"]["sources"]) == 50
    with django_assert_num_queries(2):
        assert client.get(big_url, body).status_code == 200


@pytest.mark.parametrize(
    ("client_document", "field"),
    [
        ({"name": "", "body": "x"}, "client_document.name"),
        ({"name": "   ", "body": "x"}, "client_document.name"),
        ({"name": "two\nlines.md", "body": "x"}, "client_document.name"),
        ({"name": "x" * 256, "body": "x"}, "client_document.name"),
        ({"name": 5, "body": "x"}, "client_document.name"),
        ({"name": "CLAUDE.md", "body": None}, "client_document.body"),
        ({"name": "CLAUDE.md", "body": ["x"]}, "client_document.body"),
        ({"name": "CLAUDE.md", "body": "x", "extra": 1}, "client_document.extra"),
        ("CLAUDE.md", "client_document"),
        ([], "client_document"),
    ],
)
def test_a_malformed_client_document_is_refused_naming_its_field(
    api, reader, project, process, client_document, field
):
    response = post(api(reader), {"process": process, "client_document": client_document})
    assert response.status_code == 400, response.json()
    assert response.json()["error"] == "invalid"
    assert response.json()["field"] == field


def test_a_client_document_at_the_limit_counted_in_bytes_is_accepted(
    api, reader, project, coder, process
):
    at_limit = {"name": "CLAUDE.md", "body": "é" * (MAX_CLIENT_DOCUMENT_BYTES // 2)}
    body = {"process": process, "recipe": "coder", "profile": "cli", "client_document": at_limit}
    response = post(api(reader), body)
    assert response.status_code == 200, response.json()
    client_layer = response.json()["layers"][2]
    assert (client_layer["kind"], client_layer["state"]) == ("client_notes", "full")
    assert client_layer["bytes"] == MAX_CLIENT_DOCUMENT_BYTES


def test_a_null_client_document_recipe_and_profile_mean_none(api, reader, documents, process):
    body = {"process": process, "recipe": None, "profile": "", "client_document": None}
    response = post(api(reader), body)
    assert response.status_code == 200, response.json()
    assert (response.json()["recipe"], response.json()["profile"]) == (None, None)


def test_the_response_is_the_rendered_block_key_for_key(
    api, reader, project, tenant, admin, documents, coder, make_document
):
    # Every layer's own account (policy settings, shadowed documents) reaches the client.
    from agentdocs.services.memory_block import render_memory_block

    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="formal", user=admin
    )
    make_document(project, "agent.md", "own rules")
    data = api(reader).get(URL, {"recipe": "coder", "profile": "web"}).json()
    block = render_memory_block(
        project=project, recipe_name="coder", profile_name="web", preview=True
    )
    expected = {
        **block.as_dict(),
        "process": None,
        "recipe": "coder",
        "profile": "web",
        "label": None,
    }
    # And the server's signature of it (tests/services/test_signing.py verifies it).
    assert data.pop("signature")
    assert data == json.loads(json.dumps(expected))
    assert data["layers"][0]["settings"] and "shadowed" in data["layers"][1]


def test_the_schema_of_the_answer_is_the_typed_dict_the_fast_path_builds(
    api, reader, project, tenant, admin, documents, coder, make_document, process
):
    # The view answers with `MemoryBlock.as_dict()` as it is, no serializer between; the
    # schema is generated from the TypedDicts that type it (`MemoryBlockAnswer`, and
    # `LayerAccount` within), descriptions and all, and a real answer matches it exactly.
    import typing

    from agentdocs.api.memory_block import MemoryBlockAnswer
    from agentdocs.core.memory_block import LayerAccount
    from tests.api.openapi_shapes import assert_matches, openapi_components

    components = openapi_components()
    for name, shape in (("MemoryBlock", MemoryBlockAnswer), ("Layer", LayerAccount)):
        documented = components[name]["properties"]
        assert list(documented) == list(typing.get_type_hints(shape))
    signature = components["MemoryBlock"]["properties"]["signature"]["description"]
    assert signature.startswith("The server's Ed25519 signature of the block")
    assert "neutralized" not in components["Layer"]["required"]
    assert components["Layer"]["properties"]["settings"]["description"] == (
        "Policy: the settings applied"
    )

    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.tone", value="warm", user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="formal", enforced=True, user=admin
    )
    make_document(project, "agent.md", "own rules")
    client = api(reader)
    body = {
        "process": process,
        "recipe": "coder",
        "profile": "cli",
        "client_document": {"name": "CLAUDE.md", "body": "Use the staging box."},
    }
    for data in (post(client, body).json(), post(client, body).json()):  # full, then stubs
        assert data["layers"][0]["refused_overrides"] and "shadowed" in data["layers"][1]
        assert_matches(components, "MemoryBlock", data)
    preview = client.get(URL, {"recipe": "coder", "profile": "web"}).json()
    assert_matches(components, "MemoryBlock", preview)
    # Strict: an undocumented key is refused.
    with pytest.raises(jsonschema.ValidationError, match="Additional properties"):
        assert_matches(components, "MemoryBlock", {**preview, "surprise": 1})


def test_a_reset_must_be_a_json_boolean(api, reader, documents, process):
    for reset in ("true", 1, None):
        response = post(api(reader), {"process": process, "reset": reset})
        assert response.status_code == 400
        assert response.json()["field"] == "reset"
    assert post(api(reader), {"process": process, "reset": True}).status_code == 200


def _token_client(user):
    from rest_framework.test import APIClient

    from tests.conftest import api_token_key

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_key(user)}")
    return client


def test_another_members_render_never_turns_an_agents_first_turn_into_stubs(
    reader, writer, project, documents
):
    """The read state is the caller's: a member who guesses `run-1001` and renders first
    gets stubs only on their own later turns; the agent's first turn has the rules."""
    agent, snooper = _token_client(writer), _token_client(reader)
    body = {"process": "run-1001"}
    assert post(snooper, body).json()["layers"][1]["state"] == "full"
    assert post(snooper, body).json()["layers"][1]["state"] == "unchanged"
    first = post(agent, body).json()
    assert first["layers"][1]["state"] == "full"
    assert "Agent notes unchanged" not in first["text"]
    assert post(agent, body).json()["layers"][1]["state"] == "unchanged"


def test_two_tokens_of_one_user_are_two_callers(writer, project, documents):
    one, two = _token_client(writer), _token_client(writer)
    post(one, {"process": "run-7"})
    assert post(two, {"process": "run-7"}).json()["layers"][1]["state"] == "full"


def test_renders_and_binds_are_rate_limited_per_token(reader, project, documents, settings):
    settings.AGENTDOCS_RATE_LIMITS = {"render": "2/min", "bind": "1/min"}
    limited, other = _token_client(reader), _token_client(reader)
    assert post(limited, {"process": "p"}).status_code == 200
    assert post(limited, {"process": "p"}).status_code == 200
    refused = post(limited, {"process": "p"})
    assert refused.status_code == 429
    assert refused.json()["error"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert post(other, {"process": "p"}).status_code == 200  # per token, not per user
    bindings = "/api/v1/tenants/acme/projects/web/bindings/"
    bind = {"manifest": {"context": []}, "process": "p"}
    assert limited.post(bindings, bind, format="json").status_code == 201
    again = limited.post(bindings, bind, format="json")
    assert again.status_code == 429 and again["Retry-After"]


SCOPED_API = (
    '---\ndescription: API rules\nglobs: ["src/api/**"]\n---\n\nOne APIView per operation.\n'
)


@pytest.fixture
def scoped(project, make_document):
    make_document(project, ".AGENTS/overview.md", "What this project is.\n")
    make_document(project, ".AGENTS/api.md", SCOPED_API)


def test_without_paths_a_scoped_document_is_left_out_and_named(api, reader, scoped, process):
    data = post(api(reader), {"process": process}).json()
    context = data["context"]
    assert [s["path"] for s in context["sources"]] == [".AGENTS/overview.md"]
    assert context["skipped_by_scope"] == [{"path": ".AGENTS/api.md", "globs": ["src/api/**"]}]
    assert "One APIView" not in data["text"]
    assert "[1 scoped document left out: no path of this task matches its globs:" in data["text"]
    assert "1 scoped left out" in data["layers"][3]["detail"]


def test_a_matching_path_includes_the_scoped_document_without_its_frontmatter(
    api, reader, scoped, process
):
    client = api(reader)
    first = post(client, {"process": process}).json()
    data = post(client, {"process": process, "paths": ["src/api/views.py"]}).json()
    assert [s["path"] for s in data["context"]["sources"]] == [
        ".AGENTS/overview.md",
        ".AGENTS/api.md",
    ]
    assert data["context"]["skipped_by_scope"] == []
    assert "One APIView per operation." in data["text"]
    assert "globs:" not in data["text"]
    # The read state: the context now sent differs from the first turn's, so it is sent
    # in full, not as a stub.
    context = data["layers"][3]
    assert context["state"] == "full"
    assert context["text_sha256"] != first["layers"][3]["text_sha256"]
    # The same paths again: unchanged, a stub.
    again = post(client, {"process": process, "paths": ["src/api/views.py"]}).json()
    assert again["layers"][3]["state"] == "unchanged"
    # Other paths: the block differs again and is sent in full.
    other = post(client, {"process": process, "paths": ["docs/index.md"]}).json()
    assert other["layers"][3]["state"] == "full"


@pytest.mark.parametrize(
    "paths",
    [
        "src/api/views.py",
        [5],
        [""],
        ["/etc/passwd"],
        ["../outside.py"],
        ["two\nlines"],
        ["x"] * 1001,
    ],
)
def test_bad_paths_are_a_400_naming_paths(api, reader, project, process, paths):
    response = post(api(reader), {"process": process, "paths": paths})
    assert response.status_code == 400, response.json()
    assert response.json()["field"] == "paths"


def test_malformed_frontmatter_renders_the_whole_document_and_says_so(
    api, reader, project, make_document, process
):
    make_document(project, ".AGENTS/broken.md", "---\nglobs: [unclosed\n---\n\nStill here.\n")
    data = post(api(reader), {"process": process}).json()
    assert "Still here." in data["text"]
    problems = data["context"]["frontmatter_problems"]
    assert [p["path"] for p in problems] == [".AGENTS/broken.md"]
    assert "not valid YAML" in problems[0]["detail"]
    assert "frontmatter not understood" in data["layers"][3]["detail"]


def test_a_binding_records_the_paths_and_reconstructs_the_scoped_block_exactly(
    api, writer, admin, project, scoped
):
    client = api(writer)
    bindings = "/api/v1/tenants/acme/projects/web/bindings/"
    paths = ["src/api/views.py"]
    text = post(client, {"process": "run-scoped", "paths": paths}).json()["text"]
    assert "One APIView per operation." in text
    response = client.post(
        bindings,
        {"process": "run-scoped", "manifest": {"local": []}, "memory_block": {"paths": paths}},
        format="json",
    )
    assert response.status_code == 201, response.json()
    record = response.json()
    assert record["memory_block"]["paths"] == paths
    assert record["memory_block"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    for document in project.documents.filter(path__startswith=".AGENTS/"):
        document_service.document_write(
            document=document,
            user=admin,
            body=document.body + "changed later\n",
            base_version=document.version,
            reason="edit",
        )
    rebuilt = client.get(f"{bindings}{record['id']}/reconstruct").json()["memory_block"]
    assert rebuilt["verified"] is True
    assert rebuilt["text"] == text
    bad = client.post(
        bindings,
        {"process": "run-x", "manifest": {"local": []}, "memory_block": {"paths": ["../x"]}},
        format="json",
    )
    assert bad.status_code == 400
    assert bad.json()["field"] == "memory_block.paths"


@pytest.mark.parametrize("render_cache_on", [True, False])
def test_a_long_context_account_is_answered_whole_turn_after_turn(
    api, reader, project, make_document, settings, render_cache_on
):
    # Past ENCODED_CONTEXT_ENTRIES files the account goes out encoded once per kept
    # context: the same JSON as the block's own account, on every turn, pretty or not.
    from agentdocs.api import memory_block as memory_block_api
    from agentdocs.services.memory_block import render_memory_block

    settings.AGENTDOCS_RENDER_CACHE = render_cache_on
    for n in range(memory_block_api.ENCODED_CONTEXT_ENTRIES + 20):
        make_document(project, f".AGENTS/doc{n:03}.md", "x" * 400)
    expected = render_memory_block(project=project, preview=True).context.as_dict()
    client = api(reader)
    turns = [client.post(URL, {"process": "long"}, format="json") for _ in range(2)]
    pretty = client.post(
        URL, {"process": "long"}, format="json", HTTP_ACCEPT="application/json; indent=2"
    )
    for response in [*turns, pretty]:
        assert response.status_code == 200
        assert response.json()["context"] == json.loads(json.dumps(expected))
    assert len(expected["dropped"]) > 0 and len(expected["sources"]) > 0
    assert b'\n  "context"' in pretty.content

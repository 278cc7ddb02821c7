"""`/api/v1/tenants/{tenant}/projects/{project}/export/`: the contract."""

from __future__ import annotations

import hashlib
import io
import zipfile

import frontmatter
import pytest

from agentdocs.core.export import PROVENANCE_START
from agentdocs.models import Scope
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import tenancy as tenant_service
from agentdocs.services import tokens as token_service

pytestmark = pytest.mark.django_db

URL = "/api/v1/tenants/acme/projects/web/export/"
API_RULES = (
    "---\ndescription: How the REST API is laid out\n"
    'globs: ["src/api/**", "*.sql"]\n---\n\nOne APIView per operation.\n'
)


@pytest.fixture
def documents(project, vance, make_document, tenant, admin):
    make_document(vance, "agent.md", "# House rules\n- be kind\n")
    make_document(project, ".AGENTS/overview.md", "What this project is.\n")
    make_document(project, ".AGENTS/api.md", API_RULES)
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="terse", user=admin
    )


def export(client, format="all", headers=None, **query):
    return client.get(URL, {"format": format, **query}, **(headers or {}))


def _provenance_after_frontmatter(content: str) -> str:
    """The first line after the frontmatter (or the first line when there is none)."""
    if content.startswith("---\n"):
        content = content.split("\n---\n", 1)[1]
    return content.split("\n", 1)[0]


def test_all_formats_have_their_files_provenance_and_hashes(api, reader, documents):
    response = export(api(reader))
    assert response.status_code == 200, response.json()
    data = response.json()
    assert set(data) == {"format", "files", "sources", "export_sha256", "warnings"}
    assert data["format"] == "all"
    assert data["warnings"] == []
    paths = [file["path"] for file in data["files"]]
    assert paths == [
        "AGENTS.md",
        "CLAUDE.md",
        ".claude/rules/api.md",
        "GEMINI.md",
        ".github/copilot-instructions.md",
        ".github/instructions/api.instructions.md",
        ".cursor/rules/agentdocs.mdc",
        ".cursor/rules/overview.mdc",
        ".cursor/rules/api.mdc",
        # Antigravity's AGENTS.md is Codex's, written once, with every document: no
        # rule file of its own repeats one.
        ".windsurf/rules/agentdocs.md",
        ".windsurf/rules/overview.md",
        ".windsurf/rules/api.md",
        ".kiro/steering/agentdocs.md",
        ".kiro/steering/overview.md",
        ".kiro/steering/api.md",
        ".clinerules/agentdocs.md",
        ".clinerules/overview.md",
        ".clinerules/api.md",
        ".junie/guidelines.md",
        ".rules",
        ".roo/rules/agentdocs.md",
        ".continue/rules/agentdocs.md",
        ".continue/rules/overview.md",
        ".continue/rules/api.md",
        # Augment cannot scope by globs: the API rules are in its main file.
        ".augment/rules/agentdocs.md",
        ".augment/rules/overview.md",
        "QWEN.md",
        ".qwen/rules/api.md",
        ".goosehints",
        # Devin's AGENTS.md is Codex's too, and it holds every document: no rule file.
        "CODEBUDDY.md",
        ".codebuddy/rules/api.md",
        ".aiassistant/rules/agentdocs.md",
        ".aiassistant/rules/overview.md",
        ".aiassistant/rules/api.md",
        ".hermes.md",
        ".kimi-code/AGENTS.md",
        "REASONIX.md",
        "replit.md",
        "TABNINE.md",
        ".takt/facets/policies/agentdocs.md",
    ]
    for file in data["files"]:
        assert file["sha256"] == hashlib.sha256(file["content"].encode()).hexdigest()
        line = _provenance_after_frontmatter(file["content"])
        assert line.startswith(PROVENANCE_START + " edit it there, not here. tenant: acme; ")
        assert line.endswith(" -->") and line.count("-->") == 1
    pairs = sorted((file["path"], file["sha256"]) for file in data["files"])
    expected = "\n".join(f"{path}\t{sha}" for path, sha in pairs)
    assert data["export_sha256"] == hashlib.sha256(expected.encode()).hexdigest()
    assert [(s["project"], s["path"]) for s in data["sources"]] == [
        ("_vance", "agent.md"),
        ("web", ".AGENTS/overview.md"),
        ("web", ".AGENTS/api.md"),
    ]
    agents = data["files"][0]["content"]
    assert "memory.tone: terse" in agents
    assert "- be kind" in agents
    assert "### .AGENTS/api.md (applies to files matching: src/api/**, *.sql)" in agents
    assert "globs:" not in agents  # the frontmatter is not part of the text
    assert "_vance/agent.md@v1 " in agents


def test_copilot_and_cursor_frontmatter_parses(api, reader, documents):
    files = {f["path"]: f["content"] for f in export(api(reader), "copilot").json()["files"]}
    scoped = frontmatter.loads(files[".github/instructions/api.instructions.md"])
    assert scoped["applyTo"] == "src/api/**,**/*.sql"
    assert scoped["description"] == "How the REST API is laid out"
    assert scoped.content.startswith(PROVENANCE_START)
    assert "One APIView per operation." in scoped.content
    # The main file holds only what always applies.
    assert "One APIView" not in files[".github/copilot-instructions.md"]
    files = {f["path"]: f["content"] for f in export(api(reader), "cursor").json()["files"]}
    main = frontmatter.loads(files[".cursor/rules/agentdocs.mdc"])
    assert main["alwaysApply"] is True
    assert "- be kind" in main.content
    api_rule = frontmatter.loads(files[".cursor/rules/api.mdc"])
    assert api_rule.metadata == {
        "description": "How the REST API is laid out",
        "globs": "src/api/**,**/*.sql",
        "alwaysApply": False,
    }
    assert frontmatter.loads(files[".cursor/rules/overview.mdc"])["alwaysApply"] is True


@pytest.mark.parametrize(
    ("format", "paths"),
    [
        ("agents-md", ["AGENTS.md"]),
        ("gemini-md", ["GEMINI.md"]),
        ("junie", [".junie/guidelines.md"]),
        ("zed", [".rules"]),
        ("roo", [".roo/rules/agentdocs.md"]),
        ("goose", [".goosehints"]),
    ],
)
def test_single_file_formats(api, reader, documents, format, paths):
    data = export(api(reader), format).json()
    assert [file["path"] for file in data["files"]] == paths
    # Every document is in the one file, a scoped one headed by its globs.
    content = data["files"][0]["content"]
    assert "### .AGENTS/api.md (applies to files matching: src/api/**, *.sql)" in content
    assert "What this project is." in content and "- be kind" in content


def test_two_exports_of_unchanged_sources_are_byte_identical(api, reader, documents):
    client = api(reader)
    first, second = export(client), export(client)
    assert first.content == second.content
    zip_a = export(client, headers={"HTTP_ACCEPT": "application/zip"})
    zip_b = export(client, headers={"HTTP_ACCEPT": "application/zip"})
    assert zip_a.status_code == 200
    assert zip_a["Content-Type"] == "application/zip"
    assert zip_a.content == zip_b.content
    archive = zipfile.ZipFile(io.BytesIO(zip_a.content))
    files = {f["path"]: f["content"] for f in first.json()["files"]}
    assert archive.namelist() == list(files)
    for name in archive.namelist():
        assert archive.read(name).decode() == files[name]


def test_export_changes_when_a_source_changes(api, reader, admin, project, documents):
    client = api(reader)
    before = export(client).json()
    document = project.documents.get(path=".AGENTS/overview.md")
    document_service.document_write(
        document=document,
        user=admin,
        body="What this project is, now.\n",
        base_version=document.version,
        reason="test",
    )
    after = export(client).json()
    assert after["export_sha256"] != before["export_sha256"]
    assert "What this project is, now." in after["files"][0]["content"]
    assert "web/.AGENTS/overview.md@v2 " in after["files"][0]["content"]


def test_unknown_format_is_a_400_naming_format(api, reader, documents):
    for format in ("word", ""):
        response = export(api(reader), format)
        assert response.status_code == 400
        assert response.json()["field"] == "format"
    response = export(api(reader), "word", headers={"HTTP_ACCEPT": "application/zip"})
    assert response.status_code == 400
    assert response.json()["field"] == "format"


def test_unknown_recipe_is_a_404_naming_recipe(api, reader, documents):
    response = export(api(reader), "agents-md", recipe="nope")
    assert response.status_code == 404
    assert response.json()["field"] == "recipe"


def test_a_recipe_that_turns_context_off_exports_no_context(api, reader, tenant, admin, documents):
    policy_service.recipe_create(
        tenant=tenant, name="bare", params={"contextEnabled": False}, profiles={}, user=admin
    )
    data = export(api(reader), "cursor", recipe="bare").json()
    assert [file["path"] for file in data["files"]] == [".cursor/rules/agentdocs.mdc"]


def test_outsider_gets_404_and_anonymous_401(api, outsider, other_tenant, documents):
    assert export(api(outsider)).status_code == 404
    assert export(api(None)).status_code in (401, 403)


def test_read_and_render_tokens_may_export(client, reader, documents):
    for scope in (Scope.READ, Scope.RENDER):
        key = token_service.token_create(user=reader, name=f"t-{scope}", scopes=[scope]).key
        response = client.get(URL, {"format": "agents-md"}, HTTP_AUTHORIZATION=f"Token {key}")
        assert response.status_code == 200, response.json()


def test_the_export_runs_the_same_queries_for_1_and_50_documents(
    api, reader, tenant, admin, documents, make_document, django_assert_num_queries, settings
):
    settings.AGENTDOCS_RENDER_CACHE = False
    client = api(reader)
    with django_assert_num_queries(2):
        assert export(client).status_code == 200
    big = tenant_service.project_create(tenant=tenant, slug="big", name="Big", user=admin)
    for index in range(50):
        make_document(big, f".AGENTS/doc-{index:02d}.md", f"context {index}\n")
    with django_assert_num_queries(2):
        response = client.get("/api/v1/tenants/acme/projects/big/export/", {"format": "all"})
    assert len(response.json()["sources"]) == 51


def test_an_export_over_the_size_cap_is_a_413_naming_format_json_and_zip(
    api, reader, documents, settings
):
    client = api(reader)
    whole = export(client, "all").json()
    size = sum(len(file["content"].encode("utf-8")) for file in whole["files"])
    settings.AGENTDOCS_MAX_EXPORT_BYTES = size - 1
    for headers in (None, {"HTTP_ACCEPT": "application/zip"}):
        response = export(client, "all", headers=headers)
        assert response.status_code == 413
        assert response["Content-Type"].startswith("application/json")
        body = response.json()
        assert (body["error"], body["field"]) == ("too_large", "format")
        assert (body["size"], body["limit"]) == (size, size - 1)
    # One format alone fits.
    assert export(client, "claude-md").status_code == 200
    settings.AGENTDOCS_MAX_EXPORT_BYTES = size
    assert export(client, "all").status_code == 200


def test_an_outsider_gets_404_not_413(api, outsider, documents, settings):
    settings.AGENTDOCS_MAX_EXPORT_BYTES = 1
    assert export(api(outsider), "all").status_code == 404


@pytest.mark.parametrize("count", [2, 25])
def test_an_export_reads_the_same_queries_however_many_files(
    api, reader, project, make_document, settings, count, django_assert_max_num_queries
):
    settings.AGENTDOCS_RENDER_CACHE = False
    for n in range(count):
        make_document(project, f".AGENTS/part{n:02}.md", f"Part {n}.\n")
    client = api(reader)
    with django_assert_max_num_queries(4):
        assert export(client, "cursor").status_code == 200
    settings.AGENTDOCS_MAX_EXPORT_BYTES = 10
    with django_assert_max_num_queries(4):
        assert export(client, "cursor").status_code == 413


def test_the_schema_documents_the_413(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/tenants/{tenant}/projects/{project}/export/"]["get"]
    assert "413" in operation["responses"]

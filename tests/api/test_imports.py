"""`POST .../import/`: a repository's agent files become documents, through the one
write path, all or nothing; a dry run gives the same plan and writes nothing."""

from __future__ import annotations

import json

import pytest

from agentdocs.models import Document
from agentdocs.services import documents as document_service
from tests.api.test_documents import assert_error
from tests.services.test_documents_secret_acknowledgement import TEST_TOKEN

pytestmark = pytest.mark.django_db

BASE = "/api/v1/tenants/acme/projects/web"
VANCE = "/api/v1/tenants/acme/projects/_vance"

CURSOR_RULE = """---
description: How the API is laid out
globs: src/api/**, *.sql
alwaysApply: false
---

# API

Views are thin.
"""
CURSOR_RULE_IMPORTED = """---
description: How the API is laid out
globs:
- src/api/**
- '*.sql'
alwaysApply: false
---

# API

Views are thin.
"""
COPILOT_INSTRUCTIONS = '---\napplyTo: "**/*.py,tests/**"\n---\nUse pytest.\n'


def post_import(client, files, *, dry_run=False, base=BASE, **extra):
    payload = {"files": files, "dry_run": dry_run, **extra}
    return client.post(f"{base}/import/", payload, format="json")


def f(path: str, content: str) -> dict[str, str]:
    return {"path": path, "content": content}


def entries(response) -> list[tuple[str, str | None, str]]:
    return [(e["source"], e["target"], e["action"]) for e in response.json()["plan"]]


def history(client, path: str) -> list[dict]:
    response = client.get(f"{BASE}/history/{path}")
    assert response.status_code == 200, response.content
    return response.json()["results"]


REPOSITORY = [
    f("AGENTS.md", "# House rules\n- be kind\n"),
    f(".cursor/rules/api.mdc", CURSOR_RULE),
    f(".github/instructions/python.instructions.md", COPILOT_INSTRUCTIONS),
    f("README.md", "# Not for agents\n"),
]


def test_a_dry_run_gives_the_plan_and_writes_nothing(api, project, writer, make_document):
    make_document(project, ".AGENTS/api.md", "old text\n")
    response = post_import(api(writer), REPOSITORY, dry_run=True)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["applied"] is False
    assert entries(response) == [
        ("AGENTS.md", "agent.md", "create"),
        (".cursor/rules/api.mdc", ".AGENTS/api.md", "update"),
        (".github/instructions/python.instructions.md", ".AGENTS/python.md", "create"),
        ("README.md", None, "skipped"),
    ]
    assert body["plan"][1]["detail"].startswith("version 1 → 2")
    assert body["plan"][3]["detail"] == "not an agent file agentdocs imports"
    assert list(Document.objects.filter(project=project).values_list("path", "version")) == [
        (".AGENTS/api.md", 1)
    ]


def test_applying_creates_and_updates_with_versions_and_the_reason_in_history(
    api, project, writer, make_document
):
    make_document(project, ".AGENTS/api.md", "old text\n")
    client = api(writer)
    response = post_import(client, REPOSITORY, reason="adopt the repo's rules")
    assert response.status_code == 200, response.content
    assert response.json()["applied"] is True
    assert [action for _s, _t, action in entries(response)] == [
        "create",
        "update",
        "create",
        "skipped",
    ]

    documents = {d.path: d for d in Document.objects.filter(project=project)}
    assert set(documents) == {"agent.md", ".AGENTS/api.md", ".AGENTS/python.md"}
    assert documents["agent.md"].body == "# House rules\n- be kind\n"
    assert documents["agent.md"].version == 1
    assert documents[".AGENTS/api.md"].body == CURSOR_RULE_IMPORTED
    assert documents[".AGENTS/api.md"].version == 2
    assert documents[".AGENTS/python.md"].body == (
        "---\nglobs:\n- '**/*.py'\n- tests/**\n---\n\nUse pytest.\n"
    )
    [latest, _first] = history(client, ".AGENTS/api.md")
    assert latest["user"] == "bob"
    assert latest["reason"] == "adopt the repo's rules; imported from .cursor/rules/api.mdc"
    [created] = history(client, "agent.md")
    assert created["reason"] == "adopt the repo's rules; imported from AGENTS.md"
    assert created["change_type"] == "created"


def test_importing_the_same_files_again_is_unchanged_and_writes_nothing(api, project, writer):
    client = api(writer)
    assert post_import(client, REPOSITORY).status_code == 200
    again = post_import(client, REPOSITORY)
    assert again.status_code == 200
    assert [action for _s, _t, action in entries(again)] == [
        "unchanged",
        "unchanged",
        "unchanged",
        "skipped",
    ]
    assert again.json()["plan"][0]["detail"] == "same text as version 1"
    assert set(Document.objects.filter(project=project).values_list("version", flat=True)) == {1}
    [only] = history(client, "agent.md")
    assert only["reason"] == "imported from AGENTS.md"


def test_agents_md_wins_over_claude_gemini_and_copilot_and_the_plan_says_so(api, project, writer):
    files = [
        f(".github/copilot-instructions.md", "copilot\n"),
        f("GEMINI.md", "gemini\n"),
        f("CLAUDE.md", "claude\n"),
        f("AGENTS.md", "agents\n"),
    ]
    response = post_import(api(writer), files)
    assert response.status_code == 200, response.content
    plan = response.json()["plan"]
    assert [(e["source"], e["action"]) for e in plan] == [
        (".github/copilot-instructions.md", "skipped"),
        ("GEMINI.md", "skipped"),
        ("CLAUDE.md", "skipped"),
        ("AGENTS.md", "create"),
    ]
    for skipped in plan[:3]:
        assert skipped["target"] == "agent.md"
        assert "AGENTS.md is imported as agent.md" in skipped["detail"]
    assert Document.objects.get(project=project, path="agent.md").body == "agents\n"


@pytest.mark.parametrize(
    ("given", "winner"),
    [
        (["CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md"], "CLAUDE.md"),
        ([".github/copilot-instructions.md", "GEMINI.md"], "GEMINI.md"),
    ],
)
def test_without_agents_md_the_next_in_order_wins(api, project, writer, given, winner):
    response = post_import(api(writer), [f(path, path) for path in given])
    assert response.status_code == 200, response.content
    assert Document.objects.get(project=project, path="agent.md").body == winner


def test_an_exported_file_has_its_provenance_comment_stripped(api, project, writer):
    content = (
        "<!-- generated by agentdocs: tenant acme, project web\n"
        "     agent.md v3 1a2b3c4d; edit it there, not here -->\n"
        "# House rules\n"
    )
    response = post_import(api(writer), [f("AGENTS.md", content)])
    assert response.status_code == 200, response.content
    assert "provenance comment stripped" in response.json()["plan"][0]["detail"]
    assert Document.objects.get(project=project, path="agent.md").body == "# House rules\n"


def test_a_secret_fails_the_whole_import_naming_the_file_and_line(
    api, project, writer, make_document
):
    make_document(project, "agent.md", "before\n")
    files = [
        f("AGENTS.md", "after\n"),
        f("README.md", "skipped anyway\n"),
        f(".cursor/rules/ci.mdc", f"---\nalwaysApply: true\n---\n# CI\n\nToken: `{TEST_TOKEN}`\n"),
    ]
    for dry_run in (True, False):
        response = post_import(api(writer), files, dry_run=dry_run)
        body = assert_error(response, 422, "secret_detected", "files.2.content")
        assert ".cursor/rules/ci.mdc" in body["detail"]
        assert body["line"] == 6  # the line in the file as sent, frontmatter included
        assert "line 6" in body["detail"]
    assert list(Document.objects.filter(project=project).values_list("path", "version")) == [
        ("agent.md", 1)
    ]
    assert Document.objects.get(project=project, path="agent.md").body == "before\n"


def test_a_reader_may_not_import(api, project, reader):
    response = post_import(api(reader), REPOSITORY, dry_run=True)
    assert_error(response, 403, "forbidden")
    assert not Document.objects.filter(project=project).exists()


def test_into_vance_a_writer_is_refused_and_an_admin_imports(api, vance, writer, admin):
    files = [f("AGENTS.md", "# Tenant-wide rules\n")]
    refused = post_import(api(writer), files, base=VANCE)
    assert_error(refused, 403, "forbidden")
    assert not Document.objects.filter(project=vance).exists()

    accepted = post_import(api(admin), files, base=VANCE)
    assert accepted.status_code == 200, accepted.content
    assert entries(accepted) == [("AGENTS.md", "agent.md", "create")]
    document = Document.objects.get(project=vance, path="agent.md")
    assert (document.body, document.version) == ("# Tenant-wide rules\n", 1)


def test_an_outsider_gets_404_and_nothing_is_written(api, project, outsider, other_tenant):
    response = post_import(api(outsider), REPOSITORY)
    assert_error(response, 404, "not_found")
    assert not Document.objects.exists()


def test_a_deleted_target_is_created_again(api, project, writer, make_document):
    document = make_document(project, "agent.md", "old\n")
    document_service.document_delete(document=document, base_version=1, user=writer)
    response = post_import(api(writer), [f("CLAUDE.md", "new\n")])
    assert response.status_code == 200, response.content
    assert response.json()["plan"][0]["action"] == "create"
    document.refresh_from_db()
    assert (document.body, document.version, document.is_deleted) == ("new\n", 3, False)


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "files"),
        ({"files": []}, "files"),
        ({"files": "AGENTS.md"}, "files"),
        ({"files": [f("AGENTS.md", "x")], "extra": 1}, "extra"),
        ({"files": [f("AGENTS.md", "x")], "dry_run": "yes"}, "dry_run"),
        ({"files": [f("AGENTS.md", "x")], "adopt": "yes"}, "adopt"),
        ({"files": [f("AGENTS.md", "x")], "reason": 5}, "reason"),
        ({"files": [f("AGENTS.md", "x")], "reason": "r" * 201}, "reason"),
        ({"files": ["AGENTS.md"]}, "files.0"),
        ({"files": [f("AGENTS.md", "x"), {"path": "CLAUDE.md"}]}, "files.1.content"),
        ({"files": [f("AGENTS.md", "x"), {"path": 3, "content": "x"}]}, "files.1.path"),
        ({"files": [{"path": "AGENTS.md", "content": "x", "mode": "w"}]}, "files.0.mode"),
        ({"files": [f("AGENTS.md", "x"), f("/etc/passwd", "x")]}, "files.1.path"),
        (
            {"files": [f("AGENTS.md", "x"), f("CLAUDE.md", "y"), f("AGENTS.md", "z")]},
            "files.2.path",
        ),
        ({"files": [f("AGENTS.md", "x" * (256 * 1024 + 1))]}, "files.0.content"),
        # A NUL is refused by the JSON parser for every endpoint, which names it so.
        ({"files": [f("AGENTS.md", "nul\x00")]}, "files[0].content"),
        ({"files": [f(f"{n}.md", "x") for n in range(101)]}, "files"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api, project, writer, payload, field):
    response = api(writer).post(f"{BASE}/import/", payload, format="json")
    assert_error(response, 400, "invalid", field)
    assert not Document.objects.exists()


def test_a_token_with_read_scope_only_may_not_import(project, writer):
    from rest_framework.test import APIClient

    from agentdocs.services import tokens as token_service

    key = token_service.token_create(user=writer, name="ro", scopes=["read"]).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    response = post_import(client, REPOSITORY, dry_run=True)
    assert_error(response, 403, "insufficient_scope")


def _files_of_the_largest_import() -> list[dict[str, str]]:
    """The README's limit: 100 files, each of 256 KiB of Markdown (one `.cursor/rules/`
    rule per file, so each maps to a document of its own)."""
    line = "- Keep views thin; logic lives in services.\n"
    body = line * (256 * 1024 // len(line))
    body += "x" * (256 * 1024 - len(body))
    return [{"path": f".cursor/rules/rule-{index}.mdc", "content": body} for index in range(100)]


def test_an_import_of_100_files_of_256_kib_is_accepted(api, project, writer, settings):
    # Over Django's 2.5 MiB request cap, which every other request keeps.
    files = _files_of_the_largest_import()
    assert len(json.dumps({"files": files})) > 10 * settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    answer = api(writer).post(f"{BASE}/import/", {"files": files, "dry_run": True}, format="json")
    assert answer.status_code == 200, answer.content[:300]
    assert [entry["action"] for entry in answer.json()["plan"]] == ["create"] * 100


def test_an_import_over_its_request_cap_is_413_and_writes_nothing(api, project, writer, settings):
    settings.AGENTDOCS_IMPORT_MAX_REQUEST_BYTES = 1024 * 1024
    files = _files_of_the_largest_import()[:5]
    answer = api(writer).post(f"{BASE}/import/", {"files": files}, format="json")
    assert_error(answer, 413, "too_large", None)
    assert "1048576 bytes an import takes" in answer.json()["detail"]
    assert not Document.objects.filter(project=project).exists()


def test_other_requests_keep_the_server_wide_cap(api, project, writer, settings):
    body = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    answer = api(writer).post(
        f"{BASE}/documents/", {"path": "big.md", "body": body, "reason": "r"}, format="json"
    )
    assert_error(answer, 413, "too_large", None)


def test_an_import_nested_too_deep_is_still_refused(api, project, writer):
    body = '{"files": ' + "[" * 10_000 + "]" * 10_000 + "}"
    answer = api(writer).post(f"{BASE}/import/", body, content_type="application/json")
    assert_error(answer, 400, "invalid", None)

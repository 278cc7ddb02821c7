"""`GET .../explain?tool=T&path=P`: what a tool loads for a file, from the registry's
declarations, against hand-written expectations for three tools and two paths."""

from __future__ import annotations

import dataclasses

import pytest

from agentdocs.core import targets
from agentdocs.core.agent_files import render_scoped
from agentdocs.core.explain import explain, folder_of
from agentdocs.core.export import ExportFile
from tests.export_projects import BASE

pytestmark = pytest.mark.django_db


def explained(client, tool: str, path: str, **query) -> dict:
    response = client.get(f"{BASE}/explain", {"tool": tool, "path": path, **query})
    assert response.status_code == 200, response.content
    return response.json()


def loaded(answer: dict) -> list[tuple[str, str]]:
    return [(file["path"], file["why"]) for file in answer["files"]]


def test_codex_loads_the_root_then_the_folders_file(api, reader, monorepo):
    client = api(reader)
    answer = explained(client, "codex", "src/api/handlers.py")
    assert (answer["tool"], answer["format"], answer["folder"]) == (
        "codex",
        "agents-md",
        "src/api/",
    )
    assert loaded(answer) == [
        ("AGENTS.md", "the tool's main file, read for every path"),
        (
            "src/api/AGENTS.md",
            "the file of src/api/, on the path from the root to the working folder, root first",
        ),
    ]
    root, api_file = answer["files"]
    assert [(d["document"], d["matched"], d["why"]) for d in root["documents"]] == [
        (".AGENTS/overview.md", None, "always applies"),
        (
            ".AGENTS/sql.md",
            None,
            "no glob matches src/api/handlers.py, but the tool reads this file whole",
        ),
    ]
    assert [(d["document"], d["matched"]) for d in api_file["documents"]] == [
        (".AGENTS/api.md", "src/api/**")
    ]
    assert api_file["documents"][0]["why"] == "its glob src/api/** matches src/api/handlers.py"
    assert root["bytes"] > 0 and root["cut_at"] is None
    assert answer["not_loaded"] == [] and answer["warnings"] == []
    # The agent notes: the project has none of its own, _vance's is read.
    assert answer["shadowed"] == []

    other = explained(client, "codex", "docs/index.md")
    assert loaded(other) == [("AGENTS.md", "the tool's main file, read for every path")]


def test_claude_code_loads_its_rules_by_glob(api, reader, monorepo):
    client = api(reader)
    answer = explained(client, "claude-code", "db/001_init.sql")
    assert loaded(answer) == [
        ("CLAUDE.md", "the tool's main file, read for every path"),
        (".claude/rules/sql.md", "a rule: its glob **/*.sql matches db/001_init.sql"),
    ]
    assert answer["files"][1]["documents"][0]["matched"] == "*.sql"  # the document's glob
    web = explained(client, "claude-code", "packages/web/app.tsx")
    assert loaded(web) == [
        ("CLAUDE.md", "the tool's main file, read for every path"),
        (
            "packages/web/CLAUDE.md",
            "the file of packages/web/, loaded when Claude Code reads a file there (at launch "
            "when it is the working folder or above it)",
        ),
    ]
    assert web["not_loaded"] == [
        {
            "path": ".claude/rules/sql.md",
            "why": "no glob of ['**/*.sql'] matches packages/web/app.tsx",
        }
    ]


def test_closest_wins_for_agents_md_readers_and_the_root_is_shadowed(api, reader, monorepo):
    answer = explained(api(reader), "agents-md-readers", "src/api/handlers.py")
    assert loaded(answer) == [("src/api/AGENTS.md", "the closest AGENTS.md to src/api/handlers.py")]
    assert answer["shadowed"] == [
        {"path": "AGENTS.md", "by": "src/api/AGENTS.md", "why": "the closest file to the path wins"}
    ]
    root = explained(api(reader), "agents-md-readers", "README.md")
    assert [f["path"] for f in root["files"]] == ["AGENTS.md"] and root["shadowed"] == []


def test_cursor_loads_rules_by_glob(api, reader, monorepo):
    answer = explained(api(reader), "cursor", "src/api/handlers.py")
    assert [f["path"] for f in answer["files"]] == [
        ".cursor/rules/agentdocs.mdc",
        ".cursor/rules/api.mdc",
        ".cursor/rules/overview.mdc",
    ]
    assert [row["path"] for row in answer["not_loaded"]] == [
        ".cursor/rules/sql.mdc",
        ".cursor/rules/web.mdc",
    ]


def test_a_project_agent_md_shadows_vances(api, reader, project, monorepo, make_document):
    make_document(project, "agent.md", "- the project's own\n")
    answer = explained(api(reader), "codex", "src/api/handlers.py")
    [shadow] = answer["shadowed"]
    assert (shadow["path"], shadow["by"]) == ("_vance/agent.md", "web/agent.md")


def test_the_answer_follows_the_registry_entry(monkeypatch):
    """Changing an entry changes the answer: Codex without per-folder files reads the
    root only."""
    files = [ExportFile("AGENTS.md", "root\n"), ExportFile("src/api/AGENTS.md", "api\n")]
    codex = targets.TOOLS_BY_SLUG["codex"]
    assert [f["path"] for f in explain(codex, files, "src/api/x.py").files] == [
        "AGENTS.md",
        "src/api/AGENTS.md",
    ]
    entry = dataclasses.replace(targets.BY_FORMAT["agents-md"], nested=None)
    monkeypatch.setitem(targets.BY_FORMAT, "agents-md", entry)
    assert [f["path"] for f in explain(codex, files, "src/api/x.py").files] == ["AGENTS.md"]


def test_codex_tells_the_cut_from_the_working_folder():
    files = [ExportFile("AGENTS.md", "x" * 31_447), ExportFile("src/api/AGENTS.md", "y" * 3_665)]
    answer = explain(targets.TOOLS_BY_SLUG["codex"], files, "src/api/handlers.py")
    assert [f["cut_at"] for f in answer.files] == [None, 1321]
    assert answer.warnings == (
        "codex: from src/api/, 35,112 of 32,768 bytes: src/api/AGENTS.md cut at byte 1,321",
    )


def test_folders():
    assert folder_of("src/api/handlers.py") == "src/api"
    assert folder_of("src/api/") == "src/api"
    assert folder_of("README.md") == ""


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"tool": "nope", "path": "a.py"}, "tool"),
        ({"tool": "Cursor", "path": "a.py"}, "tool"),
        ({"path": "a.py"}, "tool"),
        ({"tool": "codex", "path": "/etc/passwd"}, "path"),
        ({"tool": "codex", "path": "src/../../x"}, "path"),
        ({"tool": "codex"}, "path"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api, reader, project, query, field):
    response = api(reader).get(f"{BASE}/explain", query)
    assert response.status_code == 400, response.content
    assert field in str(response.json())


def test_another_tenants_user_gets_404(api, outsider, other_tenant, project):
    response = api(outsider).get(f"{BASE}/explain", {"tool": "codex", "path": "a.py"})
    assert response.status_code == 404


def test_the_formats_list_shows_the_id_tool_takes(api, reader, project):
    formats = api(reader).get(f"{BASE}/export/formats").json()["formats"]
    ids = {entry["format"]: entry["id"] for entry in formats}
    assert ids["cursor"] == "cursor" and ids["agents-md"] == "codex"
    assert ids["claude-md"] == "claude-code"
    nested = {entry["format"]: entry["nested"] for entry in formats}
    assert nested["agents-md"]["files"] == ["AGENTS.override.md", "AGENTS.md"]
    assert nested["cursor"] is None


@pytest.mark.parametrize("count", [2, 25])
def test_the_queries_do_not_grow_with_the_documents(
    api, reader, project, make_document, settings, count, django_assert_max_num_queries
):
    settings.AGENTDOCS_RENDER_CACHE = False
    for n in range(count):
        body = render_scoped({"globs": [f"src/part{n:02}/**"]}, f"Part {n}.\n")
        make_document(project, f".AGENTS/part{n:02}.md", body)
    client = api(reader)
    with django_assert_max_num_queries(4):
        answer = explained(client, "codex", "src/part01/x.py")
    assert [f["path"] for f in answer["files"]] == ["AGENTS.md", "src/part01/AGENTS.md"]


def test_a_repositorys_last_report_says_which_files_it_holds(
    api,
    reader,
    project,
    monorepo,
    django_assert_max_num_queries,
):
    from tests.api.test_repositories import BASE as REPOSITORIES
    from tests.api.test_repositories import render_client, report

    held = {"AGENTS.md": "in-sync", "src/api/AGENTS.override.md": "not-generated"}
    body = report(project, files=held)
    reported = render_client(reader).post(REPOSITORIES, body, format="json")
    assert reported.status_code == 201, reported.content
    repository = reported.json()["id"]
    answer = explained(api(reader), "codex", "src/api/handlers.py", repository=repository)
    # The repository has no src/api/AGENTS.md: the root's only, with its state there.
    assert [(f["path"], f["state"]) for f in answer["files"]] == [("AGENTS.md", "in-sync")]
    assert answer["not_loaded"] == [
        {
            "path": "src/api/AGENTS.override.md",
            "why": "not-generated in the repository's last report, and not in the export: "
            "its text is not known here",
        }
    ]
    assert explained(api(reader), "codex", "a.py")["files"][0]["state"] is None
    missing = api(reader).get(
        f"{BASE}/explain", {"tool": "codex", "path": "a.py", "repository": 999999}
    )
    assert missing.status_code == 404 and missing.json()["field"] == "repository"
    bad = api(reader).get(f"{BASE}/explain", {"tool": "codex", "path": "a.py", "repository": "x"})
    assert bad.status_code == 400 and bad.json()["field"] == "repository"

"""Rules native to every folder: a monorepo's documents scoped to one folder are
exported as that folder's file for the tools that read one (Codex, Claude Code, Gemini
CLI), each choice stated in the file's provenance line; no tool gets a rule twice; a
repository's per-folder files import back as documents scoped to their folder, and a
round trip changes nothing."""

from __future__ import annotations

import pytest

from agentdocs.core.agent_files import render_scoped
from agentdocs.core.export import ExportFile
from agentdocs.core.export_reading import read_exported
from agentdocs.core.targets import FORMATS, target
from agentdocs.core.tool_limits import limit_warnings
from tests.api.test_export_rulesync import RULESYNC_TARGETS, rulesync_import
from tests.export_projects import BASE, export

pytestmark = pytest.mark.django_db

TEXTS = {
    "overview": "A monorepo: an API and a web app.",
    "api": "One APIView per operation.",
    "web": "Components are pure.",
    "sql": "Migrations never drop a column.",
}


def files_of(client, format: str) -> dict[str, str]:
    return {f["path"]: f["content"] for f in export(client, format)["files"]}


@pytest.mark.parametrize(
    ("format", "nested"),
    [("agents-md", "AGENTS.md"), ("claude-md", "CLAUDE.md"), ("gemini-md", "GEMINI.md")],
)
def test_a_document_scoped_to_a_folder_is_that_folders_file(api, reader, monorepo, format, nested):
    files = files_of(api(reader), format)
    main = files[target(format).main]
    assert f"src/api/{nested}" in files and f"packages/web/{nested}" in files
    assert TEXTS["api"] in files[f"src/api/{nested}"]
    assert TEXTS["web"] in files[f"packages/web/{nested}"]
    assert TEXTS["api"] not in main and TEXTS["web"] not in main
    assert TEXTS["overview"] in main
    # Each choice is stated in the provenance line.
    placed = read_exported(main).provenance.placed
    assert f".AGENTS/api.md in src/api/{nested} (src/api/**)" in placed
    assert f".AGENTS/web.md in packages/web/{nested} (packages/web/**)" in placed
    if format == "claude-md":
        # Claude Code scopes the rest in its rules folder, as before.
        assert ".AGENTS/sql.md in .claude/rules/sql.md (**/*.sql: no one folder)" in placed
        assert TEXTS["sql"] in files[".claude/rules/sql.md"]
    else:
        assert ".AGENTS/sql.md here (**/*.sql: no one folder)" in placed
        assert TEXTS["sql"] in main
    nested_placed = read_exported(files[f"src/api/{nested}"]).provenance.placed
    assert nested_placed == (".AGENTS/api.md here (src/api/**)",)


@pytest.mark.parametrize("format", FORMATS)
def test_no_tool_gets_a_rule_twice(api, reader, monorepo, format):
    files = files_of(api(reader), format)
    everything = "\n".join(files.values())
    for name, text in TEXTS.items():
        assert everything.count(text) == 1, (format, name, list(files))


def test_antigravity_reads_codex_agents_md_and_a_glob_rule_for_the_rest(api, reader, monorepo):
    files = files_of(api(reader), "antigravity")
    assert set(files) == {"AGENTS.md", ".agents/rules/api.md", ".agents/rules/web.md"}
    assert files["AGENTS.md"] == files_of(api(reader), "agents-md")["AGENTS.md"]
    assert "globs: src/api/**" in files[".agents/rules/api.md"]


def test_the_export_of_every_format_imports_back_unchanged(api, writer, monorepo):
    client = api(writer)
    files = export(client, "all")["files"]
    response = client.post(
        f"{BASE}/import/",
        {"files": [{"path": f["path"], "content": f["content"]} for f in files], "dry_run": True},
        format="json",
    )
    assert response.status_code == 200, response.content
    plan = response.json()["plan"]
    assert {row["action"] for row in plan} == {"unchanged"}, plan
    nested = [row for row in plan if row["source"] == "src/api/AGENTS.md"]
    assert [row["target"] for row in nested] == [".AGENTS/api.md"]


def test_hand_written_per_folder_files_import_as_documents_scoped_to_their_folder(
    api, writer, project
):
    client = api(writer)
    files = [
        {"path": "AGENTS.md", "content": "- be kind\n"},
        {"path": "src/api/AGENTS.md", "content": "One APIView per operation.\n"},
        {"path": "src/api/CLAUDE.md", "content": "Something else.\n"},
        {"path": "packages/web/GEMINI.md", "content": "Components are pure.\n"},
        {"path": ".github/AGENTS.md", "content": "not a folder's file\n"},
    ]
    response = client.post(f"{BASE}/import/", {"files": files}, format="json")
    assert response.status_code == 200, response.content
    plan = {row["source"]: row for row in response.json()["plan"]}
    assert plan["src/api/AGENTS.md"]["target"] == ".AGENTS/src-api.md"
    assert plan["src/api/AGENTS.md"]["action"] == "create"
    assert plan["src/api/CLAUDE.md"]["action"] == "skipped"  # AGENTS.md comes first
    assert plan["packages/web/GEMINI.md"]["target"] == ".AGENTS/packages-web.md"
    assert plan[".github/AGENTS.md"]["action"] == "skipped"
    body = project.documents.get(path=".AGENTS/src-api.md").body
    assert body == "---\nglobs:\n- src/api/**\n---\n\nOne APIView per operation.\n"
    # Exported again, it is src/api/'s file once more; imported again, nothing changes.
    exported = files_of(client, "agents-md")
    assert "One APIView per operation." in exported["src/api/AGENTS.md"]
    again = client.post(
        f"{BASE}/import/",
        {"files": [{"path": p, "content": c} for p, c in exported.items()], "dry_run": True},
        format="json",
    )
    assert {row["action"] for row in again.json()["plan"]} == {"unchanged"}


def file(path: str, size: int) -> ExportFile:
    return ExportFile(path, "x" * size)


def test_codex_spends_its_budget_root_first_and_cuts_the_most_specific_file():
    files = [
        file("AGENTS.md", 31_447),
        file("src/AGENTS.md", 0),
        file("src/api/AGENTS.md", 3_665),
        file("packages/web/AGENTS.md", 1_000),
    ]
    [warning] = limit_warnings(target("agents-md"), files)
    assert warning.message == (
        "codex: from src/api/, 35,112 of 32,768 bytes: src/api/AGENTS.md cut at byte 1,321"
    )
    assert (warning.folder, warning.path, warning.cut_at) == ("src/api/", "src/api/AGENTS.md", 1321)
    # The root over the budget on its own: told on it, and from every folder.
    big = [file("AGENTS.md", 40_000), file("src/api/AGENTS.md", 10)]
    root, from_api = limit_warnings(target("agents-md"), big)
    assert root.path == "AGENTS.md" and root.folder is None
    assert from_api.message == (
        "codex: from src/api/, 40,010 of 32,768 bytes: AGENTS.md cut at byte 32,768"
    )


def test_antigravity_carries_the_codex_warning_of_the_agents_md_it_writes(
    api, reader, project, vance, make_document
):
    make_document(vance, "agent.md", "- rule " + "x" * 60 + "\n" * 1)
    make_document(project, ".AGENTS/long.md", ("- rule " + "y" * 60 + "\n") * 560)
    data = export(api(reader), "antigravity")
    size = len(dict((f["path"], f["content"]) for f in data["files"])["AGENTS.md"].encode())
    assert size > 32768
    [warning] = data["warnings"]
    assert (warning["format"], warning["tool"], warning["path"]) == (
        "antigravity", "Codex", "AGENTS.md"
    )  # fmt: skip
    assert warning["size"] == size


def test_claude_codes_total_characters_are_told(api, reader, project, vance, make_document):
    make_document(vance, "agent.md", "- be kind\n")
    for name in ("a", "b", "c", "d"):
        body = ("- rule " + "z" * 60 + "\n") * 500
        make_document(project, f".AGENTS/{name}.md", render_scoped({"globs": [f"{name}/**"]}, body))
    warnings = export(api(reader), "claude-md")["warnings"]
    [total] = [w for w in warnings if w["limit"] == 120000]
    assert total["tool"] == "Claude Code" and total["size"] > 120000


# Formats whose per-folder files rulesync 17's import does not read: its claudecode
# target imports CLAUDE.md and .claude/rules/ only (its agentsmd target reads
# src/api/AGENTS.md as a rule of its own).
NESTED_UNREAD_BY_RULESYNC = {"claude-md"}


@pytest.mark.parametrize("format", sorted(RULESYNC_TARGETS))
def test_rulesync_reads_the_monorepo_export(api, reader, monorepo, rulesync, tmp_path, format):
    for path, content in files_of(api(reader), format).items():
        written = tmp_path / path
        written.parent.mkdir(parents=True, exist_ok=True)
        written.write_text(content, encoding="utf-8")
    rules = rulesync_import(rulesync, tmp_path, RULESYNC_TARGETS[format])
    everything = "\n".join(rule.content for rule in rules.values())
    assert "- be kind" in everything, rules
    for name in ("overview", "sql"):
        assert TEXTS[name] in everything, (format, name, list(rules))
    if format == "agents-md":
        # rulesync reads src/api/AGENTS.md as a rule scoped to its folder, as Codex does.
        assert rules["src-api.md"].get("globs") == ["src/api/**/*"]
        assert TEXTS["api"] in rules["src-api.md"].content
    for name in ("api", "web"):
        if format in NESTED_UNREAD_BY_RULESYNC:
            continue
        assert TEXTS[name] in everything, (format, name, list(rules))

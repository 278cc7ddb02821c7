"""Every registered format in its tool's own files and scoping, and
`GET .../export/formats`, the registry as the API lists it."""

from __future__ import annotations

import pytest

from agentdocs.core.agent_files import split_frontmatter, strip_provenance
from agentdocs.core.targets import (
    BY_FORMAT,
    EXPORT_FORMATS,
    FORMATS,
    TARGETS,
    TOOLS_BY_SLUG,
    named,
)
from tests.export_projects import BASE, export

pytestmark = pytest.mark.django_db


def files_of(client, format: str) -> dict[str, str]:
    return {f["path"]: f["content"] for f in export(client, format)["files"]}


def head(content: str) -> str | None:
    """The frontmatter's lines as written (None without frontmatter)."""
    return split_frontmatter(content)[0]


def body(content: str) -> str:
    return strip_provenance(content)[0].split("\n---\n", 1)[-1].strip()


def test_claude_md_writes_scoped_documents_as_rules_with_paths(api, reader, documents):
    files = files_of(api(reader), "claude-md")
    assert list(files) == ["CLAUDE.md", ".claude/rules/api.md"]
    assert head(files[".claude/rules/api.md"]) == (
        'paths:\n  - "src/api/**"\n  - "**/*.sql"\ndescription: "How the REST API is laid out"\n'
    )
    assert body(files[".claude/rules/api.md"]) == "One APIView per operation."
    claude = files["CLAUDE.md"]
    assert "One APIView per operation." not in claude  # no longer inlined
    assert "What this project is." in claude
    # Claude Code cannot pick a rule by its description: those stay in CLAUDE.md, headed.
    assert "### .AGENTS/review.md (applies to files matching: none)" in claude
    assert "### .AGENTS/legacy.md (applies to files matching: none)" in claude


def test_cursor_globs_are_unquoted_and_absent_on_an_always_applied_rule(api, reader, documents):
    files = files_of(api(reader), "cursor")
    assert head(files[".cursor/rules/api.mdc"]) == (
        'description: "How the REST API is laid out"\nglobs: src/api/**,**/*.sql\n'
        "alwaysApply: false\n"
    )
    assert head(files[".cursor/rules/overview.mdc"]) == "alwaysApply: true\n"
    assert head(files[".cursor/rules/review.mdc"]) == (
        'description: "How to review a change"\nalwaysApply: false\n'
    )
    assert head(files[".cursor/rules/legacy.mdc"]) == "alwaysApply: false\n"
    for content in files.values():
        assert 'globs: ""' not in content


def test_copilot_writes_no_apply_to_where_a_rule_has_none(api, reader, documents):
    files = files_of(api(reader), "copilot")
    assert head(files[".github/instructions/api.instructions.md"]) == (
        'applyTo: "src/api/**,**/*.sql"\ndescription: "How the REST API is laid out"\n'
    )
    assert head(files[".github/instructions/review.instructions.md"]) == (
        'description: "How to review a change"\n'
    )
    legacy = files[".github/instructions/legacy.instructions.md"]
    assert head(legacy) is None and "applyTo" not in legacy
    assert "What this project is." in files[".github/copilot-instructions.md"]


@pytest.mark.parametrize(
    ("format", "expected"),
    [
        (
            "windsurf",
            {
                ".windsurf/rules/agentdocs.md": 'trigger: "always_on"\ndescription: '
                '"House rules from agentdocs: policy and agent notes"\n',
                ".windsurf/rules/overview.md": 'trigger: "always_on"\n',
                ".windsurf/rules/api.md": 'trigger: "glob"\nglobs: src/api/**,**/*.sql\n'
                'description: "How the REST API is laid out"\n',
                ".windsurf/rules/review.md": 'trigger: "model_decision"\n'
                'description: "How to review a change"\n',
                ".windsurf/rules/legacy.md": 'trigger: "manual"\n',
            },
        ),
        (
            "antigravity",
            # Codex's AGENTS.md holds every document (none names one folder), and
            # Antigravity reads it: a rule file as well would be each rule twice.
            {"AGENTS.md": None},
        ),
        (
            "kiro",
            {
                ".kiro/steering/agentdocs.md": 'inclusion: "always"\ndescription: '
                '"House rules from agentdocs: policy and agent notes"\n',
                ".kiro/steering/overview.md": 'inclusion: "always"\n',
                ".kiro/steering/api.md": 'inclusion: "fileMatch"\nfileMatchPattern:\n'
                '  - "src/api/**"\n  - "**/*.sql"\ndescription: "How the REST API is laid out"\n',
                ".kiro/steering/review.md": 'inclusion: "auto"\nname: "review"\n'
                'description: "How to review a change"\n',
                ".kiro/steering/legacy.md": 'inclusion: "manual"\n',
            },
        ),
        (
            "cline",
            {
                ".clinerules/agentdocs.md": 'description: "House rules from agentdocs: '
                'policy and agent notes"\n',
                ".clinerules/overview.md": None,
                ".clinerules/api.md": 'description: "How the REST API is laid out"\n'
                'paths:\n  - "src/api/**"\n  - "**/*.sql"\n',
            },
        ),
        (
            "continue",
            {
                ".continue/rules/agentdocs.md": 'name: "agentdocs"\ndescription: "House rules '
                'from agentdocs: policy and agent notes"\nalwaysApply: true\n',
                ".continue/rules/overview.md": 'name: "overview"\nalwaysApply: true\n',
                ".continue/rules/api.md": 'name: "api"\ndescription: "How the REST API is '
                'laid out"\nglobs:\n  - "src/api/**"\n  - "**/*.sql"\nalwaysApply: false\n',
                ".continue/rules/review.md": 'name: "review"\ndescription: "How to review a '
                'change"\nalwaysApply: false\n',
                ".continue/rules/legacy.md": 'name: "legacy"\nalwaysApply: false\n',
            },
        ),
        (
            "augment",
            {
                ".augment/rules/agentdocs.md": 'type: "always_apply"\ndescription: "House '
                'rules from agentdocs: policy and agent notes"\n',
                ".augment/rules/overview.md": 'type: "always_apply"\n',
                ".augment/rules/review.md": 'type: "agent_requested"\n'
                'description: "How to review a change"\n',
                ".augment/rules/legacy.md": 'type: "manual"\n',
            },
        ),
        (
            "devin",
            # As Antigravity: Codex's AGENTS.md holds every document, and Devin reads it.
            {"AGENTS.md": None},
        ),
        (
            "codebuddy",
            {
                "CODEBUDDY.md": None,
                ".codebuddy/rules/api.md": 'description: "How the REST API is laid out"\n'
                'paths:\n  - "src/api/**"\n  - "**/*.sql"\nalwaysApply: false\n',
            },
        ),
        (
            "aiassistant",
            {
                # `field: value` lines, as the IDE writes them: no quotes.
                ".aiassistant/rules/agentdocs.md": "apply: always\ndescription: House rules "
                "from agentdocs: policy and agent notes\n",
                ".aiassistant/rules/overview.md": "apply: always\n",
                ".aiassistant/rules/api.md": "apply: by file patterns\npatterns: src/api/**, "
                "**/*.sql\ndescription: How the REST API is laid out\n",
                ".aiassistant/rules/review.md": "apply: by model decision\n"
                "instructions: How to review a change\n",
                ".aiassistant/rules/legacy.md": "apply: manually\n",
            },
        ),
    ],
)
def test_rule_folders_scope_in_their_tools_words(api, reader, documents, format, expected):
    files = files_of(api(reader), format)
    assert next(iter(files)) == next(iter(expected)) and set(files) == set(expected)
    for path, frontmatter in expected.items():
        assert head(files[path]) == frontmatter, path
    main_path = TARGETS[FORMATS.index(format)].main
    main = files[main_path]
    assert "- be kind" in main
    # Each document is in a rule file of its own or, where the tool cannot scope it, in
    # the main file headed by its globs; never both (but for Antigravity and Devin, whose
    # AGENTS.md is Codex's and holds every document).
    rules = {path.rsplit("/", 1)[-1].split(".")[0] for path in files if path != main_path}
    for name in ("overview", "api", "review", "legacy"):
        inline = f"### .AGENTS/{name}.md" in main
        if format in ("antigravity", "devin"):
            assert inline, name
        else:
            assert (name in rules) != inline, name


def test_antigravity_shares_codex_agents_md_byte_for_byte(api, reader, documents):
    client = api(reader)
    assert (
        files_of(client, "antigravity")["AGENTS.md"] == files_of(client, "agents-md")["AGENTS.md"]
    )


def test_a_file_is_the_same_bytes_in_every_format_that_writes_it(api, reader, documents):
    client = api(reader)
    everything = files_of(client, "all")
    for format in FORMATS:
        for path, content in files_of(client, format).items():
            assert everything[path] == content, (format, path)


def test_the_formats_list_is_the_registry(api, reader, project, django_assert_max_num_queries):
    client = api(reader)
    with django_assert_max_num_queries(2):
        response = client.get(f"{BASE}/export/formats")
    assert response.status_code == 200, response.content
    data = response.json()
    assert [entry["format"] for entry in data["formats"]] == list(FORMATS)
    assert data["all"] == list(FORMATS) and "all" in EXPORT_FORMATS
    by_format = {entry["format"]: entry for entry in data["formats"]}
    assert set(by_format) >= {
        "agents-md", "claude-md", "gemini-md", "copilot", "cursor", "antigravity", "windsurf",
        "kiro", "cline", "junie", "zed", "roo", "continue", "augment", "qwen", "goose",
    }  # fmt: skip
    assert by_format["claude-md"]["files"] == ["CLAUDE.md", ".claude/rules/*.md"]
    assert by_format["zed"]["files"] == [".rules"]
    assert by_format["kiro"]["scoping"] == "kiro"
    [codex] = by_format["agents-md"]["limits"]
    assert (codex["tool"], codex["limit"], codex["unit"], codex["effect"]) == (
        "Codex",
        32768,
        "bytes",
        "cut",
    )
    assert "project_doc_max_bytes" in codex["source"]
    assert [limit["applies_to"] for limit in by_format["windsurf"]["limits"]] == ["each", "total"]
    for entry in data["formats"]:
        assert entry["tool"] and entry["docs"].startswith("https://")
        for limit in entry["limits"]:
            assert limit["source"]
    assert client.get(f"{BASE}/export/formats/").status_code == 200


def test_the_formats_list_is_404_for_an_outsider_and_401_for_no_one(api, outsider, project):
    assert api(outsider).get(f"{BASE}/export/formats").status_code == 404
    assert api(None).get(f"{BASE}/export/formats").status_code in (401, 403)


def test_the_formats_list_names_the_id_each_cli_option_takes(api, reader, project):
    """`tool` is a name (`Cursor`); `tool_id` is what `--tool` takes (`cursor`,
    `claude-code`), and `also_read_by` the tools a format serves, each with its id."""
    data = api(reader).get(f"{BASE}/export/formats").json()
    by_format = {entry["format"]: entry for entry in data["formats"]}
    assert (by_format["cursor"]["tool"], by_format["cursor"]["tool_id"]) == ("Cursor", "cursor")
    assert by_format["claude-md"]["tool_id"] == "claude-code"
    assert by_format["agents-md"]["tool_id"] == "codex"
    assert by_format["devin"]["tool_id"] == "devin"
    served = {tool["tool_id"]: tool for tool in by_format["agents-md"]["also_read_by"]}
    assert {"amp", "opencode", "kilo", "bob", "factorydroid", "grokcli", "warp"} <= set(served)
    assert served["opencode"]["tool"] == "OpenCode"
    assert served["opencode"]["docs"].startswith("https://")
    assert by_format["windsurf"]["also_read_by"] == []
    # Every id is one `agentdocs bind --repo DIR --tool` takes, for the files it names.
    for entry in data["formats"]:
        assert TOOLS_BY_SLUG[entry["tool_id"]].format == entry["format"]
        for tool in entry["also_read_by"]:
            assert TOOLS_BY_SLUG[tool["tool_id"]].format == entry["format"]
            assert named(tool["tool_id"]) is BY_FORMAT[entry["format"]]

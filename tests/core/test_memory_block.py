"""The rendering core over plain data: cascade, `.AGENTS/` loader, policy, Memory Block, dedup.

No database here: these are the pure functions the service calls after its reads.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentdocs.core.cascade import Level, SourceDocument, read_default_document, resolve_cascade
from agentdocs.core.context import (
    ContextDocument,
    load_context,
    load_context_dir,
    load_context_from_mapping,
    utf8_head,
)
from agentdocs.core.memory_block import (
    ClientDocument,
    LayerKind,
    LayerState,
    MemoryBlockInputs,
    compose_memory_block,
    replay_read_state,
)
from agentdocs.core.policy import PolicySetting
from agentdocs.core.recipes import RenderOptions


def project_doc(body: str = "# Project rules\n", path: str = "agent.md", version: int = 3):
    return SourceDocument(Level.PROJECT, path, body, project="web", version=version)


def tenant_doc(body: str = "# Tenant rules\n", path: str = "agent.md", version: int = 7):
    return SourceDocument(Level.TENANT, path, body, project="_vance", version=version)


def default_doc(body: str = "# Default rules\n", path: str = "agent.md"):
    return SourceDocument(Level.DEFAULT, path, body)


def render(read_state=None, **inputs):
    return compose_memory_block(MemoryBlockInputs(**inputs), read_state=read_state)


# The cascade


def test_first_hit_wins_and_the_lower_levels_are_shadowed():
    result = resolve_cascade("agent.md", [default_doc(), tenant_doc(), project_doc()])
    assert result.winner.level is Level.PROJECT
    assert [doc.level for doc in result.shadowed] == [Level.TENANT, Level.DEFAULT]


def test_tenant_level_wins_when_the_project_has_none():
    result = resolve_cascade("agent.md", [default_doc(), tenant_doc()])
    assert result.winner.level is Level.TENANT
    assert [doc.level for doc in result.shadowed] == [Level.DEFAULT]


def test_bundled_default_wins_when_nothing_else_has_the_path():
    result = resolve_cascade("agent.md", [default_doc()])
    assert result.winner.level is Level.DEFAULT and result.shadowed == ()


def test_nothing_anywhere_is_absent():
    result = resolve_cascade("agent.md", [tenant_doc(path="other.md")])
    assert result.winner is None and result.shadowed == ()


def test_cascade_never_merges_bodies():
    block = render(agent_candidates=(project_doc("project only"), tenant_doc("tenant only")))
    assert "project only" in block.text
    assert "tenant only" not in block.text


def test_bundled_default_is_read_from_the_folder(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "team.md").write_text("Team rules\n", encoding="utf-8")
    found = read_default_document(tmp_path, "notes/team.md")
    assert found.level is Level.DEFAULT and found.body == "Team rules\n" and found.version is None
    assert read_default_document(tmp_path, "agent.md") is None
    assert read_default_document(None, "agent.md") is None


def test_bundled_default_cannot_be_read_from_outside_its_folder(tmp_path):
    (tmp_path / "secret.md").write_text("outside", encoding="utf-8")
    inside = tmp_path / "defaults"
    inside.mkdir()
    assert read_default_document(inside, "../secret.md") is None


# Headings for every level


@pytest.mark.parametrize(
    ("document", "heading"),
    [
        (project_doc(), "## Agent Notes (agent.md)"),
        (tenant_doc(), "## Agent Notes (from _vance: agent.md)"),
        (default_doc(), "## Agent Notes (system default: agent.md)"),
    ],
)
def test_each_cascade_level_has_its_heading(document, heading):
    block = render(agent_candidates=(document,))
    layer = block.layer(LayerKind.AGENT_NOTES)
    assert layer.heading == heading
    assert block.text.startswith(heading + "\n\n")
    assert layer.level == document.level.value
    assert layer.state is LayerState.FULL


@pytest.mark.parametrize(
    ("document", "heading"),
    [
        (project_doc(path="notes/team.md"), "## Agent Notes (notes/team.md)"),
        (tenant_doc(path="notes/team.md"), "## Agent Notes (from _vance: notes/team.md)"),
        (default_doc(path="notes/team.md"), "## Agent Notes (system default: notes/team.md)"),
    ],
)
def test_a_redirected_path_appears_in_the_heading(document, heading):
    options = RenderOptions.from_recipe({"agentDocument": "notes/team.md"})
    block = render(options=options, agent_candidates=(document,))
    assert block.layer(LayerKind.AGENT_NOTES).heading == heading


def test_agent_notes_account_lists_what_the_winner_shadowed():
    block = render(agent_candidates=(project_doc(), tenant_doc(), default_doc()))
    layer = block.layer(LayerKind.AGENT_NOTES).as_dict()
    assert layer["path"] == "agent.md" and layer["version"] == 3 and layer["project"] == "web"
    assert [(s["level"], s["project"], s["version"]) for s in layer["shadowed"]] == [
        ("tenant", "_vance", 7),
        ("default", None, None),
    ]
    assert "_vance/agent.md" in layer["detail"]


def test_empty_document_renders_only_its_heading():
    block = render(agent_candidates=(project_doc(""),))
    layer = block.layer(LayerKind.AGENT_NOTES)
    assert layer.state is LayerState.EMPTY
    assert block.text == "## Agent Notes (agent.md)\n"


def test_absent_agent_document_renders_no_block_and_says_so():
    block = render()
    layer = block.layer(LayerKind.AGENT_NOTES)
    assert layer.state is LayerState.ABSENT and layer.heading is None
    assert "Agent Notes" not in block.text
    assert block.text == ""


# agentDocument


def test_agent_document_not_set_means_agent_md():
    assert RenderOptions.from_recipe({}).agent_document == "agent.md"
    assert RenderOptions.from_recipe(None).agent_document == "agent.md"


@pytest.mark.parametrize("value", ["", None])
def test_agent_document_empty_or_null_turns_it_off(value):
    options = RenderOptions.from_recipe({"agentDocument": value})
    assert options.agent_document is None
    block = render(options=options, agent_candidates=(project_doc(),))
    layer = block.layer(LayerKind.AGENT_NOTES)
    assert layer.state is LayerState.OFF
    assert "Project rules" not in block.text


def test_agent_document_path_redirects_the_cascade():
    options = RenderOptions.from_recipe({"agentDocument": "notes/team.md"})
    block = render(
        options=options,
        agent_candidates=(
            project_doc("plain", path="agent.md"),
            tenant_doc("team", "notes/team.md"),
        ),
    )
    assert "## Agent Notes (from _vance: notes/team.md)\n\nteam" in block.text
    assert "plain" not in block.text


# Policy


def test_policy_merges_tenant_then_project_sorted():
    block = render(
        settings=(
            PolicySetting("memory.tone", "formal", "tenant"),
            PolicySetting("memory.language", "en", "tenant"),
            PolicySetting("memory.tone", "casual", "project"),
            PolicySetting("memory.audience", "devs", "project"),
        )
    )
    assert block.text == (
        "## Policy (memory.* settings)\n\n"
        "memory.audience: devs\nmemory.language: en\nmemory.tone: casual\n"
    )
    layer = block.layer(LayerKind.POLICY).as_dict()
    assert layer["refused_overrides"] == []
    assert {s["key"]: s["level"] for s in layer["settings"]}["memory.tone"] == "project"


def test_enforced_tenant_setting_wins_and_the_refused_override_is_reported():
    block = render(
        settings=(
            PolicySetting("memory.tone", "formal", "tenant", enforced=True),
            PolicySetting("memory.tone", "casual", "project"),
        )
    )
    assert "memory.tone: formal" in block.text and "casual" not in block.text
    refused = block.layer(LayerKind.POLICY).as_dict()["refused_overrides"]
    assert refused[0]["key"] == "memory.tone"
    assert (refused[0]["tenant_value"], refused[0]["project_value"]) == ("formal", "casual")


def test_no_settings_means_no_policy_block():
    block = render()
    assert block.layer(LayerKind.POLICY).state is LayerState.ABSENT


# Client notes


def test_client_document_with_opt_in_is_its_own_block_after_the_agent_notes():
    options = RenderOptions.from_recipe({}, {"useClientAgentDoc": True})
    block = render(
        options=options,
        agent_candidates=(project_doc(),),
        client_document=ClientDocument("CLAUDE.md", "Use the staging box."),
    )
    assert block.text == (
        "## Agent Notes (agent.md)\n\n# Project rules\n\n"
        "## Agent Notes (from client: CLAUDE.md)\n\nUse the staging box.\n"
    )
    layer = block.layer(LayerKind.CLIENT_NOTES).as_dict()
    assert (layer["state"], layer["path"], layer["level"]) == ("full", "CLAUDE.md", "client")


def test_client_document_without_opt_in_is_ignored_and_the_account_says_so():
    block = render(client_document=ClientDocument("CLAUDE.md", "Use the staging box."))
    layer = block.layer(LayerKind.CLIENT_NOTES)
    assert layer.state is LayerState.IGNORED
    assert "staging" not in block.text
    assert "useClientAgentDoc" in layer.detail


def test_opt_in_without_a_client_document_is_absent():
    options = RenderOptions.from_recipe({}, {"useClientAgentDoc": True})
    assert render(options=options).layer(LayerKind.CLIENT_NOTES).state is LayerState.ABSENT


# The layer order and the account


def test_layers_come_in_order_policy_agent_client_context():
    options = RenderOptions.from_recipe({}, {"useClientAgentDoc": True})
    block = render(
        options=options,
        settings=(PolicySetting("memory.tone", "formal", "tenant"),),
        agent_candidates=(tenant_doc(),),
        client_document=ClientDocument("AGENT.md", "client"),
        context_documents=(ContextDocument(".AGENTS/overview.md", "overview"),),
    )
    assert [layer.kind for layer in block.layers] == [
        LayerKind.POLICY,
        LayerKind.AGENT_NOTES,
        LayerKind.CLIENT_NOTES,
        LayerKind.CONTEXT,
    ]
    positions = [
        block.text.index(heading)
        for heading in (
            "## Policy (memory.* settings)",
            "## Agent Notes (from _vance: agent.md)",
            "## Agent Notes (from client: AGENT.md)",
            "## Project Context (.AGENTS/)",
        )
    ]
    assert positions == sorted(positions)
    for layer in block.as_dict()["layers"]:
        assert {"kind", "heading", "level", "path", "version", "sha256", "bytes", "state"} <= set(
            layer
        )


def test_the_block_is_deterministic_and_its_hash_is_of_its_text():
    import hashlib

    inputs = {
        "settings": (PolicySetting("memory.tone", "formal", "tenant"),),
        "agent_candidates": (project_doc("Grüße ✓\n"),),
        "context_documents": (ContextDocument(".AGENTS/a.md", "a"),),
    }
    first, second = render(**inputs), render(**inputs)
    assert first.text == second.text
    assert first.sha256 == hashlib.sha256(first.text.encode("utf-8")).hexdigest()


# Dedup


def test_dedup_sequence_full_stub_edit_full_reset_full():
    state: dict = {}
    first = render(state, agent_candidates=(project_doc("v1 rules"),))
    assert first.layer(LayerKind.AGENT_NOTES).state is LayerState.FULL
    assert "v1 rules" in first.text

    second = render(first.read_state, agent_candidates=(project_doc("v1 rules"),))
    layer = second.layer(LayerKind.AGENT_NOTES)
    assert layer.state is LayerState.UNCHANGED
    assert "v1 rules" not in second.text
    assert second.text.startswith(
        "## Agent Notes (agent.md)\n\nAgent notes unchanged from an earlier turn"
    )

    edited = render(second.read_state, agent_candidates=(project_doc("v2 rules", version=4),))
    assert edited.layer(LayerKind.AGENT_NOTES).state is LayerState.FULL
    assert "v2 rules" in edited.text

    again = render(edited.read_state, agent_candidates=(project_doc("v2 rules", version=4),))
    assert again.layer(LayerKind.AGENT_NOTES).state is LayerState.UNCHANGED

    after_reset = render({}, agent_candidates=(project_doc("v2 rules", version=4),))
    assert "v2 rules" in after_reset.text


def test_every_layer_kind_gets_its_own_stub_sentence():
    inputs = {
        "options": RenderOptions.from_recipe({}, {"useClientAgentDoc": True}),
        "settings": (PolicySetting("memory.tone", "formal", "tenant"),),
        "agent_candidates": (tenant_doc(),),
        "client_document": ClientDocument("CLAUDE.md", "client rules"),
        "context_documents": (ContextDocument(".AGENTS/overview.md", "overview"),),
    }
    first = render(**inputs)
    second = render(first.read_state, **inputs)
    assert {layer.state for layer in second.layers} == {LayerState.UNCHANGED}
    assert second.text.count("unchanged from an earlier turn") == 4
    for heading in (
        "## Policy (memory.* settings)\n\nPolicy unchanged",
        "## Agent Notes (from _vance: agent.md)\n\nAgent notes unchanged",
        "## Agent Notes (from client: CLAUDE.md)\n\nClient agent notes unchanged",
        "## Project Context (.AGENTS/)\n\nProject context unchanged",
    ):
        assert heading in second.text


def test_a_new_heading_for_the_same_body_is_sent_in_full():
    first = render(agent_candidates=(project_doc("same"),))
    # The project deleted its own document; the tenant's has the same body.
    second = render(first.read_state, agent_candidates=(tenant_doc("same"),))
    assert second.layer(LayerKind.AGENT_NOTES).state is LayerState.FULL


def test_a_layer_that_disappears_is_forgotten_and_sent_in_full_when_it_returns():
    first = render(agent_candidates=(project_doc("rules"),))
    gone = render(first.read_state)
    assert "agent_notes" not in gone.read_state
    back = render(gone.read_state, agent_candidates=(project_doc("rules"),))
    assert back.layer(LayerKind.AGENT_NOTES).state is LayerState.FULL


def test_empty_document_is_never_stubbed():
    first = render(agent_candidates=(project_doc(""),))
    second = render(first.read_state, agent_candidates=(project_doc(""),))
    assert second.layer(LayerKind.AGENT_NOTES).state is LayerState.EMPTY
    assert second.text == "## Agent Notes (agent.md)\n"


def test_replaying_the_recorded_read_state_reproduces_the_exact_text():
    inputs = {"agent_candidates": (project_doc("rules"),), "settings": ()}
    first = render(**inputs)
    second = render(first.read_state, **inputs)
    recorded_layers = second.as_dict()["layers"]
    replayed = render(replay_read_state(recorded_layers), **inputs)
    assert replayed.text == second.text and replayed.sha256 == second.sha256


# The .AGENTS/ loader


def ctx(name: str, body: str) -> ContextDocument:
    return ContextDocument(f".AGENTS/{name}", body)


def test_priority_files_first_then_the_rest_alphabetically():
    loaded = load_context(
        [ctx(n, n) for n in ("zeta.md", "glossary.md", "alpha.md", "overview.md", "conventions.md")]
    )
    assert [s.document.name for s in loaded.sources] == [
        "overview.md",
        "conventions.md",
        "glossary.md",
        "alpha.md",
        "zeta.md",
    ]


def test_sources_are_wrapped_with_their_path():
    loaded = load_context([ctx("overview.md", "Hello\n\n"), ctx("b.md", "B")])
    assert loaded.rendered == (
        '<context path=".AGENTS/overview.md">\nHello\n</context>\n\n'
        '<context path=".AGENTS/b.md">\nB\n</context>'
    )


def test_only_direct_md_children_of_the_folder_are_loaded():
    loaded = load_context_from_mapping(
        {
            ".AGENTS/overview.md": "yes",
            ".AGENTS/notes.txt": "no",
            ".AGENTS/deep/inner.md": "no",
            "overview.md": "no",
            ".AGENTS-old/overview.md": "no",
        }
    )
    assert [s.document.path for s in loaded.sources] == [".AGENTS/overview.md"]


def test_a_file_named_just_md_is_loaded_like_any_other(tmp_path):
    # The seed loads every direct child ending in `.md`, `.AGENTS/.md` included.
    loaded = load_context_from_mapping({".AGENTS/.md": "dot", ".AGENTS/overview.md": "o"})
    assert [s.document.path for s in loaded.sources] == [".AGENTS/overview.md", ".AGENTS/.md"]
    assert "dot" in loaded.rendered and loaded.dropped == ()
    folder = tmp_path / ".AGENTS"
    folder.mkdir()
    (folder / ".md").write_text("dot", encoding="utf-8")
    loaded = load_context_dir(folder)
    assert [s.document.name for s in loaded.sources] == [".md"]


def test_the_budget_counts_bytes_not_characters():
    # 100 three-byte characters: 300 bytes, 100 characters.
    body = "€" * 100
    assert len(load_context([ctx("a.md", body)], budget_bytes=300).sources) == 1
    loaded = load_context([ctx("a.md", body), ctx("b.md", "x" * 10)], budget_bytes=305)
    assert loaded.used_bytes == 300
    assert [d.name for d in loaded.dropped] == ["b.md"]


def test_truncation_never_splits_a_utf8_character_and_says_how_much_is_left():
    body = "é" * 400  # 800 bytes
    loaded = load_context([ctx("a.md", body)], budget_bytes=301)
    source = loaded.sources[0]
    assert source.truncated
    assert source.bytes == 300  # 150 two-byte characters; the 301st byte would split one
    assert source.content == "é" * 150 + "\n\n[truncated: 500 more bytes]"
    assert loaded.used_bytes == 300
    assert utf8_head("a€b", 3) == "a"


def test_truncation_needs_256_bytes_of_budget_left_otherwise_loading_stops():
    first = ctx("overview.md", "x" * 1000)
    second = ctx("b.md", "y" * 1000)
    third = ctx("c.md", "z")
    loaded = load_context([first, second, third], budget_bytes=1255)
    assert [s.document.name for s in loaded.sources] == ["overview.md"]
    assert [d.name for d in loaded.dropped] == ["b.md", "c.md"]

    loaded = load_context([first, second, third], budget_bytes=1256)
    assert [(s.document.name, s.truncated) for s in loaded.sources] == [
        ("overview.md", False),
        ("b.md", True),
    ]
    assert "[truncated: 744 more bytes]" in loaded.rendered
    # Loading stops after a truncation: every later file is dropped.
    assert [d.name for d in loaded.dropped] == ["c.md"]


def test_every_file_not_loaded_is_in_the_account_and_the_text():
    docs = [ctx("overview.md", "o" * 600), ctx("a.md", "a" * 600), ctx("b.md", "b")]
    block = render(
        options=RenderOptions.from_recipe({"contextBudgetBytes": 700}),
        context_documents=tuple(docs),
    )
    context = block.as_dict()["context"]
    assert context["budget_bytes"] == 700 and context["used_bytes"] == 600
    assert [s["path"] for s in context["sources"]] == [".AGENTS/overview.md"]
    assert [d["path"] for d in context["dropped"]] == [".AGENTS/a.md", ".AGENTS/b.md"]
    assert block.layer(LayerKind.CONTEXT).state is LayerState.TRUNCATED
    assert "[not loaded, over the context budget: .AGENTS/a.md (600 bytes)" in block.text


def test_default_budget_is_32_kib_and_a_recipe_changes_it():
    assert RenderOptions().context_budget_bytes == 32768
    assert RenderOptions.from_recipe({"contextBudgetBytes": 1000}).context_budget_bytes == 1000
    block = render(context_documents=(ctx("a.md", "x" * 40000),))
    assert block.as_dict()["context"]["used_bytes"] == 32768


def test_context_enabled_false_turns_the_layer_off():
    options = RenderOptions.from_recipe({"contextEnabled": False})
    block = render(options=options, context_documents=(ctx("overview.md", "overview"),))
    assert block.layer(LayerKind.CONTEXT).state is LayerState.OFF
    assert block.text == ""
    assert block.as_dict()["context"]["sources"] == []


def test_a_path_is_escaped_in_the_context_attribute():
    loaded = load_context([ContextDocument('.AGENTS/a"b.md', "x")])
    assert '<context path=".AGENTS/a&quot;b.md">' in loaded.rendered


def test_the_loader_reads_a_local_folder(tmp_path):
    folder = tmp_path / ".AGENTS"
    folder.mkdir()
    (folder / "glossary.md").write_bytes(b"Zentinel: a WAF tuner\r\n")
    (folder / "overview.md").write_text("Overview", encoding="utf-8")
    (folder / "skip.txt").write_text("no", encoding="utf-8")
    (folder / "sub.md").mkdir()
    loaded = load_context_dir(folder, budget_bytes=1024)
    assert [s.document.name for s in loaded.sources] == ["overview.md", "glossary.md"]
    # Bytes as stored: a CRLF is two bytes, not normalised away.
    assert loaded.sources[1].bytes == len(b"Zentinel: a WAF tuner\r\n")


def test_a_missing_folder_is_an_empty_context(tmp_path):
    loaded = load_context_dir(tmp_path / "nope")
    assert loaded.sources == () and loaded.rendered == "" and loaded.dropped == ()


def test_the_rendering_core_imports_no_django():
    code = (
        "import sys, agentdocs.core; "
        "print([m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# A kept context (`memo`): the service keeps one per set of cached rows.


def scoped_doc(name: str, globs: str, body: str) -> ContextDocument:
    return ContextDocument(path=f".AGENTS/{name}", body=f"---\nglobs: [{globs}]\n---\n{body}")


def test_a_kept_context_renders_what_a_fresh_one_does():
    documents = (
        ContextDocument(path=".AGENTS/overview.md", body="What this is.\n" * 40),
        scoped_doc("api.md", '"api/**"', "API rules.\n"),
        *(ContextDocument(path=f".AGENTS/n{n:03}.md", body="x" * 300) for n in range(200)),
    )
    memo: dict = {}
    for budget, paths in [(4096, ()), (4096, ("api/v1.py",)), (1024, ()), (4096, ())]:
        inputs = MemoryBlockInputs(
            options=RenderOptions(context_budget_bytes=budget),
            agent_candidates=(project_doc(),),
            context_documents=documents,
            paths=paths,
        )
        fresh = compose_memory_block(inputs)
        kept = compose_memory_block(inputs, memo=memo)
        assert kept.text == fresh.text and kept.sha256 == fresh.sha256
        assert kept.as_dict() == fresh.as_dict()
        assert ("API rules." in kept.text) == bool(paths)
    # One entry per budget and set of paths, each composed once.
    assert len([key for key in memo if key[0] == "context"]) == 3
    again = compose_memory_block(
        MemoryBlockInputs(
            options=RenderOptions(context_budget_bytes=1024),
            agent_candidates=(project_doc(),),
            context_documents=documents,
        ),
        memo=memo,
    )
    assert again.context is memo[next(k for k in memo if k[0] == "context" and k[3] == 1024)][0]


def test_a_kept_context_is_never_served_for_other_documents():
    memo: dict = {}
    first = (ContextDocument(path=".AGENTS/overview.md", body="first\n"),)
    second = (ContextDocument(path=".AGENTS/overview.md", body="second\n"),)
    compose_memory_block(MemoryBlockInputs(context_documents=first), memo=memo)
    block = compose_memory_block(MemoryBlockInputs(context_documents=second), memo=memo)
    assert "second" in block.text and "first" not in block.text

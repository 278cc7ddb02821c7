"""The Memory Block service: the reads before the pure core, the read state, the query count."""

from __future__ import annotations

import time
import uuid

import pytest

from agentdocs.core.errors import Enforced, InvalidInput, NotFound
from agentdocs.core.memory_block import ClientDocument, LayerKind, LayerState
from agentdocs.models import Role, Setting
from agentdocs.services import documents as document_service
from agentdocs.services import policy as policy_service
from agentdocs.services import tenancy as tenant_service
from agentdocs.services.memory_block import read_state_key, render_memory_block

# The read state is the caller's: these tests render as one token.
CALLER = "token:1"

pytestmark = pytest.mark.django_db


@pytest.fixture
def process() -> str:
    # A fresh id per test: the read state lives in a cache that outlives tests (Redis).
    return f"process-{uuid.uuid4()}"


@pytest.fixture
def defaults_dir(settings, tmp_path):
    """The bundled default folder, shipped empty; tests fill it."""
    folder = tmp_path / "defaults"
    folder.mkdir()
    settings.AGENTDOCS_DEFAULT_DOCUMENTS_DIR = folder
    return folder


@pytest.fixture
def recipe(tenant, admin):
    def make(name: str = "coder", params: dict | None = None, profiles: dict | None = None):
        return policy_service.recipe_create(
            tenant=tenant, name=name, params=params or {}, profiles=profiles or {}, user=admin
        )

    return make


def preview(project, **kwargs):
    return render_memory_block(project=project, preview=True, **kwargs)


def agent_layer(block):
    return block.layer(LayerKind.AGENT_NOTES)


def delete(document, user):
    return document_service.document_delete(
        document=document, base_version=document.version, user=user
    )


# The cascade, from the database


def test_the_project_document_wins_and_shadows_the_tenant_one(project, vance, make_document):
    make_document(vance, "agent.md", "tenant rules")
    make_document(project, "agent.md", "project rules")
    block = preview(project)
    layer = agent_layer(block)
    assert layer.heading == "## Agent Notes (agent.md)"
    assert "project rules" in block.text and "tenant rules" not in block.text
    assert [(s["level"], s["project"]) for s in layer.extra["shadowed"]] == [("tenant", "_vance")]


def test_without_its_own_document_the_project_inherits_the_tenant_one(
    project, vance, make_document
):
    make_document(vance, "agent.md", "tenant rules")
    block = preview(project)
    assert agent_layer(block).heading == "## Agent Notes (from _vance: agent.md)"
    assert agent_layer(block).version == 1
    assert "tenant rules" in block.text


def test_the_bundled_default_is_the_last_level(project, vance, make_document, defaults_dir):
    (defaults_dir / "agent.md").write_text("default rules\n", encoding="utf-8")
    block = preview(project)
    assert agent_layer(block).heading == "## Agent Notes (system default: agent.md)"
    assert "default rules" in block.text
    make_document(vance, "agent.md", "tenant rules")
    layer = agent_layer(preview(project))
    assert layer.level == "tenant"
    assert [s["level"] for s in layer.extra["shadowed"]] == ["default"]


def test_the_bundled_default_folder_ships_empty(project, settings):
    folder = settings.AGENTDOCS_DEFAULT_DOCUMENTS_DIR
    assert [p.name for p in folder.iterdir() if p.name != ".gitkeep"] == []
    assert agent_layer(preview(project)).state is LayerState.ABSENT


def test_nothing_in_the_cascade_is_absent(project, defaults_dir):
    block = preview(project)
    assert agent_layer(block).state is LayerState.ABSENT
    assert "Agent Notes" not in block.text


def test_a_deleted_document_counts_as_absent_at_its_level(
    project, vance, make_document, admin, defaults_dir
):
    own = make_document(project, "agent.md", "project rules")
    tenant_wide = make_document(vance, "agent.md", "tenant rules")
    delete(own, admin)
    assert agent_layer(preview(project)).level == "tenant"
    delete(tenant_wide, admin)
    assert agent_layer(preview(project)).state is LayerState.ABSENT
    (defaults_dir / "agent.md").write_text("default", encoding="utf-8")
    assert agent_layer(preview(project)).level == "default"


def test_another_tenants_vance_document_is_never_used(project, make_document, other_tenant):
    globex_vance = other_tenant.projects.get(slug="_vance")
    document_service.document_create(
        project=globex_vance,
        path="agent.md",
        body="globex rules",
        user=other_tenant_admin(other_tenant),
    )
    assert agent_layer(preview(project)).state is LayerState.ABSENT


def other_tenant_admin(tenant):
    return tenant.memberships.get(role=Role.ADMIN).user


def test_rendering_inside_vance_itself_is_the_project_level(vance, make_document):
    make_document(vance, "agent.md", "tenant rules")
    layer = agent_layer(preview(vance))
    assert layer.heading == "## Agent Notes (agent.md)"
    assert layer.extra["shadowed"] == []


# Recipes and agentDocument


def test_no_recipe_behaves_as_not_set(project, make_document):
    make_document(project, "agent.md", "rules")
    assert agent_layer(preview(project)).path == "agent.md"


def test_recipe_without_agent_document_uses_agent_md(project, make_document, recipe):
    make_document(project, "agent.md", "rules")
    recipe("coder", {"contextEnabled": True})
    assert agent_layer(preview(project, recipe_name="coder")).state is LayerState.FULL


@pytest.mark.parametrize("value", ["", None])
def test_recipe_agent_document_empty_or_null_is_off(project, make_document, recipe, value):
    make_document(project, "agent.md", "rules")
    recipe("light", {"agentDocument": value})
    block = preview(project, recipe_name="light")
    assert agent_layer(block).state is LayerState.OFF
    assert "rules" not in block.text


def test_recipe_agent_document_path_redirects_through_the_cascade(
    project, vance, make_document, recipe
):
    make_document(project, "agent.md", "plain rules")
    make_document(vance, "notes/team.md", "team rules")
    recipe("team", {"agentDocument": "notes/team.md"})
    block = preview(project, recipe_name="team")
    assert agent_layer(block).heading == "## Agent Notes (from _vance: notes/team.md)"
    assert "team rules" in block.text and "plain rules" not in block.text


def test_unknown_recipe_or_profile_is_not_found(project, recipe):
    recipe("coder", {}, {"cli": {"useClientAgentDoc": True}})
    with pytest.raises(NotFound) as error:
        preview(project, recipe_name="nope")
    assert error.value.field == "recipe"
    with pytest.raises(NotFound) as error:
        preview(project, recipe_name="coder", profile_name="nope")
    assert error.value.field == "profile"
    with pytest.raises(NotFound):
        preview(project, profile_name="cli")


def test_another_tenants_recipe_is_unknown(project, other_tenant):
    policy_service.recipe_create(
        tenant=other_tenant,
        name="theirs",
        params={},
        profiles={},
        user=other_tenant_admin(other_tenant),
    )
    with pytest.raises(NotFound):
        preview(project, recipe_name="theirs")


# Policy


def test_enforced_tenant_setting_refuses_the_project_override(project, tenant, admin):
    # The project's value was set first; the tenant enforced its own afterwards.
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.tone", value="casual", user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="formal", enforced=True, user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.language", value="en", user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.language", value="de", user=admin
    )
    block = preview(project)
    assert block.text == (
        "## Policy (memory.* settings)\n\nmemory.language: de\nmemory.tone: formal\n"
    )
    refused = block.layer(LayerKind.POLICY).extra["refused_overrides"]
    assert [(r["key"], r["project_value"]) for r in refused] == [("memory.tone", "casual")]


def test_a_project_cannot_set_what_its_tenant_enforces(
    project, tenant, admin, other_tenant, outsider
):
    # Another tenant enforcing the same key is no obstacle.
    policy_service.setting_set(
        tenant=other_tenant,
        project=None,
        key="memory.tone",
        value="x",
        enforced=True,
        user=outsider,
    )
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.tone", value="casual", user=admin
    )
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="formal", enforced=True, user=admin
    )
    with pytest.raises(Enforced) as refused:
        policy_service.setting_set(
            tenant=tenant, project=project, key="memory.tone", value="calm", user=admin
        )
    assert refused.value.field == "key" and "formal" in refused.value.detail
    assert Setting.objects.get(project=project, key="memory.tone").value == "casual"


def test_another_projects_settings_do_not_apply(project, tenant, admin):
    other = tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    policy_service.setting_set(
        tenant=tenant, project=other, key="memory.tone", value="casual", user=admin
    )
    assert preview(project).layer(LayerKind.POLICY).state is LayerState.ABSENT


# Client notes


def test_client_document_needs_the_profile_to_opt_in(project, recipe):
    recipe("coder", {}, {"cli": {"useClientAgentDoc": True}, "web": {}})
    client = ClientDocument("CLAUDE.md", "Use the staging box.")
    opted_in = preview(project, recipe_name="coder", profile_name="cli", client_document=client)
    assert "## Agent Notes (from client: CLAUDE.md)\n\nUse the staging box." in opted_in.text
    ignored = preview(project, recipe_name="coder", profile_name="web", client_document=client)
    assert ignored.layer(LayerKind.CLIENT_NOTES).state is LayerState.IGNORED
    assert "staging" not in ignored.text


# Project context


def test_context_is_the_projects_direct_agents_md_children(project, vance, make_document, admin):
    make_document(project, ".AGENTS/zeta.md", "zeta")
    make_document(project, ".AGENTS/overview.md", "overview")
    make_document(project, ".AGENTS/deep/inner.md", "nested")
    make_document(project, ".AGENTS/notes.txt", "plain-text-file")
    make_document(project, ".AGENTSX/other.md", "lookalike")
    make_document(project, ".agents/lower.md", "lowercase-folder")
    gone = make_document(project, ".AGENTS/gone.md", "deleted")
    delete(gone, admin)
    make_document(vance, ".AGENTS/tenant.md", "tenant-wide context is not project context")
    block = preview(project)
    assert [s["path"] for s in block.as_dict()["context"]["sources"]] == [
        ".AGENTS/overview.md",
        ".AGENTS/zeta.md",
    ]
    for absent in (
        "nested",
        "plain-text-file",
        "lookalike",
        "lowercase-folder",
        "deleted",
        "tenant-wide",
    ):
        assert absent not in block.text


def test_a_context_file_named_just_md_is_rendered(project, make_document):
    make_document(project, ".AGENTS/.md", "the-dot-md-file")
    make_document(project, ".AGENTS/overview.md", "overview")
    block = preview(project)
    context = block.as_dict()["context"]
    assert [s["path"] for s in context["sources"]] == [".AGENTS/overview.md", ".AGENTS/.md"]
    assert context["dropped"] == []
    assert "the-dot-md-file" in block.text


def test_context_budget_and_switch_come_from_the_recipe(project, make_document, recipe):
    make_document(project, ".AGENTS/overview.md", "ü" * 500)  # 1000 bytes
    make_document(project, ".AGENTS/more.md", "more")
    recipe("small", {"contextBudgetBytes": 601})
    recipe("none", {"contextEnabled": False})
    context = preview(project, recipe_name="small").as_dict()["context"]
    assert context["budget_bytes"] == 601
    assert context["used_bytes"] == 600
    assert context["sources"][0]["truncated"] is True
    assert [d["path"] for d in context["dropped"]] == [".AGENTS/more.md"]
    block = preview(project, recipe_name="none")
    assert block.layer(LayerKind.CONTEXT).state is LayerState.OFF
    assert "<context" not in block.text


# The read state


def test_dedup_full_stub_edit_full_reset_full(project, make_document, writer, process):
    document = make_document(project, "agent.md", "version one")

    def turn(**kwargs):
        return render_memory_block(project=project, process=process, caller=CALLER, **kwargs)

    first = turn()
    assert agent_layer(first).state is LayerState.FULL and "version one" in first.text
    second = turn()
    assert agent_layer(second).state is LayerState.UNCHANGED
    assert "Agent notes unchanged from an earlier turn" in second.text
    assert "version one" not in second.text
    document_service.document_write(
        document=document, body="version two", base_version=1, user=writer
    )
    after_edit = turn()
    assert agent_layer(after_edit).state is LayerState.FULL and "version two" in after_edit.text
    assert agent_layer(after_edit).version == 2
    assert agent_layer(turn()).state is LayerState.UNCHANGED
    after_reset = turn(reset=True)
    assert agent_layer(after_reset).state is LayerState.FULL
    assert "version two" in after_reset.text
    assert agent_layer(turn()).state is LayerState.UNCHANGED


def _landed(read, landed, timeout: float = 2.0):
    """What ``read`` answers once ``landed`` holds of it (or at the timeout): a read
    state is written without waiting for Redis's answer, on a connection of its own, so
    a read on another connection may come before it lands."""
    deadline = time.monotonic() + timeout
    value = read()
    while not landed(value) and time.monotonic() < deadline:
        time.sleep(0.005)
        value = read()
    return value


def test_a_reset_writes_the_read_state_only_when_it_changes(
    project, make_document, writer, process
):
    from django.core.cache import cache

    document = make_document(project, "agent.md", "version one")
    key = read_state_key(project=project, process=process, caller=CALLER)
    render_memory_block(project=project, process=process, caller=CALLER)
    stored = _landed(lambda: cache.get(key), lambda state: state is not None)
    # Nothing changed since the full text was sent: after the reset the process holds
    # what the state says already, so the state is left as it is (not written again).
    after_reset = render_memory_block(project=project, process=process, caller=CALLER, reset=True)
    assert agent_layer(after_reset).state is LayerState.FULL
    assert cache.get(key) == stored
    document_service.document_write(
        document=document, body="version two", base_version=1, user=writer
    )
    render_memory_block(project=project, process=process, caller=CALLER, reset=True)
    rewritten = _landed(lambda: cache.get(key), lambda state: state != stored)
    assert rewritten["layers"] != stored["layers"]
    assert agent_layer(
        render_memory_block(project=project, process=process, caller=CALLER)
    ).state is (LayerState.UNCHANGED)


def test_processes_have_separate_read_states(project, make_document, process):
    make_document(project, "agent.md", "rules")
    render_memory_block(project=project, process=process, caller=CALLER)
    other = render_memory_block(project=project, process=process + "-other", caller=CALLER)
    assert agent_layer(other).state is LayerState.FULL


def test_a_preview_neither_reads_nor_writes_the_read_state(project, make_document, process):
    make_document(project, "agent.md", "rules")
    assert agent_layer(preview(project)).state is LayerState.FULL
    assert agent_layer(
        render_memory_block(project=project, process=process, caller=CALLER)
    ).state is (LayerState.FULL)
    assert agent_layer(preview(project)).state is LayerState.FULL
    assert agent_layer(
        render_memory_block(project=project, process=process, caller=CALLER)
    ).state is (LayerState.UNCHANGED)


def test_a_process_id_in_another_tenant_never_touches_this_tenants_read_state(
    project, make_document, other_tenant, process
):
    globex_admin = other_tenant_admin(other_tenant)
    globex_web = tenant_service.project_create(
        tenant=other_tenant, slug="web", name="Web", user=globex_admin
    )
    document_service.document_create(
        project=globex_web, path="agent.md", body="rules", user=globex_admin
    )
    make_document(project, "agent.md", "rules")  # the very same body, so the same hash
    render_memory_block(project=globex_web, process=process, caller=CALLER)
    render_memory_block(project=globex_web, process=process, caller=CALLER)
    acme = render_memory_block(project=project, process=process, caller=CALLER)
    assert agent_layer(acme).state is LayerState.FULL
    assert read_state_key(project=project, process=process, caller=CALLER) != read_state_key(
        project=globex_web, process=process, caller=CALLER
    )
    assert str(project.tenant_id) in read_state_key(project=project, process=process, caller=CALLER)


def test_the_read_state_expires_after_its_time_to_live(project, make_document, settings, process):
    settings.AGENTDOCS_READ_STATE_TTL_SECONDS = 1
    make_document(project, "agent.md", "rules")
    render_memory_block(project=project, process=process, caller=CALLER)
    assert agent_layer(
        render_memory_block(project=project, process=process, caller=CALLER)
    ).state is (LayerState.UNCHANGED)
    from django.core.cache import cache

    key = read_state_key(project=project, process=process, caller=CALLER)
    assert _landed(lambda: cache.get(key), lambda state: state is None, timeout=2) is None
    assert agent_layer(
        render_memory_block(project=project, process=process, caller=CALLER)
    ).state is (LayerState.FULL)


def test_an_active_process_keeps_its_read_state_past_the_time_to_live(
    project, make_document, settings, process
):
    settings.AGENTDOCS_READ_STATE_TTL_SECONDS = 2
    make_document(project, "agent.md", "rules")
    render_memory_block(project=project, process=process, caller=CALLER)  # stored, lives until t=2
    time.sleep(1.3)
    # Past half its life, an unchanged state is stored again, so it lives on.
    render_memory_block(project=project, process=process, caller=CALLER)
    time.sleep(1.3)
    assert agent_layer(
        render_memory_block(project=project, process=process, caller=CALLER)
    ).state is (LayerState.UNCHANGED)


def test_a_turn_needs_a_process_id(project):
    for bad in (None, "", 42, "x" * 201, "two\nlines"):
        with pytest.raises(InvalidInput) as error:
            render_memory_block(project=project, process=bad)
        assert error.value.field == "process"


def test_a_client_document_object_is_accepted_as_is(project, recipe, process):
    recipe("coder", {}, {"cli": {"useClientAgentDoc": True}})
    block = render_memory_block(
        project=project,
        process=process,
        caller=CALLER,
        recipe_name="coder",
        profile_name="cli",
        client_document=ClientDocument("AGENT.md", "client"),
    )
    assert block.layer(LayerKind.CLIENT_NOTES).state is LayerState.FULL


# The query count


def _fill(project, make_document, count: int) -> None:
    for index in range(count):
        make_document(project, f".AGENTS/doc-{index:02d}.md", f"context {index}\n" * 20)


@pytest.mark.parametrize("recipe_name", [None, "coder"])
def test_a_render_runs_the_same_queries_for_1_and_50_context_documents(
    project, vance, make_document, tenant, admin, recipe, django_assert_num_queries, recipe_name
):
    recipe("coder", {"contextBudgetBytes": 1024 * 1024}, {"cli": {"useClientAgentDoc": True}})
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="formal", user=admin
    )
    make_document(vance, "agent.md", "tenant rules")
    make_document(project, "agent.md", "project rules")
    expected = 1  # the recipe, the settings and the documents, together

    _fill(project, make_document, 1)
    with django_assert_num_queries(expected):
        one = render_memory_block(
            project=project, process=f"p-{uuid.uuid4()}", caller=CALLER, recipe_name=recipe_name
        )
    assert len(one.context.sources) == 1

    other = tenant_service.project_create(tenant=tenant, slug="big", name="Big", user=admin)
    make_document(other, "agent.md", "rules")
    _fill(other, make_document, 50)
    with django_assert_num_queries(expected):
        fifty = render_memory_block(
            project=other, process=f"p-{uuid.uuid4()}", caller=CALLER, recipe_name=recipe_name
        )
    assert len(fifty.context.sources) == 50


@pytest.mark.parametrize("process", ["", "   ", "two\nlines", "x" * 201, 42])
def test_a_process_id_is_one_non_blank_line(project, process):
    with pytest.raises(InvalidInput) as error:
        render_memory_block(project=project, process=process, caller=CALLER)
    assert error.value.field == "process"

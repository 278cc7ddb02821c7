"""The render's reads kept in the shared cache: never a turn behind a write.

These tests switch the cache on whatever backend the run has (the local-memory
cache in-process, Redis in CI): the rule under test is that every write path
that can change a render retires the cached rows.
"""

from __future__ import annotations

import pytest

from agentdocs.core.memory_block import LayerKind
from agentdocs.services import documents as document_service
from agentdocs.services import memory_block as memory_block_service
from agentdocs.services import policy as policy_service
from agentdocs.services import render_cache
from agentdocs.services import tenants as tenant_service

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def render_cache_on(settings):
    settings.AGENTDOCS_RENDER_CACHE = True


def render(project, **kwargs):
    return memory_block_service.render_memory_block(project=project, preview=True, **kwargs)


def layer(block, kind: LayerKind):
    return next(layer for layer in block.layers if layer.kind == kind)


def test_a_warm_render_reads_nothing_from_the_database(
    project, make_document, django_assert_num_queries
):
    make_document(project, "agent.md", "# Rules\n")
    for n in range(50):
        make_document(project, f".AGENTS/doc{n:02}.md", f"context {n}\n")
    with django_assert_num_queries(1):
        cold = render(project)
    with django_assert_num_queries(0):
        warm = render(project)
    assert warm.text == cold.text
    assert len(warm.context.sources) == 50


@pytest.mark.parametrize("level", ["project", "tenant"])
def test_an_agent_md_write_is_in_the_next_render(
    project, vance, make_document, writer, admin, level
):
    target = project if level == "project" else vance
    document = make_document(target, "agent.md", "old rule\n")
    assert "old rule" in render(project).text
    document_service.document_write(
        document=document, body="new rule\n", base_version=1, user=admin
    )
    text = render(project).text
    assert "new rule" in text and "old rule" not in text


def test_create_delete_and_revert_are_in_the_next_render(project, make_document, writer):
    assert "<context" not in render(project).text
    document = make_document(project, ".AGENTS/overview.md", "first\n")
    assert "first" in render(project).text
    document_service.document_delete(document=document, base_version=1, user=writer)
    assert "first" not in render(project).text
    document_service.document_revert(document=document, version=1, user=writer)
    assert "first" in render(project).text


def test_settings_writes_are_in_the_next_render(project, tenant, admin):
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="terse", user=admin
    )
    assert "memory.tone: terse" in render(project).text
    policy_service.setting_set(
        tenant=tenant, project=project, key="memory.tone", value="warm", user=admin
    )
    assert "memory.tone: warm" in render(project).text
    policy_service.setting_set(
        tenant=tenant, project=None, key="memory.tone", value="terse", enforced=True, user=admin
    )
    assert "memory.tone: terse" in render(project).text
    policy_service.setting_delete(tenant=tenant, project=None, key="memory.tone", user=admin)
    assert "memory.tone: warm" in render(project).text


def test_recipe_writes_are_in_the_next_render(project, tenant, admin, make_document):
    make_document(project, "agent.md", "rules\n")
    recipe = policy_service.recipe_create(
        tenant=tenant, name="coder", params={}, profiles={}, user=admin
    )
    assert layer(render(project, recipe_name="coder"), LayerKind.AGENT_NOTES).state == "full"
    policy_service.recipe_update(
        recipe=recipe, params={"agentDocument": ""}, profiles={}, user=admin
    )
    assert layer(render(project, recipe_name="coder"), LayerKind.AGENT_NOTES).state == "off"
    policy_service.recipe_delete(recipe=recipe, user=admin)
    with pytest.raises(Exception, match="No recipe"):
        render(project, recipe_name="coder")


def test_rows_read_before_a_write_are_never_served_after_it(project, make_document, admin):
    document = make_document(project, "agent.md", "before\n")

    def read_then_someone_writes():
        rows = memory_block_service._render_rows(project=project, recipe_name=None)
        document_service.document_write(
            document=document, body="after\n", base_version=1, user=admin
        )
        return rows

    render_cache.cached_rows(
        tenant_id=project.tenant_id,
        project_id=project.pk,
        recipe=None,
        read=read_then_someone_writes,
    )
    assert "after" in render(project).text


def test_a_lost_generation_only_costs_a_database_read(
    project, make_document, django_assert_num_queries
):
    from django.core.cache import cache

    make_document(project, "agent.md", "rules\n")
    render(project)
    cache.delete(render_cache.GENERATION_KEY.format(tenant_id=project.tenant_id))
    with django_assert_num_queries(1):
        assert "rules" in render(project).text


def test_cached_rows_belong_to_one_tenant_and_project(
    project, make_document, other_tenant, outsider
):
    foreign = tenant_service.project_create(
        tenant=other_tenant, slug="web", name="Web", user=outsider
    )
    make_document(project, "agent.md", "acme rules\n")
    document_service.document_create(
        project=foreign, path="agent.md", body="globex rules\n", user=outsider
    )
    assert "acme rules" in render(project).text
    assert "globex rules" in render(foreign).text
    assert "acme rules" in render(project).text


def test_with_the_cache_off_every_render_reads_the_database(
    project, make_document, settings, django_assert_num_queries
):
    settings.AGENTDOCS_RENDER_CACHE = False
    make_document(project, "agent.md", "rules\n")
    render(project)
    with django_assert_num_queries(1):
        render(project)


def test_a_warm_render_through_the_api_makes_one_database_round_trip(
    api, reader, project, make_document, django_assert_num_queries
):
    # The whole hot path: the token with the caller's access in one query, then no SQL
    # at all while the cached rows are current. Ping makes one query too.
    make_document(project, "agent.md", "# Rules\n")
    make_document(project, ".AGENTS/overview.md", "What this is.\n")
    client = api(reader)
    url = "/api/v1/tenants/acme/projects/web/memory-block/"
    with django_assert_num_queries(2):
        first = client.post(url, {"process": "turns"}, format="json")
    with django_assert_num_queries(1):
        second = client.post(url, {"process": "turns"}, format="json")
    assert first.status_code == second.status_code == 200
    states = {layer["kind"]: layer["state"] for layer in second.json()["layers"]}
    assert states["agent_notes"] == states["context"] == "unchanged"

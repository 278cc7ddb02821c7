"""The render's reads kept in the shared cache: never a turn behind a write.

These tests switch the cache on whatever backend the run has (the local-memory
cache in-process, Redis in CI): the rule under test is that every write path
that can change a render retires the cached rows.
"""

from __future__ import annotations

import pytest

from agentdocs.core.memory_block import LayerKind
from agentdocs.selectors import render_cache as render_cache_reads
from agentdocs.selectors.memory_block import memory_block_rows
from agentdocs.services import documents as document_service
from agentdocs.services import memory_block as memory_block_service
from agentdocs.services import policy as policy_service
from agentdocs.services import render_cache
from agentdocs.services import tenancy as tenant_service

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
        rows = memory_block_rows(project=project, recipe_name=None)
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
    cache.delete(render_cache_reads.GENERATION_KEY.format(tenant_id=project.tenant_id))
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
    api, reader, project, make_document, signing_key, django_assert_num_queries
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


# Each process's own copy of the rows (`_LOCAL`): used only while the generation in the
# shared cache is the one the rows were read under.


def count_redis_reads_of(key: str):
    """How many times a cache read asked for ``key`` (get or get_many), by wrapping the
    cache object this test uses: the rows are not fetched while the local copy is current."""
    from django.core.cache import cache

    asked: list[str] = []
    original_get_many, original_get = cache.get_many, cache.get

    def get_many(keys, *args, **kwargs):
        asked.extend(keys)
        return original_get_many(keys, *args, **kwargs)

    def get(k, *args, **kwargs):
        asked.append(k)
        return original_get(k, *args, **kwargs)

    return asked, get_many, get


def test_a_process_keeps_its_rows_and_still_sees_a_write_from_another(
    project, make_document, django_assert_num_queries
):
    from django.core.cache import cache

    make_document(project, "agent.md", "first rule\n")
    render_cache_reads.local_clear()
    assert "first rule" in render(project).text  # read, stored, kept in this process
    rows_key = render_cache_reads.render_rows_key(
        tenant_id=project.tenant_id, project_id=project.pk, recipe=None
    )
    # Another process writes: its new rows and generation reach this one only through
    # the shared cache, which is all this process may trust.
    generation_key = render_cache_reads.GENERATION_KEY.format(tenant_id=project.tenant_id)
    cache.set(generation_key, "written-elsewhere", None)
    changed = memory_block_rows(project=project, recipe_name=None)
    changed = type(changed)(
        recipe=changed.recipe,
        settings=changed.settings,
        documents=tuple(
            (pid, path, "second rule\n" if path == "agent.md" else body, version, sha, labelled)
            for pid, path, body, version, sha, labelled in changed.documents
        ),
    )
    cache.set(rows_key, ("written-elsewhere", changed), None)
    with django_assert_num_queries(0):
        text = render(project).text
    assert "second rule" in text and "first rule" not in text


def test_rows_cached_by_other_code_are_never_read(project, make_document):
    """The cache outlives a deploy (Redis, the disk cache): rows are keyed by the code's
    stamp, so a deploy that changes their shape never unpacks an older deploy's rows."""
    from django.core.cache import cache

    make_document(project, "agent.md", "rules\n")
    key = render_cache_reads.render_rows_key(
        tenant_id=project.tenant_id, project_id=project.pk, recipe=None
    )
    assert render_cache_reads.build_stamp() in key
    older = key.replace(render_cache_reads.build_stamp(), "0" * 16)
    generation = cache.get(render_cache_reads.GENERATION_KEY.format(tenant_id=project.tenant_id))
    cache.set(older, (generation, ("rows", "of", "another", "shape")), None)
    render_cache_reads.local_clear()
    assert "rules" in render(project).text


def test_while_the_generation_holds_the_rows_are_not_fetched_again(project, make_document):
    make_document(project, "agent.md", "rules\n")
    for n in range(20):
        make_document(project, f".AGENTS/doc{n:02}.md", f"context {n}\n")
    render_cache_reads.local_clear()
    first = render(project)
    rows_key = render_cache_reads.render_rows_key(
        tenant_id=project.tenant_id, project_id=project.pk, recipe=None
    )
    from django.core.cache import cache

    asked, get_many, get = count_redis_reads_of(rows_key)
    cache.get_many, cache.get = get_many, get
    try:
        again = render(project)
    finally:
        del cache.get_many, cache.get
    assert again.text == first.text
    assert rows_key not in asked
    # The composed context is kept with the rows: the same objects, not rebuilt.
    assert again.context is first.context


def test_the_local_copies_are_bounded(project, tenant, admin, make_document, monkeypatch):
    monkeypatch.setattr(render_cache_reads, "LOCAL_MAX_ENTRIES", 1)
    other_project = tenant_service.project_create(tenant=tenant, slug="api", name="API", user=admin)
    make_document(project, "agent.md", "acme web\n")
    make_document(other_project, "agent.md", "acme api\n")
    render_cache_reads.local_clear()
    assert "acme web" in render(project).text
    assert "acme api" in render(other_project).text
    assert len(render_cache_reads.LOCAL) == 1
    assert "acme web" in render(project).text  # read again from the shared cache


def test_rows_too_large_for_a_local_copy_are_still_rendered(project, make_document, monkeypatch):
    monkeypatch.setattr(render_cache_reads, "LOCAL_MAX_BYTES", 64)
    make_document(project, "agent.md", "a rule long enough to pass the bound " * 4 + "\n")
    render_cache_reads.local_clear()
    first = render(project).text
    assert render_cache_reads.LOCAL == {}
    assert render(project).text == first

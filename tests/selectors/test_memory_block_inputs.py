"""What a render reads, read by a selector (`selectors.memory_block.memory_block_inputs`,
for exports, repository states and bindings): the rows a render left in the shared
cache when they are current, never a write to that cache, and never a turn behind a
write."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from agentdocs.core.memory_block import compose_memory_block
from agentdocs.selectors import render_cache as render_cache_reads
from agentdocs.selectors.memory_block import memory_block_inputs
from agentdocs.services import documents as document_service
from agentdocs.services import memory_block as memory_block_service

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def render_cache_on(settings):
    settings.AGENTDOCS_RENDER_CACHE = True
    render_cache_reads.local_clear()


def rows_key(project) -> str:
    return render_cache_reads.render_rows_key(
        tenant_id=project.tenant_id, project_id=project.pk, recipe=None
    )


def render_text(project) -> str:
    return memory_block_service.render_memory_block(project=project, preview=True).text


def test_a_read_leaves_the_shared_cache_as_it_was(project, make_document):
    make_document(project, "agent.md", "# Rules\n")  # a write: the tenant has a generation
    assert cache.get(rows_key(project)) is None
    inputs = memory_block_inputs(project=project)
    assert cache.get(rows_key(project)) is None  # read from the database, stored nowhere shared
    render_cache_reads.local_clear()  # a render in another process fills it
    assert compose_memory_block(inputs).text == render_text(project)
    assert cache.get(rows_key(project)) is not None


def test_rows_a_render_cached_are_read_without_a_query(
    project, make_document, django_assert_num_queries
):
    make_document(project, "agent.md", "# Rules\n")
    text = render_text(project)
    render_cache_reads.local_clear()  # another process: only the shared cache holds them
    with django_assert_num_queries(0):
        inputs = memory_block_inputs(project=project)
    assert compose_memory_block(inputs).text == text


def test_a_read_is_kept_in_this_process_until_the_next_write(
    project, make_document, admin, django_assert_num_queries
):
    document = make_document(project, "agent.md", "old rule\n")
    with django_assert_num_queries(1):
        memory_block_inputs(project=project)
    with django_assert_num_queries(0):
        kept = memory_block_inputs(project=project)
    assert "old rule" in compose_memory_block(kept).text
    document_service.document_write(
        document=document, body="new rule\n", base_version=1, user=admin
    )
    text = compose_memory_block(memory_block_inputs(project=project)).text
    assert "new rule" in text and "old rule" not in text
    assert cache.get(rows_key(project)) is None


def test_without_a_generation_nothing_cached_is_trusted(
    project, make_document, django_assert_num_queries
):
    make_document(project, "agent.md", "# Rules\n")
    render_text(project)
    cache.delete(render_cache_reads.GENERATION_KEY.format(tenant_id=project.tenant_id))
    render_cache_reads.local_clear()
    with django_assert_num_queries(1):
        memory_block_inputs(project=project)
    assert cache.get(render_cache_reads.GENERATION_KEY.format(tenant_id=project.tenant_id)) is None

"""The rate limit counted in the render's own cache round trip keeps the limit's
semantics: a fixed window per scope and caller, exactly the limit allowed however
the requests interleave, and a refused render reads nothing."""

from __future__ import annotations

import threading

import pytest
from django.core.cache import cache, caches
from django.db import connection, connections
from rest_framework.test import APIClient

from agentdocs import ratelimit
from agentdocs.cache import RedisCache, get_many_and_counts
from agentdocs.core.errors import RateLimited
from agentdocs.models import ApiToken
from agentdocs.services.memory_block import caller_of
from tests.conftest import api_token_key, need_service

pytestmark = pytest.mark.django_db

URL = "/api/v1/tenants/acme/projects/web/memory-block/"


@pytest.fixture(params=[False, True], ids=["cache off", "render cache on"])
def render_cache(request, settings):
    settings.AGENTDOCS_RENDER_CACHE = request.param


def _client(user) -> tuple[APIClient, str]:
    key = api_token_key(user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    token = ApiToken.objects.filter(user=user).latest("pk")
    return client, caller_of(user_id=user.pk, token_id=token.pk)


def test_the_counter_starts_at_one_and_comes_back_with_the_keys():
    cache.set("a", {"x": 1})
    found, counts = get_many_and_counts(["a", "b"], counters=[("count", 30)])
    assert found == {"a": {"x": 1}} and counts == [1]
    assert get_many_and_counts([], counters=[("count", 30)]) == ({}, [2])
    assert get_many_and_counts(["a"], counters=[]) == ({"a": {"x": 1}}, [])
    assert cache.get("count") == 2  # the cache API reads the same counter
    if isinstance(caches["default"], RedisCache):  # `cache` is a proxy, never the backend
        client = cache.client.get_client(write=True)
        assert 0 < client.ttl(cache.make_and_validate_key("count")) <= 30


def test_renders_past_the_limit_are_refused_and_read_nothing(
    reader, project, make_document, settings, render_cache, django_assert_num_queries
):
    settings.AGENTDOCS_RATE_LIMITS = {"render": "2/min"}
    make_document(project, "agent.md", "# Rules\n")
    client, _ = _client(reader)
    for _ in range(2):
        assert client.post(URL, {"process": "p"}, format="json").status_code == 200
    with django_assert_num_queries(1):  # the token with the caller's access, nothing else
        refused = client.post(URL, {"process": "p"}, format="json")
    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 60


def test_a_refused_input_is_not_counted(reader, project, settings, render_cache):
    settings.AGENTDOCS_RATE_LIMITS = {"render": "1/min"}
    client, _ = _client(reader)
    assert client.post(URL, {"process": ""}, format="json").status_code == 400
    assert client.post(URL, {"process": "p"}, format="json").status_code == 200
    assert client.post(URL, {"process": "p"}, format="json").status_code == 429


def test_the_render_and_the_plain_check_share_one_counter(reader, project, settings, render_cache):
    settings.AGENTDOCS_RATE_LIMITS = {"render": "3/min"}
    client, caller = _client(reader)
    ratelimit.check("render", caller)
    ratelimit.check("render", caller)
    assert client.post(URL, {"process": "p"}, format="json").status_code == 200
    with pytest.raises(RateLimited):
        ratelimit.check("render", caller)
    assert client.post(URL, {"process": "p"}, format="json").status_code == 429


@pytest.fixture
def postgres(transactional_db):
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "concurrent renders need concurrent connections; set DATABASE_URL",
    )


def test_concurrent_renders_get_exactly_the_limit(postgres, reader, project, settings):
    settings.AGENTDOCS_RENDER_CACHE = True
    settings.AGENTDOCS_RATE_LIMITS = {"render": "10/min"}
    client, _ = _client(reader)
    key = client._credentials["HTTP_AUTHORIZATION"]
    barrier = threading.Barrier(6)
    statuses: list[int] = []

    def run(n: int) -> None:
        own = APIClient()
        own.credentials(HTTP_AUTHORIZATION=key)
        try:
            barrier.wait(timeout=10)
            for _ in range(4):
                statuses.append(own.post(URL, {"process": f"p{n}"}, format="json").status_code)
        finally:
            connections.close_all()

    # The limit's clock stands still (tests/conftest.py): every request counts in one
    # window of a minute, wherever in the minute the run falls.
    threads = [threading.Thread(target=run, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(statuses) == 24 and set(statuses) == {200, 429}
    assert statuses.count(200) == 10

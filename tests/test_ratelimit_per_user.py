"""Limits per person (issue 23, finding 3): renders, binds and previews count per user
across all their tokens and their session, above the per-token limit, so fresh tokens
buy no more; a render still counts both in its one cache round trip and asks the
database nothing more."""

from __future__ import annotations

import pytest
from django.core.cache import cache, caches
from django.db import connection
from django.test.utils import CaptureQueriesContext
from redis.connection import Connection
from rest_framework.test import APIClient

from agentdocs import cache as cache_module
from agentdocs import ratelimit
from agentdocs.cache import RedisCache, get_many_and_counts
from agentdocs.core.errors import RateLimited
from tests.conftest import api_token_key, need_service

pytestmark = pytest.mark.django_db

RENDER = "/api/v1/tenants/acme/projects/web/memory-block/"
BIND = "/api/v1/tenants/acme/projects/web/bindings/"
MANIFEST = {"context": [], "local": []}


@pytest.fixture(params=[False, True], ids=["cache off", "render cache on"])
def render_cache(request, settings):
    settings.AGENTDOCS_RENDER_CACHE = request.param


def token(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token_key(user)}")
    return client


def session(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def render(client: APIClient, process: str = "p") -> int:
    return client.post(RENDER, {"process": process}, format="json").status_code


def bind(client: APIClient) -> int:
    return client.post(BIND, {"process": "p", "manifest": MANIFEST}, format="json").status_code


def test_counters_come_back_in_order_each_with_its_own_expiry():
    cache.set("a", 1)
    found, counts = get_many_and_counts(["a", "b"], counters=[("one", 30), ("two", 90)])
    assert found == {"a": 1} and counts == [1, 1]
    assert get_many_and_counts([], counters=[("one", 30)]) == ({}, [2])
    assert get_many_and_counts(["a"], counters=[]) == ({"a": 1}, [])
    assert (cache.get("one"), cache.get("two")) == (2, 1)
    if isinstance(caches["default"], RedisCache):
        client = cache.client.get_client(write=True)
        assert 0 < client.ttl(cache.make_and_validate_key("one")) <= 30
        assert 30 < client.ttl(cache.make_and_validate_key("two")) <= 90


def test_three_tokens_of_one_person_share_the_per_person_render_limit(
    reader, project, settings, render_cache
):
    settings.AGENTDOCS_RATE_LIMITS = {"render": "3/min", "render_user": "5/min"}
    first, second, third = token(reader), token(reader), token(reader)
    assert [render(first), render(first), render(second), render(second), render(third)] == [
        200
    ] * 5
    refused = third.post(RENDER, {"process": "p"}, format="json")
    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert render(token(reader)) == 429  # a fresh token buys nothing


def test_the_per_token_limit_stays_beneath_the_per_person_one(reader, project, settings):
    settings.AGENTDOCS_RATE_LIMITS = {"render": "2/min", "render_user": "100/min"}
    client = token(reader)
    assert [render(client) for _ in range(3)] == [200, 200, 429]
    assert render(token(reader)) == 200


def test_the_session_and_a_token_of_one_person_share_the_count(
    reader, writer, project, settings, render_cache
):
    settings.AGENTDOCS_RATE_LIMITS = {"render_user": "2/min"}
    assert render(session(reader)) == 200
    assert render(token(reader)) == 200
    assert render(session(reader)) == 429
    assert render(token(reader)) == 429
    assert render(session(writer)) == 200  # another person counts for themselves


def test_the_outsider_is_refused_before_anything_is_counted(
    reader, outsider, other_tenant, project, settings
):
    settings.AGENTDOCS_RATE_LIMITS = {"render_user": "1/min"}
    outsiders = token(outsider)
    assert render(outsiders) == 404
    assert render(outsiders) == 404
    assert render(token(reader)) == 200


def test_binds_are_limited_per_person_across_tokens(reader, project, settings):
    settings.AGENTDOCS_RATE_LIMITS = {"bind": "2/min", "bind_user": "3/min"}
    first, second = token(reader), token(reader)
    assert [bind(first), bind(first), bind(second)] == [201, 201, 201]
    refused = second.post(BIND, {"process": "p", "manifest": MANIFEST}, format="json")
    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
    assert "Retry-After" in refused


def test_previews_are_limited_per_person_in_the_api_and_the_page(
    reader, project, settings, render_cache
):
    settings.AGENTDOCS_RATE_LIMITS = {"preview_user": "2/min"}
    assert token(reader).get(RENDER).status_code == 200
    assert token(reader).get(RENDER).status_code == 200
    refused = token(reader).get(RENDER)
    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
    page = session(reader).get("/t/acme/web/memory-block/")
    assert page.status_code == 429 and "Retry-After" in page


def test_the_refusal_lasts_until_every_limit_allows_again():
    limits = ratelimit.Windows(
        (
            ratelimit.Window(counter="a", requests=1, period=60, window=0, now=30.0),
            ratelimit.Window(counter="b", requests=1, period=3600, window=0, now=30.0),
        )
    )
    limits.check([1, 1])
    with pytest.raises(RateLimited) as refused:
        limits.check([2, 2])
    assert refused.value.retry_after == 3570


def _render_queries(client: APIClient, process: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert render(client, process) == 200
    return len(queries)


def test_both_limits_cost_the_render_no_sql_query(reader, project, settings, render_cache):
    client = token(reader)
    render(client, "warm")
    settings.AGENTDOCS_RATE_LIMITS = {}
    unlimited = _render_queries(client, "a")
    settings.AGENTDOCS_RATE_LIMITS = {"render": "600/min", "render_user": "1200/min"}
    limited = _render_queries(client, "b")
    assert limited == unlimited


@pytest.fixture
def redis_only():
    need_service(
        "Redis",
        isinstance(caches["default"], RedisCache),
        "the render's one round trip is Redis's pipeline; set REDIS_URL",
    )


@pytest.fixture
def round_trips(monkeypatch):
    """How many times anything was sent to Redis and waited for (the unanswered
    connection of the read state is not waited for, so it is left out)."""
    sent: list[int] = []
    original = Connection.send_packed_command

    def counting(self, command, check_health=True):
        if self is not cache_module._unanswered.connection:
            sent.append(1)
        return original(self, command, check_health)

    monkeypatch.setattr(Connection, "send_packed_command", counting)
    return sent


def test_on_redis_a_render_counts_both_limits_in_one_round_trip(
    redis_only, reader, project, settings, render_cache, round_trips
):
    settings.AGENTDOCS_RATE_LIMITS = {"render": "600/min", "render_user": "1200/min"}
    client = token(reader)
    render(client, "p")
    render(client, "p")  # the rows and the read state are in place
    round_trips.clear()
    assert render(client, "p") == 200
    assert len(round_trips) == 1
    user_counter = ratelimit.window("render_user", ratelimit.user_key(reader.pk))
    assert user_counter is not None and cache.get(user_counter.counter) == 3

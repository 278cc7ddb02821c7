"""Two app servers on one PostgreSQL and one Redis behave as one deployment.

Two gunicorn servers (two sync workers each, production settings) on different ports
share the test database and the test's Redis, as instances behind a load balancer
would. Across them: a write on one is in the next render on the other, an agent
process's read state follows it from one to the other, a person's and a token's
render limits count requests to both, and the render cache one server filled is
replaced by a write on the other.

The cast is written to the test database once for the module (committed, as the
servers read it) and the database is emptied again afterwards, as a transactional
test leaves it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection

from agentdocs.models import Project
from agentdocs.selectors import render_cache as render_cache_reads
from tests.app_servers import AGENT_NOTES, AppServer, Cast, app_environment, layer_states, seed
from tests.conftest import empty_tables, need_service

# `django_db` has the test database made (pytest-django makes only the ones tests ask
# for); the tests themselves only speak HTTP.
pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db]

# Per token and per person, in a window of an hour.
RENDER_LIMIT = 8
RENDER_USER_LIMIT = 12


def _redis_ping(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{db['USER']}{password}@{host}:{port}/{db['NAME']}"


@pytest.fixture(scope="module")
def servers(
    django_db_setup, django_db_blocker, tmp_path_factory
) -> Iterator[tuple[AppServer, AppServer, Cast]]:
    need_service(
        "PostgreSQL",
        connection.vendor == "postgresql",
        "two app servers share one database; set DATABASE_URL to PostgreSQL",
    )
    need_service(
        "Redis",
        bool(settings.REDIS_URL) and _redis_ping(settings.REDIS_URL),
        "two app servers share one cache; set REDIS_URL to a running Redis",
    )
    folder = tmp_path_factory.mktemp("scaling-out")
    with django_db_blocker.unblock():
        cast = seed()
        env = app_environment(
            folder,
            DATABASE_URL=_database_url(),
            REDIS_URL=settings.REDIS_URL,
            CACHE_KEY_PREFIX=settings.CACHES["default"].get("KEY_PREFIX", "agentdocs"),
            CELERY_BROKER_URL=settings.CELERY_BROKER_URL,
            AGENTDOCS_RENDER_CACHE="1",
            AGENTDOCS_RATE_LIMIT_RENDER=f"{RENDER_LIMIT}/hour",
            AGENTDOCS_RATE_LIMIT_RENDER_PER_USER=f"{RENDER_USER_LIMIT}/hour",
        )
        first = AppServer(env, folder, name="first")
        second = AppServer(env, folder, name="second")
        try:
            first.start(workers=2)
            second.start(workers=2)
            yield first, second, cast
        finally:
            first.stop()
            second.stop()
            connection.close()
            empty_tables()  # as a transactional test ends


def _render(server: AppServer, cast: Cast, token: str, process: str):
    return server.call("POST", cast.memory_block, cast.tokens[token], {"process": process})


def _write_agent_notes(server: AppServer, cast: Cast, body: str) -> None:
    current = server.call("GET", cast.document("agent.md"), cast.tokens["writer"])
    assert current.status_code == 200, current.text
    written = server.call(
        "PUT",
        cast.document("agent.md"),
        cast.tokens["writer"],
        {"body": body, "version": current.json()["version"], "reason": "scaling out"},
    )
    assert written.status_code == 200, written.text


def _away_from_the_hours_edge(margin: float = 60) -> None:
    left = 3600 - time.time() % 3600
    if left < margin:
        time.sleep(left + 1)


def test_the_two_servers_are_separate_processes_on_different_ports(servers):
    first, second, cast = servers
    assert first.port != second.port
    _render(first, cast, "turns", "ports-1")
    _render(second, cast, "turns", "ports-2")
    pids = set(first.served_by(cast.memory_block, at_least=1))
    assert pids and pids.isdisjoint(second.served_by(cast.memory_block, at_least=1))


def test_a_write_on_one_server_is_in_the_next_render_on_the_other(servers):
    first, second, cast = servers
    # Both servers have rendered (and cached) the current text first.
    assert AGENT_NOTES in _render(first, cast, "cached", "write-1").json()["text"]
    assert AGENT_NOTES in _render(second, cast, "cached", "write-2").json()["text"]

    _write_agent_notes(first, cast, "# House rules\n- written on the first server\n")
    on_second = _render(second, cast, "cached", "write-3").json()["text"]
    _write_agent_notes(second, cast, "# House rules\n- written on the second server\n")
    on_first = _render(first, cast, "cached", "write-4").json()["text"]

    assert "- written on the first server" in on_second
    assert "- keep changes small" not in on_second
    assert "- written on the second server" in on_first
    assert "- written on the first server" not in on_first


def test_the_render_cache_filled_on_one_server_is_replaced_by_a_write_on_the_other(servers):
    first, second, cast = servers
    project = Project.objects.get(tenant__slug=cast.tenant, slug=cast.project)
    generation_key = render_cache_reads.GENERATION_KEY.format(tenant_id=project.tenant_id)
    rows_key = render_cache_reads.render_rows_key(
        tenant_id=project.tenant_id, project_id=project.pk, recipe=None
    )
    # Rendered twice on the first: the second render is the render cache's.
    for process in ("cache-1", "cache-2"):
        _render(first, cast, "cached", process)
    generation, rows = cache.get(generation_key), cache.get(rows_key)
    assert generation is not None and rows[0] == generation  # in the shared Redis

    _write_agent_notes(second, cast, "# House rules\n- replaced from the second server\n")
    assert cache.get(generation_key) not in (None, generation)
    text = _render(first, cast, "cached", "cache-3").json()["text"]

    assert "- replaced from the second server" in text


def test_an_agent_process_is_sent_stubs_on_its_second_turn_at_the_other_server(servers):
    first, second, cast = servers
    on_first = layer_states(_render(first, cast, "turns", "claude-session-7"))
    on_second = layer_states(_render(second, cast, "turns", "claude-session-7"))
    back_on_first = layer_states(_render(first, cast, "turns", "claude-session-7"))

    assert set(on_first) >= {"agent_notes", "context"}
    assert set(on_first.values()) == {"full"}
    assert on_second == back_on_first == dict.fromkeys(on_first, "unchanged")


def test_a_tokens_render_limit_counts_requests_to_both_servers(servers):
    first, second, cast = servers
    _away_from_the_hours_edge()
    statuses = [
        _render(server, cast, "limited", f"l{n}").status_code
        for n, server in zip(range(RENDER_LIMIT), [first, second] * RENDER_LIMIT, strict=False)
    ]
    refused_on_second = _render(second, cast, "limited", "one-more")
    refused_on_first = _render(first, cast, "limited", "and-another")

    assert statuses == [200] * RENDER_LIMIT
    assert refused_on_second.status_code == refused_on_first.status_code == 429
    assert refused_on_first.json()["error"] == "rate_limited"


def test_a_persons_render_limit_counts_their_tokens_on_both_servers(servers):
    first, second, cast = servers
    _away_from_the_hours_edge()
    half = RENDER_USER_LIMIT // 2

    statuses = [_render(first, cast, "person-a", f"a{n}").status_code for n in range(half)]
    statuses += [_render(second, cast, "person-b", f"b{n}").status_code for n in range(half)]
    refused = _render(first, cast, "person-a", "one-more")

    assert statuses == [200] * RENDER_USER_LIMIT  # under each token's own limit
    assert refused.status_code == 429, refused.text
    assert int(refused.headers["Retry-After"]) >= 1

"""The embedded default's cache is shared by every process of the machine.

Without REDIS_URL the cache is `agentdocs.cache.DiskCache` in CACHE_DIR: gunicorn's
workers see one another's read state, rate-limit counts and render cache. The
gunicorn here runs on SQLite without Redis, three sync workers that each leave after
one request (`--max-requests 1`), so every request is answered by a process that
never served one before: what a per-process cache would forget, it forgets.
"""

from __future__ import annotations

import multiprocessing
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from agentdocs.cache import DiskCache, get_many_and_counts
from tests.app_servers import (
    AGENT_NOTES,
    AppServer,
    Cast,
    app_environment,
    layer_states,
    seed_in,
)
from tests.config.test_settings import run_manage

pytestmark = pytest.mark.slow

# Per token and per person, in a window of an hour (a test waits out the last
# seconds of one, so its requests all count in the same window).
RENDER_LIMIT = 6
RENDER_USER_LIMIT = 8


def test_without_redis_the_default_cache_is_the_disk_cache_in_cache_dir(tmp_path):
    shown = run_manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings; from django.core.cache import cache; "
        "cache.set('k', 1); default = settings.CACHES['default']; "
        "print(default['BACKEND'], default['LOCATION'], settings.AGENTDOCS_RENDER_CACHE)",
        SECRET_KEY="x",
        CACHE_DIR=str(tmp_path / "shared"),
    )
    assert shown.returncode == 0, shown.stderr
    backend, location, render_cache = shown.stdout.split()[-3:]
    assert backend == "agentdocs.cache.DiskCache"
    assert location == str(tmp_path / "shared")
    assert render_cache == "True"
    assert (tmp_path / "shared").is_dir()


def _count_in_child(rounds: int, results) -> None:
    counts = []
    for _ in range(rounds):
        _, (count,) = get_many_and_counts([], counters=[("ratelimit:shared", 60)])
        counts.append(count)
    results.put(counts)


def test_counters_are_exact_across_processes(tmp_path, settings):
    """Four processes counting at once: every count from 1 to the total is handed out
    exactly once (Django's file cache, a read then a write, lost about 70% of them)."""
    location = str(tmp_path / "shared")
    settings.CACHES = {"default": {"BACKEND": "agentdocs.cache.DiskCache", "LOCATION": location}}
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    children = [context.Process(target=_count_in_child, args=(150, results)) for _ in range(4)]
    for child in children:
        child.start()
    counts = sorted(count for _ in children for count in results.get(timeout=120))
    for child in children:
        child.join(timeout=30)
        assert child.exitcode == 0

    assert counts == list(range(1, 601))
    assert DiskCache(location, {}).get("ratelimit:shared") == 600


def test_the_folder_is_its_owners_only_and_closing_keeps_it_usable(tmp_path):
    cache = DiskCache(str(tmp_path / "shared"), {})
    cache.set("read-state", {"layers": {}}, 60)
    cache.close()

    assert (tmp_path / "shared").stat().st_mode & 0o777 == 0o700
    assert cache.get_many(["read-state", "missing"]) == {"read-state": {"layers": {}}}


def test_a_cache_folder_that_cannot_be_made_is_refused_with_what_to_set(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")

    with pytest.raises(ImproperlyConfigured) as refused:
        DiskCache(str(blocked / "cache"), {})

    assert str(blocked / "cache") in str(refused.value)
    assert "CACHE_DIR" in str(refused.value) and "REDIS_URL" in str(refused.value)


# One gunicorn on SQLite without Redis, for the tests below.


@pytest.fixture(scope="module")
def served(tmp_path_factory, migrated_sqlite) -> Iterator[tuple[AppServer, Cast, Path]]:
    folder = tmp_path_factory.mktemp("shared-cache")
    env = app_environment(
        folder,
        DATABASE_URL=f"sqlite:///{folder / 'agentdocs.sqlite3'}",
        CACHE_DIR=str(folder / "cache"),
        AGENTDOCS_RATE_LIMIT_RENDER=f"{RENDER_LIMIT}/hour",
        AGENTDOCS_RATE_LIMIT_RENDER_PER_USER=f"{RENDER_USER_LIMIT}/hour",
    )
    shutil.copyfile(migrated_sqlite, folder / "agentdocs.sqlite3")
    cast = seed_in(env)
    server = AppServer(env, folder).start(workers=3, max_requests=1)
    try:
        yield server, cast, folder / "cache"
    finally:
        server.stop()


def _render(server: AppServer, cast: Cast, token: str, process: str):
    return server.call("POST", cast.memory_block, cast.tokens[token], {"process": process})


def _away_from_the_hours_edge(margin: float = 60) -> None:
    """Wait for the next hour when this one ends within ``margin`` seconds, so a test's
    requests all count in one window of the hourly limits."""
    left = 3600 - time.time() % 3600
    if left < margin:
        time.sleep(left + 1)


def test_six_identical_renders_are_full_then_unchanged_in_other_worker_processes(served):
    server, cast, _ = served
    states = [layer_states(_render(server, cast, "turns", "claude-session-1")) for _ in range(6)]

    assert set(states[0]) >= {"agent_notes", "context"}
    assert set(states[0].values()) == {"full"}
    assert states[1:] == [dict.fromkeys(states[0], "unchanged")] * 5
    # Each of the six was served by a worker process of its own.
    assert len(set(server.served_by(cast.memory_block, at_least=6))) >= 6


def test_a_tokens_render_limit_counts_across_worker_processes(served):
    server, cast, _ = served
    _away_from_the_hours_edge()
    before = len(server.served_by(cast.memory_block))

    allowed = [_render(server, cast, "limited", f"p{n}").status_code for n in range(RENDER_LIMIT)]
    refused = _render(server, cast, "limited", "one-more")

    assert allowed == [200] * RENDER_LIMIT
    assert refused.status_code == 429, refused.text
    assert int(refused.headers["Retry-After"]) >= 1
    assert "Too many requests" in refused.json()["detail"]
    served = server.served_by(cast.memory_block, at_least=before + RENDER_LIMIT + 1)
    # The last ones: an earlier test's line may have come after ``before`` was counted.
    assert len(set(served[-(RENDER_LIMIT + 1) :])) == RENDER_LIMIT + 1


def test_a_persons_render_limit_counts_across_their_tokens_and_worker_processes(served):
    server, cast, _ = served
    _away_from_the_hours_edge()
    half = RENDER_USER_LIMIT // 2

    allowed = [_render(server, cast, "person-a", f"a{n}").status_code for n in range(half)]
    allowed += [_render(server, cast, "person-b", f"b{n}").status_code for n in range(half)]
    refused = _render(server, cast, "person-b", "one-more")

    assert allowed == [200] * RENDER_USER_LIMIT  # neither token reached its own limit
    assert refused.status_code == 429, refused.text


def test_the_render_cache_is_shared_and_a_write_reaches_the_next_render(served):
    server, cast, cache_dir = served
    before = len(server.served_by(cast.memory_block))
    first = _render(server, cast, "cached", "cached-1")
    assert AGENT_NOTES in first.json()["text"]
    shared = DiskCache(str(cache_dir), {"KEY_PREFIX": "agentdocs"})
    generation_key = f"render-generation:v1:{_tenant_id(shared)}"
    generation = shared.get(generation_key)
    assert generation is not None

    written = server.call(
        "PUT",
        cast.document("agent.md"),
        cast.tokens["writer"],
        {"body": "# House rules\n- written in another process\n", "version": 1, "reason": "new"},
    )
    assert written.status_code == 200, written.text
    second = _render(server, cast, "cached", "cached-2")

    assert "- written in another process" in second.json()["text"]
    assert "- keep changes small" not in second.json()["text"]
    assert shared.get(generation_key) not in (None, generation)
    # The last two: an earlier test's line may have come after ``before`` was counted
    # (gunicorn writes a line just after sending its response).
    first_pid, second_pid = server.served_by(cast.memory_block, at_least=before + 2)[-2:]
    assert first_pid != second_pid


def _tenant_id(shared: DiskCache) -> str:
    """The id of the one tenant whose render rows the shared cache holds."""
    prefix = "agentdocs:1:render-rows:v2:"
    keys = [key for key in shared._cache if isinstance(key, str) and key.startswith(prefix)]
    assert keys, "no render rows in the shared cache"
    return keys[0][len(prefix) :].split(":")[1]  # after the code's stamp

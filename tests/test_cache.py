"""The cache helpers: a write nobody waits for (`set_unanswered`)."""

from __future__ import annotations

import socket
import time

import pytest
from django.core.cache import caches
from redis.exceptions import ResponseError

from agentdocs import cache as cache_module
from agentdocs.cache import RedisCache, get_many_and_counts, set_unanswered, settle_unanswered
from tests.conftest import need_service

# The cache object itself: `django.core.cache.cache` is a proxy, never an instance of
# the backend's class.
cache = caches["default"]


def _eventually(key: str, timeout: float = 2.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cache.get(key)
        if value is not None:
            return value
        time.sleep(0.005)
    return None


@pytest.fixture
def redis_only():
    need_service(
        "Redis",
        isinstance(cache, RedisCache),
        "the unanswered connection is Redis's (other caches use `set`); set REDIS_URL",
    )
    cache_module._drop_unanswered()
    yield
    cache_module._drop_unanswered()


def test_an_unanswered_write_lands_with_its_expiry():
    set_unanswered("state", {"layers": {"policy": "abc"}}, 30)
    assert _eventually("state") == {"layers": {"policy": "abc"}}
    if isinstance(cache, RedisCache):
        client = cache.client.get_client(write=True)
        assert 0 < client.ttl(cache.make_and_validate_key("state")) <= 30


def test_this_threads_next_read_sees_the_write(redis_only):
    # Redis answers one connection's commands in order: once the write's answer is
    # read (before the next read), the write has landed. Without it, a read on the
    # pool's connection could overtake the write on the other connection.
    for n in range(300):
        set_unanswered("state", n, 30)
        found, counts = get_many_and_counts(["state"], counters=[("a-counter", 30)])
        assert found == {"state": n}
        assert cache_module._unanswered.owed == 0
    assert counts == [300]


def test_answers_are_read_later_and_a_reconnect_keeps_working(redis_only):
    set_unanswered("one", 1, 30)
    connection = cache_module._unanswered.connection
    assert cache_module._unanswered.owed == 1  # sent, its answer not waited for
    assert connection.can_read(timeout=2.0)  # the answer comes, and waits to be read
    settle_unanswered()
    assert cache_module._unanswered.owed == 0
    assert not connection.can_read(timeout=0.1)
    connection.disconnect()  # as a dropped connection would be; the next write reconnects
    set_unanswered("two", 2, 30)
    assert cache_module._unanswered.connection is connection
    assert get_many_and_counts(["two"], counters=[])[0] == {"two": 2}


def test_a_broken_connection_drops_the_write_and_the_next_connects_again(redis_only):
    set_unanswered("first", 1, 30)
    assert _eventually("first") == 1
    cache_module._unanswered.connection._sock.close()  # broken under the connection's feet
    set_unanswered("lost", 2, 30)  # dropped, never raised
    set_unanswered("third", 3, 30)
    assert _eventually("third") == 3


def test_a_forked_process_does_not_share_the_connection(redis_only, monkeypatch):
    set_unanswered("parent", 1, 30)
    parent = cache_module._unanswered.connection
    monkeypatch.setattr(cache_module._unanswered, "pid", -1)  # as if this were a fork
    set_unanswered("child", 2, 30)
    assert cache_module._unanswered.connection is not parent
    assert _eventually("child") == 2
    parent.disconnect()


# The render's round trip, packed and read here (`packed`, `_exchange`).


def test_commands_are_packed_as_redis_py_packs_them():
    from redis.connection import Connection

    commands = [
        ("MGET", "k", "ключ-ü", "x" * 70_000),
        ("INCR", "counter"),
        ("EXPIRE", "counter", 3600),
        ("SET", "state", b"\x80\x04pickled\r\n", "EX", 86_400),
        ("HINCRBY", "h", '["coder",1,[]]', -1),
        ("SET", "f", 1.5),
    ]
    assert cache_module.packed(commands) == b"".join(Connection().pack_commands(commands))


def test_an_error_answer_is_raised_after_every_answer_is_read(redis_only):
    client = cache.client.get_client(write=True)
    client.set(cache.make_and_validate_key("not-a-number"), "abc")
    with pytest.raises(ResponseError):
        get_many_and_counts(["a"], counters=[("not-a-number", 30), ("a-counter", 30)])
    # The connection went back to the pool in step: the next round trip reads its own.
    cache.set("a", "value", 30)
    found, counts = get_many_and_counts(["a"], counters=[("a-counter", 30)])
    assert found == {"a": "value"}
    assert counts == [2]  # counted in the refused round trip too, as a pipeline's would be


def test_a_broken_pooled_connection_is_dropped_and_the_round_trip_made_again(redis_only):
    cache.set("a", "value", 30)
    assert get_many_and_counts(["a"], counters=[("b-counter", 30)]) == ({"a": "value"}, [1])
    pool = cache.client._get_connection_pool(True)
    pooled = list(pool._available_connections)
    assert pooled
    for connection in pooled:
        connection._sock.shutdown(socket.SHUT_RDWR)  # broken under the pool's feet
    assert get_many_and_counts(["a"], counters=[("b-counter", 30)]) == ({"a": "value"}, [2])

"""The cache backends: Django's Redis backend, keeping one client per connection pool;
the embedded default's disk cache, shared by every process of one machine; and a counter
read in the same round trip as other keys.

Django builds a new `redis.Redis` for every cache call, and building one
registers a hundred-odd response callbacks, a cost paid on every render's
read-state lookup, the hot path. The client is thread-safe and holds no
connection itself (the pool does), so one per pool is enough.

`get_many_and_counts` is what lets a render count itself against its rate limits
(the caller's and the person's) without a round trip of its own: on Redis, the keys
and each counter's INCR and EXPIRE go in one write, packed and read here (`packed`,
`_exchange`; Django's `add` then `incr` took three round trips per counter). On any
other cache it is `get_many` and the atomic `add`/`incr` of the cache API for each
counter.

Without Redis the default is `DiskCache`, diskcache's Django backend: SQLite files in
one folder (CACHE_DIR), so every worker process of the machine (gunicorn's, Celery's,
the demo's threads) sees the same read state, rate-limit counts and render cache. Its
`add` and `incr` are transactions, so a count is exact across processes, which Django's
file cache (a read then a write) and database cache are not; and it answers a render's
round trip in about a fifth of a millisecond (bench/README.md, `shared_cache.py`). It is
one machine's: several machines share Redis.

`set_unanswered` is a write nobody waits for: a render's read state, sent on a
connection of its own whose answer is read only before this thread's next cache
read (`settle_unanswered`), so a new process's first turn does not wait a second
round trip for it. Redis answers one connection's commands in order, so once that
answer is read the write has landed: the thread's next read sees it (a process's
next turn right after this one gets its stubs), and the answer is by then usually
waiting in the socket, costing no round trip. A lost write only means sending the
full text again.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from diskcache import DjangoCache, FanoutCache
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient, RedisSerializer
from django.core.exceptions import ImproperlyConfigured
from redis import ConnectionPool, Redis
from redis.connection import ConnectionInterface
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import DataError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError


class _ReusingRedisCacheClient(RedisCacheClient):
    # Django's own attributes, which django-stubs leaves undeclared because they are private.
    _client: Callable[..., Redis]
    _get_connection_pool: Callable[[bool], ConnectionPool]
    _serializer: RedisSerializer

    def __init__(self, servers: list[str], **options: Any) -> None:
        super().__init__(servers, **options)
        self._clients: dict[int, Redis] = {}

    def get_client(
        self, key: str | bytes | memoryview | None = None, *, write: bool = False
    ) -> Redis:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients.setdefault(id(pool), self._client(connection_pool=pool))
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _ReusingRedisCacheClient

    @property
    def client(self) -> _ReusingRedisCacheClient:
        """Django's client of this cache (its `_cache`, undeclared in the stubs)."""
        client: _ReusingRedisCacheClient = getattr(self, "_cache")  # noqa: B009
        return client


class DiskCache(DjangoCache):
    """diskcache's Django backend, with one `FanoutCache` per folder and process.

    Django makes a backend per thread (and the demo's server a thread per request), and
    diskcache opens and checks its SQLite files when one is made; its `FanoutCache` is
    thread-safe (a connection per thread, made again in a forked child), so one per
    folder is enough. Django closes every cache at the end of each request, which here
    would only mean opening the files again on the next one: the connections stay open,
    as Redis's pool does. The folder is made readable by its owner only, since the
    cache holds documents' text."""

    _shared: dict[tuple[str, int, float, str], FanoutCache] = {}
    _shared_lock = threading.Lock()

    def __init__(self, directory: str, params: dict[str, Any]) -> None:
        # BaseCache's own setup (timeouts, key prefix), then the shared FanoutCache in
        # place of the one DjangoCache.__init__ would open.
        super(DjangoCache, self).__init__(params)
        shards = int(params.get("SHARDS", 1))
        timeout = float(params.get("DATABASE_TIMEOUT", 0.1))
        options = dict(params.get("OPTIONS", {}))
        folder = os.path.abspath(os.path.expanduser(directory))
        key = (folder, shards, timeout, repr(sorted(options.items())))
        with self._shared_lock:
            cache = self._shared.get(key)
            if cache is None:
                try:
                    os.makedirs(folder, mode=0o700, exist_ok=True)
                    cache = self._shared[key] = FanoutCache(folder, shards, timeout, **options)
                except OSError as error:
                    raise ImproperlyConfigured(
                        f"The cache folder {folder} cannot be used ({error.strerror or error}): "
                        "set CACHE_DIR to a folder on a local disk this user may write, "
                        "or REDIS_URL to a Redis."
                    ) from error
        self._cache = cache

    def get_many(self, keys: Any, version: int | None = None) -> dict[str, Any]:
        # Each read waits out a writer's lock instead of answering "missing", which would
        # turn a process's next turn into a full text for no reason.
        found = {}
        for key in keys:
            value = self.get(key, _MISSING, version=version, retry=True)
            if value is not _MISSING:
                found[key] = value
        return found

    def close(self, **kwargs: Any) -> None:
        """Kept open across requests (see the class)."""


_MISSING = object()


def get_many_and_counts(
    keys: list[str], *, counters: Sequence[tuple[str, int]]
) -> tuple[dict[str, Any], list[int]]:
    """``cache.get_many(keys)`` and each of ``counters`` (key, ttl) incremented by one
    (created at 1, expiring ttl seconds after its last increment), its count in the
    same order: one round trip on Redis however many keys and counters."""
    cache = caches[DEFAULT_CACHE_ALIAS]
    settle_unanswered()  # this thread's own writes are read back
    if not counters:
        return (cache.get_many(keys) if keys else {}), []
    if isinstance(cache, RedisCache):
        made = [cache.make_and_validate_key(key) for key in keys]
        commands: list[tuple[str | bytes | int, ...]] = [("MGET", *made)] if made else []
        for counter, ttl in counters:
            made_counter = cache.make_and_validate_key(counter)
            commands += [("INCR", made_counter), ("EXPIRE", made_counter, ttl)]
        results = _exchange(cache, commands)
        values = results[0] if made else []
        loads = cache.client._serializer.loads
        pairs = zip(keys, values, strict=True)
        found = {key: loads(value) for key, value in pairs if value is not None}
        increments = results[1:] if made else results
        return found, [int(count) for count in increments[::2]]
    found = cache.get_many(keys) if keys else {}
    return found, [_count(cache, counter, ttl) for counter, ttl in counters]


def packed(commands: Sequence[Sequence[str | bytes | int | float]]) -> bytes:
    """``commands`` in Redis's wire format (RESP), as redis-py packs them: a string as
    UTF-8, an integer in decimal, a float as its repr. Written here for the render's
    few short commands, a fifth of the CPU of redis-py's general packer (which also
    splits large values)."""
    out: list[bytes] = []
    for command in commands:
        out.append(b"*%d\r\n" % len(command))
        for arg in command:
            if isinstance(arg, str):
                value = arg.encode()
            elif isinstance(arg, bytes):
                value = arg
            elif isinstance(arg, int) and not isinstance(arg, bool):
                value = b"%d" % arg
            elif isinstance(arg, float):
                value = repr(arg).encode()
            else:  # as redis-py refuses it
                raise DataError(f"Invalid input of type: {type(arg).__name__!r}.")
            out.append(b"$%d\r\n%s\r\n" % (len(value), value))
    return b"".join(out)


def _exchange(cache: RedisCache, commands: list[tuple[str | bytes | int, ...]]) -> list[Any]:
    """Each of ``commands``' answers, sent in one write on a connection of the cache's
    pool and read in order: a pipeline without redis-py's pipeline machinery (command
    stack, response callbacks, per-command packing), which cost a render more CPU than
    its SQL. Every answer is read before an error answer is raised, so the connection
    goes back to the pool in step; a broken connection is dropped, and the commands
    are sent once more through redis-py's pipeline, with its retries (as they were
    before: a count may then be counted twice, as a retried pipeline's may)."""
    pool = cache.client._get_connection_pool(True)
    connection = pool.get_connection()
    try:
        connection.send_packed_command([packed(commands)])
        answers: list[Any] = []
        for _ in commands:
            try:
                answers.append(connection.read_response())
            except ResponseError as error:
                answers.append(error)
    except (RedisConnectionError, RedisTimeoutError, OSError):
        connection.disconnect()
        pool.release(connection)
        pipeline = cache.client.get_client(write=True).pipeline(transaction=False)
        for command in commands:
            pipeline.execute_command(*command)
        return list(pipeline.execute())
    except BaseException:
        connection.disconnect()  # answers may be left unread: never reuse it
        pool.release(connection)
        raise
    pool.release(connection)
    for answer in answers:
        if isinstance(answer, ResponseError):
            raise answer
    return answers


def _count(cache: Any, counter: str, ttl: int) -> int:
    """The atomic `add`/`incr` of the cache API, for a cache other than Redis."""
    if cache.add(counter, 1, ttl):
        return 1
    try:
        return int(cache.incr(counter))
    except ValueError:  # expired between add and incr: this request opens it again
        cache.add(counter, 1, ttl)
        return 1


# Writes nobody waits for: a render's read state.


class _Unanswered(threading.local):
    """This thread's connection for writes nobody waits for, and how many of their
    answers are still to be read."""

    connection: ConnectionInterface | None = None
    pid: int = 0
    owed: int = 0


_unanswered = _Unanswered()


def _unanswered_connection(cache: RedisCache) -> ConnectionInterface:
    connection = _unanswered.connection
    if connection is None or _unanswered.pid != os.getpid():  # a forked worker connects anew
        pool = cache.client._get_connection_pool(True)
        connection = pool.make_connection()  # its own, never handed to anyone else
        connection.health_check_interval = 0  # type: ignore[attr-defined]  # no PING between a write and its answer
        connection.connect()
        _unanswered.connection, _unanswered.pid, _unanswered.owed = connection, os.getpid(), 0
    return connection


def _drop_unanswered() -> None:
    if _unanswered.connection is not None:
        _unanswered.connection.disconnect()
    _unanswered.connection, _unanswered.owed = None, 0


def settle_unanswered() -> None:
    """Read the answers this thread's unanswered writes are owed, so that they have
    landed before what comes next reads the cache. Usually the answers are waiting in
    the socket already; a broken connection drops them (the writes may be lost)."""
    connection = _unanswered.connection
    if not _unanswered.owed or connection is None or _unanswered.pid != os.getpid():
        return
    try:
        while _unanswered.owed:
            connection.read_response()
            _unanswered.owed -= 1
    except (RedisError, OSError):
        _drop_unanswered()


def set_unanswered(key: str, value: Any, timeout: int) -> None:
    """``cache.set(key, value, timeout)`` without waiting for the answer: on Redis, sent on
    this thread's connection for such writes, whose answer is read before the thread's
    next cache read (`settle_unanswered`), so the caller pays for packing and sending
    the command and not for a round trip. For what may be lost (a lost write must only
    cost work, never correctness): if the connection is broken the write is dropped, and
    the next call connects again. Any other cache: `set`."""
    cache = caches[DEFAULT_CACHE_ALIAS]
    if not isinstance(cache, RedisCache):
        cache.set(key, value, timeout)
        return
    made = cache.make_and_validate_key(key)
    settle_unanswered()
    try:
        command = ("SET", made, cache.client._serializer.dumps(value), "EX", timeout)
        _unanswered_connection(cache).send_packed_command([packed([command])], check_health=False)
        _unanswered.owed += 1
    except (RedisError, OSError):
        _drop_unanswered()


# Counters in a hash, counted without waiting: what renders delivered
# (`agentdocs.services.render_costs`).


def hash_count_unanswered(key: str, field: str, ttl: int) -> None:
    """Add one to ``field`` of the hash ``key`` (expiring ttl seconds after its last
    count) without waiting: on Redis, HINCRBY and EXPIRE sent on this thread's
    unanswered connection (`set_unanswered`), whose answers are read before the thread's
    next cache read. It does not read the answers owed first, which would wait out the
    read state's write sent just before. Any other cache: each field is a counter of
    its own (the atomic `add`/`incr`), listed in the hash's slots when first counted."""
    cache = caches[DEFAULT_CACHE_ALIAS]
    if not isinstance(cache, RedisCache):
        if _count(cache, _field_key(key, field), ttl) == 1:
            slot = _count(cache, f"{key}|slots", ttl)
            cache.set(f"{key}|slot|{slot}", field, ttl)
        return
    made = cache.make_and_validate_key(key)
    try:
        connection = _unanswered_connection(cache)
        commands = [("HINCRBY", made, field, 1), ("EXPIRE", made, ttl)]
        connection.send_packed_command([packed(commands)], check_health=False)
        _unanswered.owed += 2
    except (RedisError, OSError):
        _drop_unanswered()


def hash_counts(keys: Sequence[str]) -> dict[str, dict[str, int]]:
    """Each hash of ``keys`` counted by `hash_count_unanswered`: its fields and counts."""
    cache = caches[DEFAULT_CACHE_ALIAS]
    settle_unanswered()
    if isinstance(cache, RedisCache):
        pipeline = cache.client.get_client().pipeline(transaction=False)
        for key in keys:
            pipeline.hgetall(cache.make_and_validate_key(key))
        return {
            key: {name.decode(): int(count) for name, count in found.items()}
            for key, found in zip(keys, pipeline.execute(), strict=True)
        }
    counted: dict[str, dict[str, int]] = {}
    for key in keys:
        slots = int(cache.get(f"{key}|slots") or 0)
        named = cache.get_many([f"{key}|slot|{slot}" for slot in range(1, slots + 1)])
        fields = sorted(set(named.values()))
        counts = cache.get_many([_field_key(key, field) for field in fields])
        counted[key] = {
            field: int(counts[_field_key(key, field)])
            for field in fields
            if _field_key(key, field) in counts
        }
    return counted


def _field_key(key: str, field: str) -> str:
    return f"{key}|field|{hashlib.sha256(field.encode()).hexdigest()[:32]}"

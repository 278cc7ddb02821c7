"""Django's Redis cache backend, keeping one client per connection pool.

Django builds a new `redis.Redis` for every cache call, and building one
registers a hundred-odd response callbacks, a cost paid on every render's
read-state lookup, the hot path. The client is thread-safe and holds no
connection itself (the pool does), so one per pool is enough.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient
from redis import ConnectionPool, Redis


class _ReusingRedisCacheClient(RedisCacheClient):
    # Django's own attributes, which django-stubs leaves undeclared because they are private.
    _client: Callable[..., Redis]
    _get_connection_pool: Callable[[bool], ConnectionPool]

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

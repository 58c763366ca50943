"""Django's Redis cache, with one Redis client per connection pool instead of one per call.

Django's ``RedisCacheClient.get_client`` builds a new ``redis.Redis`` for every cache
operation. With redis-py 8 building one (its table of response callbacks) costs more CPU
than the round trip itself, about half a millisecond, and a tool call makes several cache
operations (its throttle counter, the key cache). A ``redis.Redis`` is safe to share
between threads (each command takes a connection from the pool), so this backend keeps
one per pool. Use it as the ``BACKEND`` of a cache in ``CACHES``, with the same
``LOCATION`` and ``OPTIONS`` as Django's::

    CACHES = {"default": {"BACKEND": "mcp_endpoint.redis_cache.RedisCache",
                          "LOCATION": "redis://127.0.0.1:6379/1"}}
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient

from mcp_endpoint.conf import backend_class


class ReusedClientRedisCacheClient(RedisCacheClient):
    """Django's client, keeping the ``redis.Redis`` it makes for each connection pool."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class RedisCache(DjangoRedisCache):
    """``django.core.cache.backends.redis.RedisCache`` with its clients reused."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient


DJANGO_REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"


@functools.lru_cache(maxsize=64)
def is_redis_cache(backend: Any) -> bool:
    """Whether a cache backend is Django's Redis cache or a subclass of it (such as
    :class:`RedisCache`)."""
    cls = backend_class(backend)
    return cls is not None and issubclass(cls, DjangoRedisCache)


def redis_location(alias: str) -> str | None:
    """The Redis URL of the cache ``alias`` in ``CACHES`` (its first server), or None when
    that cache is not Redis."""
    cache = settings.CACHES.get(alias, {})
    backend = cache.get("BACKEND")
    if not isinstance(backend, str) or not is_redis_cache(backend):
        return None
    location = cache.get("LOCATION")
    if isinstance(location, list | tuple):
        location = location[0] if location else None
    return location if isinstance(location, str) else None

"""The Redis cache backend that reuses its clients: Django's cache API, one client per pool.

Needs ``REDIS_URL`` (the PostgreSQL + Redis run, where it is also every test's cache);
skipped without it.
"""

from __future__ import annotations

import os
import secrets
from concurrent.futures import ThreadPoolExecutor

import pytest

from mcp_endpoint.redis_cache import RedisCache

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs REDIS_URL")


@pytest.fixture
def cache() -> RedisCache:
    prefix = f"redis-cache-test-{secrets.token_hex(4)}"
    return RedisCache(os.environ.get("REDIS_URL", ""), {"KEY_PREFIX": prefix})


def test_the_cache_api_works(cache: RedisCache) -> None:
    assert cache.get("missing") is None
    assert cache.add("counter", 1, timeout=30)
    assert not cache.add("counter", 5, timeout=30)
    assert cache.incr("counter", 4) == 5
    cache.set("thing", {"a": [1, 2]}, timeout=30)
    assert cache.get("thing") == {"a": [1, 2]}
    cache.delete_many(["thing", "counter"])
    assert cache.get_many(["thing", "counter"]) == {}
    with pytest.raises(ValueError):
        cache.incr("counter")


def test_one_client_serves_every_call_and_thread(cache: RedisCache) -> None:
    client = cache._cache.get_client(write=True)
    assert cache._cache.get_client(write=True) is client
    assert cache._cache.get_client() is client  # one server: reads use the same pool
    cache.set("n", 0, timeout=30)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: cache.incr("n"), range(200)))
    assert cache.get("n") == 200
    assert cache._cache.get_client() is client
    cache.delete("n")

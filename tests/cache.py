"""The Redis cache of the PostgreSQL + Redis run, shared by parallel test processes.

Each test process has a key prefix of its own (``tests/settings.py``); Django's
``RedisCache.clear()`` empties the whole Redis database (``FLUSHDB``), which would take
the throttle counters, sessions and event logs of every other process's tests with it.
This one deletes only the keys under its own prefix.
"""

from __future__ import annotations

from mcp_endpoint.redis_cache import RedisCache


class OwnPrefixRedisCache(RedisCache):
    """``mcp_endpoint.redis_cache.RedisCache`` whose ``clear()`` keeps to its prefix."""

    def clear(self) -> bool:
        client = self._cache.get_client(write=True)
        # Django's keys are "<prefix>:<version>:<key>"; glob characters in a prefix are
        # escaped so that it matches itself only.
        prefix = "".join(f"\\{c}" if c in "*?[]\\" else c for c in self.key_prefix)
        batch: list[bytes] = []
        for key in client.scan_iter(match=f"{prefix}:*", count=500):
            batch.append(key)
            if len(batch) >= 500:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)
        return True

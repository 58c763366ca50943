"""Per-credential caps on what waits or holds a thread: counted in the shared cache.

One credential may hold only so many open ``GET`` streams, streamed calls and requests to
its client awaiting an answer. Each cap is a count in ``CACHE`` under a key naming the
endpoint, the kind of thing counted and the credential, so every thread of a process and
every process of a deployment that shares the cache (Redis in production) see the same
count. The threads of one process take turns (some cache backends, the file cache among
them, read and write to count); between processes the count is exact where ``incr`` is
atomic, as in Redis and Memcached, and best effort elsewhere.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import TYPE_CHECKING

from django.core.cache import caches

from mcp_endpoint.client_logging import SERVER_ONLY

if TYPE_CHECKING:
    from mcp_endpoint.interfaces import EndpointLike

logger = logging.getLogger("mcp_endpoint.limits")
_counting = threading.Lock()


class CredentialLimit:
    """At most ``limit`` things of one ``kind`` held at once by one credential (``owner``).

    Best effort: a process that dies holding some leaves its count behind, which ages out
    ``timeout`` seconds after the credential last acquired one.
    """

    def __init__(
        self, endpoint: EndpointLike, kind: str, owner: str, limit: int, *, timeout: int = 3600
    ) -> None:
        self.cache = caches[endpoint.settings.CACHE]
        self.key = f"mcp_endpoint:{kind}:{endpoint.name}:{owner}"
        self.limit = limit
        self.timeout = timeout

    def acquire(self) -> bool:
        """Take one; False (and nothing taken) when the credential holds ``limit`` already."""
        with _counting:
            self.cache.add(self.key, 0, timeout=self.timeout)
            try:
                count = self.cache.incr(self.key)
            except ValueError:  # expired between add and incr
                self.cache.add(self.key, 1, timeout=self.timeout)
                count = 1
            if count > self.limit:
                self._decrement()
                return False
            self.cache.touch(self.key, timeout=self.timeout)
            return True

    def release(self) -> None:
        """Give one back. A cache that cannot be reached keeps the count until it ages out
        (``timeout``): that is logged, never raised, since what released it is ending."""
        with _counting:
            try:
                self._decrement()
            except Exception:  # each cache client raises its own kind
                logger.warning(
                    "could not give back a %s", self.key, exc_info=True, extra=SERVER_ONLY
                )

    def _decrement(self) -> None:
        with contextlib.suppress(ValueError):  # expired meanwhile
            self.cache.decr(self.key)

"""Rate limits: the host's DRF throttles count the work, a generous limit covers the protocol.

A message that runs host code (``tools/call``, ``resources/read``, ``prompts/get``,
``completion/complete``) counts once against each of the host's DRF throttles, with the
counters the REST API uses, as one REST request does. Everything else (``initialize``,
notifications, ``ping``, the lists, ``server/discover``) costs the host's budget nothing: a
client's handshake must not spend what its user may do. Those messages count against one
separate per-credential limit (``PROTOCOL_RATE``), so a runaway client still meets a wall.

The cache keys counted are remembered on the request, so that a tool which runs a DRF view
inside the same request does not count them a second time.

DRF's :class:`~rest_framework.throttling.SimpleRateThrottle` reads the request history,
decides, then writes it back: workers that read the same history at once each let their
request through, and a shared budget overshoots under load. The ``Atomic*`` classes here
count with the cache's ``incr`` instead (one counter per fixed window, created by ``add``
with the window's expiry), which Redis and Memcached perform atomically; a host can use them
in ``REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]`` for REST and ``/mcp`` alike.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rest_framework.settings import api_settings
from rest_framework.throttling import (
    AnonRateThrottle,
    BaseThrottle,
    ScopedRateThrottle,
    SimpleRateThrottle,
    UserRateThrottle,
)

if TYPE_CHECKING:
    # Not at run time: DRF imports these throttle classes while it defines APIView, when a
    # host names them in DEFAULT_THROTTLE_CLASSES.
    from rest_framework.request import Request
    from rest_framework.views import APIView

    from mcp_endpoint.credential import Credential

# The messages that run host code, and so spend the host's REST budget.
WORK_METHODS = frozenset({"tools/call", "resources/read", "prompts/get", "completion/complete"})


def throttle_classes(configured: Sequence[type[BaseThrottle]] | None) -> list[type[BaseThrottle]]:
    if configured is not None:
        return list(configured)
    classes: list[type[BaseThrottle]] = list(api_settings.DEFAULT_THROTTLE_CLASSES)  # type: ignore[arg-type]
    return classes


def is_work(message: Any) -> bool:
    """Whether ``message`` runs host code (and so counts against the host's throttles)."""
    if not isinstance(message, dict):
        return False
    method = message.get("method")
    return isinstance(method, str) and method in WORK_METHODS


# -- atomic counting ----------------------------------------------------------------------


class AtomicRateThrottleMixin:
    """Count requests with the cache's atomic ``incr``, in fixed windows of the rate's period.

    Mix it in front of any :class:`SimpleRateThrottle` subclass: the subclass still says
    whom a request counts for (``get_cache_key``) and at what rate; only the counting
    changes. A window of ``duration`` seconds admits at most ``num_requests``, however many
    processes count at once, when the cache's ``incr`` is atomic (Redis, Memcached; the
    local-memory cache within one process). A refused request is counted too, so a client
    that keeps knocking does not get through sooner.
    """

    rate: str | None
    num_requests: int
    duration: int
    key: str | None
    cache: Any
    timer: Any

    def allow_request(self, request: Request, view: APIView) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)  # type: ignore[attr-defined]
        if self.key is None:
            return True
        self.now = self.timer()
        window = int(self.now // self.duration)
        self.window_ends = (window + 1) * self.duration
        count = self.count(f"{self.key}:{window}")
        return count <= self.num_requests

    def count(self, counter: str, delta: int = 1) -> int:
        """Add ``delta`` to ``counter`` and return its value; created on first use, with expiry."""
        try:
            value: int = self.cache.incr(counter, delta)
            return value
        except ValueError:
            pass  # no counter yet in this window
        # ``add`` creates it only if no other process did in between; otherwise count on it.
        if self.cache.add(counter, delta, timeout=self.duration + 1):
            return delta
        try:
            value = self.cache.incr(counter, delta)
            return value
        except ValueError:
            # Evicted between the two calls: count these requests alone rather than refuse.
            return delta

    def wait(self) -> float | None:
        return max(0.0, self.window_ends - self.now)


class AtomicUserRateThrottle(AtomicRateThrottleMixin, UserRateThrottle):
    """DRF's ``UserRateThrottle`` (scope ``user``), counted atomically."""


class AtomicAnonRateThrottle(AtomicRateThrottleMixin, AnonRateThrottle):
    """DRF's ``AnonRateThrottle`` (scope ``anon``), counted atomically."""


class AtomicScopedRateThrottle(AtomicRateThrottleMixin, ScopedRateThrottle):
    """DRF's ``ScopedRateThrottle`` (the view's ``throttle_scope``), counted atomically."""


class ProtocolRateThrottle(AtomicRateThrottleMixin, SimpleRateThrottle):
    """The per-credential limit on protocol messages (``PROTOCOL_RATE``, DRF's rate syntax).

    It guards against runaway clients, so it need not cost every ``ping`` a round trip to the
    shared cache: each process counts a credential's messages itself and adds them to the
    shared counter ``SHARE_EVERY`` at a time while the credential is in the lower half of its
    budget, and one at a time above it. The limit then holds across processes to within
    ``SHARE_EVERY`` messages per process, at a tenth of the cache traffic.
    """

    scope = "mcp_protocol"
    SHARE_EVERY = 10
    MAX_TRACKED = 10_000
    # credential ident -> [window, messages not yet shared, shared total last seen]
    _unshared: dict[str, list[int]] = {}
    _lock = threading.Lock()

    def __init__(self, rate: str | None, ident: str) -> None:
        self.rate = rate
        self.ident = ident
        if rate is not None:
            self.num_requests, self.duration = self.parse_rate(rate)  # type: ignore[assignment]

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.ident}

    def allow_request(self, request: Request, view: APIView) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        self.now = self.timer()
        window = int(self.now // self.duration)
        self.window_ends = (window + 1) * self.duration
        with self._lock:
            state = self._unshared.get(self.ident)
            if state is None or state[0] != window:
                if len(self._unshared) >= self.MAX_TRACKED:
                    # Credentials seen in earlier windows have nothing left to count.
                    for ident in [i for i, v in self._unshared.items() if v[0] != window]:
                        del self._unshared[ident]
                state = self._unshared[self.ident] = [window, 0, 0]
            state[1] += 1
            pending, shared = state[1], state[2]
            if pending < self.SHARE_EVERY and shared + pending < self.num_requests // 2:
                return True
            state[1] = 0
        total = self.count(f"{self.key}:{window}", pending)
        with self._lock:
            if self._unshared.get(self.ident) is state:
                state[2] = total
        return total <= self.num_requests


# -- the transport's step ------------------------------------------------------------------


def throttle_view(request: Request) -> APIView:
    """Stands in for a view when the transport checks throttles: no ``throttle_scope``."""
    from rest_framework.views import APIView

    view = APIView()
    view.request = request
    view.headers = {}
    return view


class RateLimits:
    """The limits of one HTTP request: :meth:`check` once per JSON-RPC message.

    ``drf_request`` is the one DRF request the transport made to authenticate the caller;
    throttles read its user and auth from there, without a second look-up.
    """

    def __init__(
        self,
        drf_request: Request,
        credential: Credential | None,
        classes: Sequence[type[BaseThrottle]],
        protocol_rate: str | None,
    ) -> None:
        self.drf_request = drf_request
        self.credential = credential
        self.classes = classes
        self.protocol_rate = protocol_rate
        # The cache keys of the throttles this HTTP request was counted against: a tool
        # call's view must not count it again (see RequestContext.counted_throttle_keys).
        self.counted: set[str] = set()
        self._view: APIView | None = None

    @property
    def view(self) -> APIView:
        # Made on first use: a request with no throttle to check never needs it.
        if self._view is None:
            self._view = throttle_view(self.drf_request)
        return self._view

    def check(self, message: Any) -> float | None:
        """None when ``message`` may run; otherwise the seconds to wait (0 if unknown)."""
        if is_work(message):
            return self.check_work()
        if isinstance(message, dict) and "id" not in message and "method" in message:
            return None  # a notification: nothing happens, so nothing is counted
        return self.check_protocol()

    def check_work(self) -> float | None:
        if not self.classes:
            return None
        waits: list[float] = []
        for cls in self.classes:
            throttle = cls()
            allowed = throttle.allow_request(self.drf_request, self.view)
            key = _cache_key(throttle)
            if allowed and key:
                self.counted.add(key)
            if not allowed:
                wait = throttle.wait()
                waits.append(wait if wait is not None else 0.0)
        return max(waits) if waits else None

    def check_protocol(self) -> float | None:
        if self.protocol_rate is None:
            return None
        ident = (
            self.credential.ident()
            if self.credential is not None
            else "ip:" + BaseThrottle().get_ident(self.drf_request)
        )
        throttle = ProtocolRateThrottle(self.protocol_rate, ident)
        if throttle.allow_request(self.drf_request, self.view):
            return None
        return throttle.wait()


def _cache_key(throttle: BaseThrottle) -> str | None:
    if isinstance(throttle, SimpleRateThrottle):
        key: Any = getattr(throttle, "key", None)
        return key if isinstance(key, str) else None
    return None

"""Database and cache outages: told apart from bugs, answered 503, logged once in a while.

When the database or the cache cannot be reached, every request fails the same way, and a
traceback per request buries the one line an operator needs. The view and the tool boundary
ask :func:`diagnose` about an exception they caught: it opens a fresh connection to each
database and asks each cache for a key, and names what does not answer. The request is then
answered 503 with ``Retry-After``, and :func:`report` logs one line per kind of outage per
worker process per interval. Nothing is remembered between requests but that log time, so
the first request after the service is back succeeds: Django opens new connections on its
own, and a cache client reconnects.

One outage is not answered 503: a connection lost while a tool's writes were committing.
The commit may have gone through, so a blind retry could do the work twice; the tool
boundary answers ``outcome_unknown`` instead (:func:`commit_outcome_unknown`), with no
``Retry-After``, and tells the client to look before it tries again.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
import traceback
from typing import Any

from django.conf import settings as django_settings
from django.core.cache import caches
from django.db import Error as DatabaseError
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse

from mcp_endpoint import client_logging
from mcp_endpoint.conf import MCPSettings, backend_class, mcp_settings
from mcp_endpoint.protocol import jsonrpc

logger = logging.getLogger("mcp_endpoint.outages")

DATABASE = "database"
CACHE = "cache"
PROBE_KEY = "mcp_endpoint:outage-probe"

_last_report: dict[str, float] = {}
_lock = threading.Lock()


class ServiceUnavailable(Exception):
    """The database or the cache (``kind``) is unreachable; the request cannot be served."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"the {kind} is unreachable")
        self.kind = kind


def diagnose(exc: BaseException) -> str | None:
    """``"database"`` or ``"cache"`` when ``exc`` came from an outage of one; None otherwise.

    A database error counts when a fresh connection fails too (a bad query is a bug, not an
    outage), or when it lost a connection the request was using: a connection kept across
    requests (``CONN_MAX_AGE``) that an outage cut is found dead by the first request after
    the database is back, when a fresh connection already succeeds. Any other error counts
    when a cache in use fails a read, or when it is a cache client's own connection refused,
    dropped or timed out (:func:`cache_connection_lost`): at the end of an outage the
    request's connection can be refused while the probe that follows already succeeds.
    """
    if isinstance(exc, ServiceUnavailable):
        return exc.kind
    if isinstance(exc, DatabaseError):
        if connection_lost(exc) or not databases_reachable():
            return DATABASE
        return None
    if cache_connection_lost(exc) or not caches_reachable():
        return CACHE
    return None


def raise_if_outage(exc: BaseException) -> None:
    """Raise :class:`ServiceUnavailable` from ``exc`` when :func:`diagnose` puts it down to
    an outage; the boundaries of host code (tools, resources) call it before they call
    ``exc`` a bug of that code."""
    kind = diagnose(exc)
    if kind is not None:
        raise ServiceUnavailable(kind) from exc


def unavailable_message(kind: str, retry_after: int) -> str:
    """What a 503 says, at ``/mcp`` and at the host's views alike."""
    return f"Service Unavailable: the {kind} is unreachable; retry in {retry_after} s"


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` is a connection of this request lost or refused, rather than a bad
    query. With PostgreSQL's drivers, every error the server reports carries a SQLSTATE:
    one without (a refused or dropped connection, seen by the client library), or of class
    08 (connection exception) or 57P (operator intervention: a shutdown, a restart, a
    terminated backend), is the connection's. With other drivers, a connection the driver
    now says is closed or broken (``closed``, ``broken``). Django closes such a connection
    at the end of the request, so the next one opens a fresh one.
    """
    if not isinstance(exc, (OperationalError, InterfaceError)):
        return False
    cause = exc.__cause__
    for attribute in ("sqlstate", "pgcode"):  # psycopg 3, psycopg2
        if hasattr(cause, attribute):
            state = getattr(cause, attribute) or ""
            return not state or state.startswith(("08", "57P"))
    for connection in connections.all(initialized_only=True):
        driver = connection.connection
        if driver is not None and (
            getattr(driver, "broken", False) or getattr(driver, "closed", False)
        ):
            return True
    return False


def cache_connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` is a connection of a cache client refused, dropped or timed out: a
    socket's ``ConnectionError`` or ``TimeoutError`` in its chain, raised through the module
    of a configured cache backend (``CACHES``). The same error from a tool's own call to
    another service passes through no cache backend, and is that tool's."""
    if not any(isinstance(link, (ConnectionError, TimeoutError)) for link in chain(exc)):
        return False
    backends = {
        module
        for options in django_settings.CACHES.values()
        for module in backend_modules(str(options.get("BACKEND", "")))
    }
    return any(
        frame.f_globals.get("__name__") in backends
        for link in chain(exc)
        for frame, _line in traceback.walk_tb(link.__traceback__)
    )


# Modules every cache backend runs through, whichever it is.
GENERIC_MODULES = frozenset({"builtins", "django.core.cache.backends.base"})


@functools.lru_cache(maxsize=64)
def backend_modules(backend: str) -> frozenset[str]:
    """The modules a cache backend's commands run in: its own and those of the classes it
    derives from (a subclass such as ``mcp_endpoint.redis_cache.RedisCache`` overrides
    little, so a refused command is raised through Django's module, not the subclass's).
    ``BaseCache``'s module is left out: its ``get_or_set`` runs a caller's function, whose
    errors are the caller's."""
    cls = backend_class(backend)
    if cls is None:
        return frozenset({backend.rpartition(".")[0]})
    return frozenset(
        klass.__module__ for klass in cls.__mro__ if klass.__module__ not in GENERIC_MODULES
    )


def chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling, each once."""
    links: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in links:
        links.append(link)
        link = link.__cause__ or link.__context__
    return links


def commit_outcome_unknown(exc: BaseException) -> bool:
    """Whether ``exc``, raised while a transaction committed, leaves unknown whether it did.

    A connection lost during the commit (its acknowledgement never came) may have lost it
    after the database had committed: an ``OperationalError`` or ``InterfaceError`` the
    database itself did not report (it has no SQLSTATE). A refusal the database reported
    (a deferred constraint, a serialization failure) rolled the transaction back: that
    outcome is known.
    """
    if not isinstance(exc, (OperationalError, InterfaceError)):
        return False
    return getattr(exc.__cause__, "sqlstate", None) is None


def databases_reachable() -> bool:
    for connection in connections.all(initialized_only=True):
        # A connection of its own: the request's may be inside a broken transaction.
        probe = connections.create_connection(connection.alias)
        try:
            probe.ensure_connection()
        except DatabaseError:
            return False
        finally:
            with contextlib.suppress(DatabaseError):  # closing what never opened is no news
                probe.close()
    return True


def caches_reachable() -> bool:
    for cache in caches.all(initialized_only=True):
        try:
            cache.get(PROBE_KEY)
        except Exception:  # each cache client raises its own kind
            return False
    return True


def report(kind: str, cause: BaseException | None, interval: float) -> None:
    """Log the outage, at most once per ``interval`` seconds per kind in this process."""
    now = time.monotonic()
    with _lock:
        last = _last_report.get(kind)
        if last is not None and now - last < interval:
            return
        _last_report[kind] = now
    detail = f"{type(cause).__name__}: {cause}" if cause is not None else "no detail"
    logger.error(
        "The %s is unreachable (%s); answering 503 until it is back (next report in %d s "
        "at the earliest)",
        kind,
        detail.strip(),
        interval,
        extra=client_logging.SERVER_ONLY,
    )


def error_body(request_id: Any, exc: ServiceUnavailable, settings: MCPSettings) -> dict[str, Any]:
    """The JSON-RPC error of a 503 answer; the outage is logged (once in a while) here."""
    report(exc.kind, exc.__cause__, settings.OUTAGE_LOG_INTERVAL)
    retry_after: int = settings.OUTAGE_RETRY_AFTER
    return jsonrpc.error(
        jsonrpc.request_id_of({"id": request_id}),
        jsonrpc.INTERNAL_ERROR,
        unavailable_message(exc.kind, retry_after),
        {"unavailable": exc.kind, "retry_after": retry_after},
    )


class ServiceUnavailableMiddleware:
    """The same answer for the host's own views: a database or cache outage that a view
    (a REST call, a page) meets is 503 with ``Retry-After`` and a JSON ``detail``, logged
    once per interval, instead of Django's HTML 500 and a traceback per request. Anything
    else a view raises goes on to Django as before. Add it to ``MIDDLEWARE``::

        "mcp_endpoint.outages.ServiceUnavailableMiddleware",

    It sees what views raise (``process_exception``), not what other middleware raises.
    """

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response: HttpResponse = self.get_response(request)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        kind = diagnose(exception)
        if kind is None:
            return None
        report(kind, exception, mcp_settings.OUTAGE_LOG_INTERVAL)
        retry_after: int = mcp_settings.OUTAGE_RETRY_AFTER
        response = JsonResponse({"detail": unavailable_message(kind, retry_after)}, status=503)
        response["Retry-After"] = str(retry_after)
        return response

"""Every endpoint's tools built before the first request: :func:`warm_up`.

An endpoint builds its tools' schemas the first time a request needs them (``initialize``,
``tools/list``, a search, a call), once per process. On a large product that request waits
for every tool's schema: about 6 ms a tool on a 2-core machine, so 6 s for a thousand
tools, in each worker, and a client that gives up on a slow first answer (the Python SDK
waits 10 s for ``server/discover``, then falls back to the 2025 handshake) is served worse
than the next one. A host's WSGI or ASGI module calls :func:`warm_up` once its application
exists, so that each worker pays this as it starts, before a server sends it requests::

    application = get_wsgi_application()
    warm_up()

Under ``gunicorn --preload`` the master pays it once and its workers inherit the built
schemas. Nothing here is required: without it the first request builds them, as before.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, connections

if TYPE_CHECKING:
    from mcp_endpoint.endpoint import Endpoint

logger = logging.getLogger("mcp_endpoint.warmup")


def warm_up() -> dict[str, int]:
    """Build the tools of each endpoint the URL conf mounts (and of every other endpoint
    created by then); the number of tools each can serve, by endpoint name.

    An endpoint whose tools need a database that is not there yet (not migrated, out of
    reach) is left to its first request, which tries again; so is one whose host code
    raises while a schema is built (logged: the server starts all the same). The database
    connections opened here are closed, so that a server that forks after this
    (``--preload``) hands none to its workers.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return build_all()
    # An ASGI server (uvicorn) imports the application inside its event loop, where
    # Django refuses database work: the tools are built on a thread of their own, and
    # the server waits for it before it serves.
    built: dict[str, int] = {}
    thread = threading.Thread(target=lambda: built.update(build_all()), name="mcp-warm-up")
    thread.start()
    thread.join()
    return built


def build_all() -> dict[str, int]:
    """:func:`warm_up`'s work, outside an event loop."""
    started = time.monotonic()
    built: dict[str, int] = {}
    try:
        for endpoint in mounted_endpoints():
            try:
                built[endpoint.name] = sum(1 for t in endpoint.tools if t.unavailable() is None)
            except DatabaseError as exc:
                logger.info(
                    "endpoint %r builds its tools on its first request: %s", endpoint.name, exc
                )
            except Exception:  # host code failing while a schema is built: the server starts
                logger.exception(
                    "endpoint %r could not build its tools; its first request tries again",
                    endpoint.name,
                )
    finally:
        connections.close_all()
    logger.debug(
        "warmed up %d endpoints (%d tools) in %.2f s",
        len(built),
        sum(built.values()),
        time.monotonic() - started,
    )
    return built


def mounted_endpoints() -> list[Endpoint]:
    """The endpoints the URL conf mounts (loading it creates them), found by walking its
    patterns, and those that registered themselves (``mcp_endpoint.endpoint.endpoints``);
    in name order."""
    from django.urls import URLPattern, URLResolver, get_resolver

    from mcp_endpoint.endpoint import Endpoint, endpoints

    found: dict[int, Endpoint] = {id(e): e for e in endpoints}
    pending: list[Any] = list(get_resolver().url_patterns)
    while pending:
        pattern = pending.pop()
        if isinstance(pattern, URLResolver):
            pending.extend(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            # An endpoint's view carries it as an as_view() argument (see Endpoint.get_urls).
            initkwargs = getattr(pattern.callback, "view_initkwargs", None) or {}
            for candidate in (initkwargs.get("endpoint"), pattern.default_args.get("endpoint")):
                if isinstance(candidate, Endpoint):
                    found[id(candidate)] = candidate
    return sorted(found.values(), key=lambda e: e.name)

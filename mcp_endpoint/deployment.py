"""What the deployment serving a request can honour, so that nothing is announced that it
cannot deliver (see docs/deployment.md).

- **Resource updates** (``resources.subscribe`` in both eras) need a server that holds a
  stream open, and updates that reach the process holding it. The server is known per
  request: an ASGI request holds streams as async code; a WSGI one only when the host said
  so (``WSGI_GET_STREAMS``, legacy GET streams only) and the server runs threads
  (``wsgi.multithread``), since each open stream holds a thread. ``subscriptions/listen``
  streams are served under ASGI only. Updates reach every process through Redis
  (``SUBSCRIPTIONS_REDIS_URL``, or the Redis of ``CACHE``); without it, only a server that
  is one process (WSGI's ``wsgi.multiprocess`` false; an ASGI server cannot say, and is
  taken at its word) delivers them.
- **Tasks** need a backend that runs them: the immediate backend runs them in the
  request; the dummy backend never does; any other needs a worker that said it is alive
  within three heartbeats (:class:`~mcp_endpoint.task_recovery.WorkerPresence`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from django.core.handlers.asgi import ASGIRequest
from django.core.signals import setting_changed
from django.db import Error as DatabaseError
from django.dispatch import receiver
from django.http import HttpRequest

from mcp_endpoint import subscriptions, task_recovery

if TYPE_CHECKING:
    from mcp_endpoint.interfaces import EndpointLike

# How long a worker seen stays known to this process without looking again, in seconds.
WORKER_SEEN_CACHE_SECONDS = 5.0
IMMEDIATE = "ImmediateBackend"
DUMMY = "DummyBackend"


def holds_streams(endpoint: EndpointLike, request: Any, *, legacy: bool) -> bool:
    """Whether the server that serves ``request`` can keep an update stream open."""
    if isinstance(request, ASGIRequest):
        return True
    if not legacy or not isinstance(request, HttpRequest):
        return False  # listen streams end at once under WSGI
    return bool(endpoint.settings.WSGI_GET_STREAMS) and request.META.get("wsgi.multithread") is True


def reaches_every_process(endpoint: EndpointLike, request: Any) -> bool:
    """Whether an update made in any process reaches the streams of this one."""
    if subscriptions.redis_url(endpoint):
        return True
    if isinstance(request, ASGIRequest):
        # Django's ASGI request says wsgi.multiprocess whatever the server runs.
        return True
    meta = getattr(request, "META", None)
    return not (isinstance(meta, dict) and meta.get("wsgi.multiprocess") is True)


def live_updates(endpoint: EndpointLike, request: Any, *, legacy: bool) -> bool:
    """Whether a client of this request would hear resource updates."""
    return holds_streams(endpoint, request, legacy=legacy) and reaches_every_process(
        endpoint, request
    )


def backend_class(alias: str) -> str:
    """The class name of the task backend ``alias`` names ('' when it cannot be loaded)."""
    try:
        from django.tasks import task_backends
    except ImportError:  # pragma: no cover - the backport, before Django 6.0
        from django_tasks import task_backends  # type: ignore[no-redef,assignment,unused-ignore]
    try:
        return type(task_backends[alias]).__name__
    except Exception:  # an unknown alias or a backend that fails to load: E093 says which
        return ""


_seen_until: dict[str, float] = {}


@receiver(setting_changed)
def forget_workers_seen(setting: str, **kwargs: Any) -> None:
    # Another TASKS is another set of backends, and their workers are yet to be seen.
    if setting in ("TASKS", "MCP_ENDPOINT"):
        _seen_until.clear()


def tasks_runnable(endpoint: EndpointLike) -> bool:
    """Whether a task enqueued now on the endpoint's backend would be run."""
    alias: str = endpoint.settings.TASK_BACKEND
    kind = backend_class(alias)
    if kind == IMMEDIATE:
        return True
    if not kind or kind == DUMMY:
        return False
    if _seen_until.get(alias, 0.0) > time.monotonic():
        return True
    try:
        seen = task_recovery.worker_seen(alias, endpoint.settings)
    except DatabaseError:
        return False
    if seen:
        _seen_until[alias] = time.monotonic() + WORKER_SEEN_CACHE_SECONDS
    return seen

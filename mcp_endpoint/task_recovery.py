"""A task outlives an outage of the database, and a worker that is gone does not leave it
``working``.

Three things, for :mod:`mcp_endpoint.tasks`:

- :class:`Heartbeat`: while a task's tool runs, a thread of the worker writes the time on
  the task every ``TASK_HEARTBEAT_MS``. A worker killed mid-task stops writing it.
- :func:`persist`: the worker's own reads and writes of a task (its outcome above all) are
  tried again while the database is unreachable, for as long as a heartbeat may be late,
  instead of failing the worker's process.
- :func:`abandoned` and :func:`settle_abandoned`: a task still ``working`` whose heartbeat
  is older than three intervals, or whose run the task backend says has ended (or started
  long ago) without the tool ever starting, has lost its worker: it is settled ``failed``.
  ``tasks/get`` settles the task it reads; ``manage.py mcp_task_worker`` settles all of
  them when it starts and after each outage.

A task is settled only while it is still ``working``: an outcome the worker records
meanwhile wins, and a worker that records one after its task was settled finds nothing to
record into (a tool's writes are in the same transaction, so they go too).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import Error as DatabaseError
from django.db import close_old_connections, connection, connections
from django.utils import timezone

from mcp_endpoint import interfaces, outages
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.tasks import FAILED, WORKING

try:  # Django 6.0+
    from django.tasks import task_backends
    from django.tasks.exceptions import TaskException
except ImportError:  # pragma: no cover - the backport, before Django 6.0
    from django_tasks import task_backends  # type: ignore[no-redef,assignment,unused-ignore]
    from django_tasks.exceptions import TaskException  # type: ignore[no-redef,assignment,unused-ignore]

if TYPE_CHECKING:
    from mcp_endpoint.conf import MCPSettings
    from mcp_endpoint.models import ToolTask

logger = logging.getLogger("mcp_endpoint.tasks")

T = TypeVar("T")

LOST = "The worker running this task stopped before the task ended; nothing it did was kept"
# How many heartbeats may be missed before a task's worker counts as gone.
MISSED_HEARTBEATS = 3
# The longest pause between two tries of a write while the database is unreachable.
LONGEST_PAUSE = 2.0
# The backend's statuses of a run that has ended, and of one a worker has claimed.
ENDED = frozenset({"SUCCESSFUL", "FAILED"})
RUNNING = "RUNNING"


def interval(settings: MCPSettings) -> float:
    """Seconds between two heartbeats of a running task."""
    return int(settings.TASK_HEARTBEAT_MS) / 1000


def stale_after(settings: MCPSettings) -> timedelta:
    """How old a heartbeat may be before the task's worker counts as gone."""
    return timedelta(seconds=interval(settings) * MISSED_HEARTBEATS)


def persist(action: Callable[[], T], *, patience: float, what: str) -> T:
    """``action()``, tried again while the database is unreachable, for ``patience``
    seconds at most; then its last error is raised.

    Only for work outside a transaction: the connection a failure broke is closed, and
    the next try opens a new one, as the next request would.
    """
    deadline = time.monotonic() + patience
    pause = 0.1
    while True:
        try:
            return action()
        except DatabaseError as exc:
            if connection.in_atomic_block or time.monotonic() + pause > deadline:
                raise
            outages.report(outages.DATABASE, exc, LONGEST_PAUSE * 30)
            logger.warning("task worker: could not %s (%s); trying again", what, exc)
            close_old_connections()
            time.sleep(pause)  # waiting for the database to come back, bounded by patience
            pause = min(pause * 2, LONGEST_PAUSE)


def beat(task_id: str) -> int:
    """Write the time on a task still working; how many rows were (0 or 1)."""
    from mcp_endpoint.models import ToolTask

    return ToolTask.objects.filter(pk=task_id, status=WORKING).update(heartbeat=timezone.now())


class Heartbeat:
    """A thread that calls :func:`beat` every ``seconds`` until :meth:`stop`.

    A heartbeat that fails (the database is unreachable) is skipped: the next one may get
    through. The thread closes its own connection when it ends.
    """

    def __init__(self, task_id: str, seconds: float) -> None:
        self.task_id = task_id
        self.seconds = seconds
        self.stopped = threading.Event()
        self.thread = threading.Thread(
            target=self.run, name=f"mcp-task-heartbeat-{task_id[:8]}", daemon=True
        )

    def start(self) -> Heartbeat:
        self.thread.start()
        return self

    def stop(self) -> None:
        # Not joined: during an outage the thread may be waiting on a connection, and the
        # worker should not wait for it; it writes nothing once the task has ended.
        self.stopped.set()

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.seconds):
                try:
                    beat(self.task_id)
                except DatabaseError as exc:
                    logger.warning("task %s: heartbeat skipped (%s)", self.task_id, exc)
                    close_old_connections()
        finally:
            connections.close_all()  # this thread's own connections only

    def __enter__(self) -> Heartbeat:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()


def run_status(task: ToolTask, settings: MCPSettings) -> tuple[str, Any] | None:
    """``(status, started_at)`` of the task's last run as its backend knows it; None when
    the backend keeps no results, or no longer has this one."""
    if not task.job:
        return None
    try:
        result = task_backends[settings.TASK_BACKEND].get_result(task.job)
    except (NotImplementedError, TaskException, DatabaseError, KeyError, ValueError):
        # A backend without stored results, a result pruned, an id of another backend.
        return None
    return str(result.status), result.started_at


def abandoned(task: ToolTask, settings: MCPSettings) -> bool:
    """Whether a working task has lost its worker (see the module's docstring)."""
    if task.status != WORKING:
        return False
    limit = timezone.now() - stale_after(settings)
    if task.heartbeat is not None:
        return task.heartbeat < limit
    if task.created > limit:
        return False  # too young to tell a queued task from a lost one
    found = run_status(task, settings)
    if found is None:
        return False
    status, started = found
    if status in ENDED:
        return True  # the run ended and the tool never started: nothing will record it
    return status == RUNNING and started is not None and started < limit


def settle(task: ToolTask) -> bool:
    """Fail ``task`` as lost unless it moved on meanwhile; whether it was settled."""
    from mcp_endpoint.models import ToolTask

    settled = ToolTask.objects.filter(
        pk=task.pk, status=WORKING, heartbeat=task.heartbeat, job=task.job
    ).update(
        status=FAILED,
        error={"code": jsonrpc.INTERNAL_ERROR, "message": LOST},
        status_message="",
        updated=timezone.now(),
    )
    if settled:
        logger.warning("task %s failed: its worker stopped before the task ended", task.pk)
    return bool(settled)


def lost_runs(limit: int = 500) -> list[uuid.UUID]:
    """The backend ids of the last runs of tasks settled as lost (the latest first)."""
    from mcp_endpoint.models import ToolTask

    jobs = (
        ToolTask.objects.filter(status=FAILED, error__message=LOST)
        .exclude(job="")
        .order_by("-updated")
        .values_list("job", flat=True)[:limit]
    )
    runs = []
    for job in jobs:
        with contextlib.suppress(ValueError):  # another backend's kind of id
            runs.append(uuid.UUID(job))
    return runs


def settle_abandoned(limit: int = 500) -> int:
    """Settle every working task that has lost its worker (``limit`` at most); how many."""
    from mcp_endpoint.models import ToolTask

    settled = 0
    working = ToolTask.objects.filter(status=WORKING, expires__gt=timezone.now())
    for task in working.order_by("created")[:limit]:
        endpoint = interfaces.find(task.endpoint)
        if endpoint is not None and abandoned(task, endpoint.settings) and settle(task):
            settled += 1
    return settled


# -- workers that said they are alive ----------------------------------------------------------

# Rows of workers unseen for this long are deleted as others write theirs.
FORGET_WORKERS_AFTER = timedelta(days=1)


def worker_name() -> str:
    """This process, as its worker row names it: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"[:200]


def worker_alive(backend: str, name: str | None = None) -> None:
    """Write that this process's worker of ``backend`` is alive now."""
    from mcp_endpoint.models import TaskWorker

    now = timezone.now()
    TaskWorker.objects.update_or_create(
        name=name or worker_name(), defaults={"backend": backend, "last_seen": now}
    )
    TaskWorker.objects.filter(last_seen__lt=now - FORGET_WORKERS_AFTER).delete()


def worker_gone(name: str | None = None) -> None:
    """Forget this process's worker (it stops cleanly)."""
    from mcp_endpoint.models import TaskWorker

    TaskWorker.objects.filter(name=name or worker_name()).delete()


def last_worker_seen(backend: str) -> Any:
    """When a worker of ``backend`` last said it was alive; None if none ever did."""
    from mcp_endpoint.models import TaskWorker

    return (
        TaskWorker.objects.filter(backend=backend)
        .order_by("-last_seen")
        .values_list("last_seen", flat=True)
        .first()
    )


def worker_seen(backend: str, settings: MCPSettings) -> bool:
    """Whether a worker of ``backend`` said it was alive within three heartbeats."""
    seen = last_worker_seen(backend)
    return seen is not None and seen >= timezone.now() - stale_after(settings)


class WorkerPresence:
    """A thread that writes that this worker process is alive every ``seconds``, from
    :meth:`start` (which writes it once first, in the caller's thread) to :meth:`stop`
    (which forgets the worker). A write that fails (the database is unreachable) is
    skipped: the next one may get through."""

    def __init__(self, backend: str, seconds: float) -> None:
        self.backend = backend
        self.seconds = seconds
        self.name = f"{worker_name()}/{backend}"[:200]
        self.stopped = threading.Event()
        self.thread = threading.Thread(
            target=self.run, name="mcp-task-worker-presence", daemon=True
        )

    def start(self) -> WorkerPresence:
        with contextlib.suppress(DatabaseError):
            worker_alive(self.backend, self.name)
        self.thread.start()
        return self

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.seconds):
                try:
                    worker_alive(self.backend, self.name)
                except DatabaseError as exc:
                    logger.warning("task worker: presence not written (%s)", exc)
                    close_old_connections()
        finally:
            connections.close_all()  # this thread's own connections only

    def stop(self) -> None:
        self.stopped.set()
        with contextlib.suppress(DatabaseError):
            worker_gone(self.name)

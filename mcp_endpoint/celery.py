"""Long-running tools on Celery: a backend of Django's task framework on Celery's public API.

Many DRF products already run Celery workers on RabbitMQ or Redis. ``CeleryBackend`` lets
the endpoint's tasks (:func:`mcp_endpoint.tasks.run_tool_task`, and any other task of
Django's framework) run on them::

    # settings.py
    TASKS = {
        "default": {
            "BACKEND": "mcp_endpoint.celery.CeleryBackend",
            "OPTIONS": {"APP": "project.celery.app", "QUEUE": "mcp"},  # both optional
        }
    }

    celery -A project.celery worker -Q mcp

Why a backend of our own: the published ones did not fit the versions this app supports.
django-tasks-celery needs Django 6 and Python 3.12 (no backport, no Django 4.2 or 5.2);
django-tasks-fennel needs Django 5.2, has one release, and registers with Celery only the
tasks built by its own task class, which a task defined for another default backend is
not. This one is small: every task of the framework travels as one Celery task,
:data:`RUN`, naming the framework task by its import path.

What it does for a task that must never be left running without a word:

- the message is sent once the enqueuing transaction commits (a worker never looks for a
  task row that is not there yet);
- it is acknowledged after the run (``acks_late``) and given back when its worker is
  killed (``reject_on_worker_lost``), so that a run that never started is retried by the
  next worker; :mod:`mcp_endpoint.tasks` never starts a tool twice for one enqueue (a
  redelivered run whose tool had started leaves the task to the heartbeat rule, which
  fails it as lost);
- each worker process writes that it is alive (:class:`~mcp_endpoint.task_recovery.
  WorkerPresence`), from the moment it is ready until it stops.

Results are not kept by Celery: the endpoint keeps its tasks' outcomes itself, so
``get_result`` is not supported (``supports_get_result`` is false). Celery is imported
only where this module is: a host without Celery never loads it.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from celery import Celery, current_app, shared_task
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from mcp_endpoint import task_recovery
from mcp_endpoint.conf import backend_class, mcp_settings

try:  # Django 6.0+
    from django.tasks import Task, TaskResult, TaskResultStatus
    from django.tasks.backends.base import BaseTaskBackend
    from django.tasks.signals import task_enqueued
except ImportError:  # pragma: no cover - the backport, before Django 6.0
    from django_tasks.backends.base import BaseTaskBackend  # type: ignore[no-redef,assignment,unused-ignore]
    from django_tasks.base import Task, TaskResult, TaskResultStatus  # type: ignore[no-redef,assignment,unused-ignore]
    from django_tasks.signals import task_enqueued  # type: ignore[no-redef,assignment,unused-ignore]

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

# The one Celery task every framework task travels as.
RUN = "mcp_endpoint.celery.run"
DEFAULT_QUEUE = "default"
# Celery's priorities run 0 (lowest, on RabbitMQ) to 9; the framework's -100 to 100.
CELERY_PRIORITIES = 9


class CeleryBackend(BaseTaskBackend):
    """Runs the framework's tasks on Celery workers.

    ``OPTIONS``: ``APP``, the import path of the Celery app (default: Celery's current
    app); ``QUEUE``, the Celery queue for tasks left on the framework's default queue
    (default: Celery's own default queue). A task's other ``queue_name`` is its Celery
    queue.
    """

    supports_defer = True
    supports_async_task = True
    supports_priority = True
    supports_get_result = False

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        self.app_path: str | None = self.options.get("APP")
        self.queue: str | None = self.options.get("QUEUE")

    @property
    def app(self) -> Celery:
        if self.app_path:
            app: Celery = import_string(self.app_path)
            return app
        found: Celery = current_app._get_current_object()
        return found

    def validate_task(self, task: Task[..., Any]) -> None:
        super().validate_task(task)
        if task.takes_context:
            from django.core.exceptions import ImproperlyConfigured

            raise ImproperlyConfigured(
                f"{task.module_path} takes a context, which CeleryBackend does not give."
            )

    def send_options(self, task: Task[..., Any], result_id: str) -> dict[str, Any]:
        options: dict[str, Any] = {"task_id": result_id}
        queue = self.queue if task.queue_name == DEFAULT_QUEUE else task.queue_name
        if queue:
            options["queue"] = queue
        if task.priority:
            options["priority"] = round((task.priority + 100) * CELERY_PRIORITIES / 200)
        if task.run_after is not None:
            options["eta"] = task.run_after
        return options

    def enqueue(self, task: Task[..., Any], args: Any, kwargs: Any) -> TaskResult[Any]:  # type: ignore[type-arg,unused-ignore]
        self.validate_task(task)
        result_id = str(uuid.uuid4())
        app, options = self.app, self.send_options(task, result_id)
        message = [task.module_path, list(args), dict(kwargs)]
        # After the commit: the worker reads what the enqueuing transaction wrote.
        transaction.on_commit(lambda: app.send_task(RUN, args=message, **options))
        result = TaskResult(
            task=task,
            id=result_id,
            status=TaskResultStatus.READY,
            enqueued_at=timezone.now(),
            started_at=None,
            finished_at=None,
            last_attempted_at=None,
            args=list(args),
            kwargs=dict(kwargs),
            backend=self.alias,
            errors=[],
            worker_ids=[],
        )
        task_enqueued.send(type(self), task_result=result)
        return result

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        from django.core.checks import Error

        messages = list(super().check(**kwargs))
        if self.app_path:
            try:
                import_string(self.app_path)
            except ImportError as exc:
                messages.append(
                    Error(
                        f"Task backend {self.alias!r}: APP {self.app_path!r} cannot be "
                        f"imported ({exc}).",
                        hint="Name the module attribute that holds the Celery app.",
                        id="mcp_endpoint.E094",
                    )
                )
        return messages


@shared_task(name=RUN, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run(module_path: str, args: list[Any], kwargs: dict[str, Any]) -> None:
    """Run the framework task at ``module_path`` on this Celery worker."""
    task = import_string(module_path)
    if not isinstance(task, Task):
        raise TypeError(f"{module_path} is not a task of Django's task framework")
    task.call(*args, **kwargs)


# -- this worker's presence ------------------------------------------------------------------


def own_aliases() -> list[str]:
    """The aliases in ``TASKS`` that name this backend or a host's subclass of it (one
    that sets its own queue or options, say)."""
    tasks = getattr(settings, "TASKS", None) or {}
    return [alias for alias, config in tasks.items() if is_own_backend(config.get("BACKEND"))]


def is_own_backend(path: Any) -> bool:
    cls = backend_class(path)
    return cls is not None and issubclass(cls, CeleryBackend)


_presences: list[task_recovery.WorkerPresence] = []


@worker_ready.connect
def worker_is_ready(**kwargs: Any) -> None:
    seconds = task_recovery.interval(mcp_settings)
    for alias in own_aliases():
        _presences.append(task_recovery.WorkerPresence(alias, seconds).start())


@worker_shutdown.connect
def worker_stops(**kwargs: Any) -> None:
    while _presences:
        _presences.pop().stop()

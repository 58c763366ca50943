"""``manage.py mcp_task_worker``: django-tasks-db's ``db_worker``, which outlives an outage.

Takes the same options as ``db_worker`` and runs the same worker, with three differences:

- When the database cannot be reached (to claim the next task, or to record how a task
  ended), ``db_worker`` exits. This worker logs the outage once in a while, waits, and
  goes on when the database is back.
- When it starts, and again after each outage, it fails the long-running tools' tasks
  whose worker is gone (:func:`mcp_endpoint.task_recovery.settle_abandoned`): a worker
  killed mid-task leaves its task ``failed``, not ``working`` until it expires.
- A run of the backend whose outcome could not be recorded, or whose worker was killed,
  is marked failed in the backend's table once its tool's task has been settled (checked
  between runs, every three heartbeats at most).

Run it instead of ``db_worker``, under a process supervisor that restarts it if it dies.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from django.core.management.base import CommandError
from django.db import Error as DatabaseError
from django.db import close_old_connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from mcp_endpoint import outages, task_recovery
from mcp_endpoint.conf import mcp_settings

logger = logging.getLogger("mcp_endpoint.tasks")

# The longest wait between two looks at an unreachable database, in seconds.
LONGEST_WAIT = 5.0
# How often an outage is logged, in seconds.
REPORT_INTERVAL = 60


class WorkerLost(Exception):
    """What the backend records of a run whose worker stopped before it ended."""


class ResilientWorker(Worker):
    """django-tasks-db's worker, kept running through database outages."""

    next_settle = 0.0

    def run(self) -> None:
        wait = 0.5
        while self.running:
            try:
                self.settle()
                super().run()
                return  # --batch or --max-tasks said so
            except DatabaseError as exc:
                outages.report(outages.DATABASE, exc, REPORT_INTERVAL)
                close_old_connections()
                # Once it is running, coming back needs no thundering-herd delay.
                self.startup_delay = False
                time.sleep(wait)  # waiting for the database; bounded, and the loop ends on a signal
                wait = min(wait * 2, LONGEST_WAIT)

    def settle(self) -> None:
        """Fail the tool tasks whose worker is gone, and the backend's runs of them that
        it still has as running (a worker killed mid-run never said how the run ended)."""
        every = task_recovery.stale_after(mcp_settings).total_seconds()
        self.next_settle = time.monotonic() + every
        settled = task_recovery.settle_abandoned()
        if settled:
            logger.warning("failed %d task(s) whose worker had stopped", settled)
        runs = DBTaskResult.objects.running().filter(
            backend_name=self.backend_name, id__in=task_recovery.lost_runs()
        )
        for run in runs:
            run.set_failed(WorkerLost(task_recovery.LOST))

    def run_task(self, db_task_result: DBTaskResult) -> None:
        try:
            super().run_task(db_task_result)
            # Between two runs, now and then: an idle worker settles when it starts.
            if time.monotonic() >= self.next_settle:
                self.settle()
        except DatabaseError as exc:
            # The backend could not record the run's outcome (its own retries spent). The
            # tool's task settles from its heartbeat; this worker goes on with the next.
            outages.report(outages.DATABASE, exc, REPORT_INTERVAL)
            logger.error(
                "task run %s: its outcome could not be recorded (%s)", db_task_result.id, exc
            )
            close_old_connections()


class Command(DatabaseWorkerCommand):
    help = "Run a database task worker that outlives database outages (see db_worker)."

    def handle(self, *args: Any, **options: Any) -> None:
        # db_worker's own handle(), with this module's worker; the same options.
        self.configure_logging(options["verbosity"])
        queue_names = options["queue_name"].split(",")
        arguments: dict[str, Any] = {
            "queue_names": queue_names,
            "interval": options["interval"],
            "batch": options["batch"],
            "backend_name": options["backend_name"],
            "startup_delay": options["startup_delay"],
            "max_tasks": options["max_tasks"],
            "worker_id": options["worker_id"],
        }
        if "exclude_queues" in options:  # django-tasks-db 0.13 and later
            excluded = options["exclude_queues"].split(",") if options["exclude_queues"] else []
            if excluded and "*" not in queue_names:
                raise CommandError("--exclude-queues can only be used with --queue-name=*")
            arguments["excluded_queue_names"] = excluded
        worker = ResilientWorker(**arguments)
        if options["reload"] and not options["batch"]:
            if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
                worker.configure_signals()  # only the reloaded child handles signals
                run_with_reloader(lambda: self.run_seen(worker, options["backend_name"]))
            else:
                run_with_reloader(worker.run)
        else:
            worker.configure_signals()
            self.run_seen(worker, options["backend_name"])

    def run_seen(self, worker: ResilientWorker, backend: str) -> None:
        """Run ``worker``, writing that it is alive meanwhile (check W091, mcp_doctor and the
        tasks extension's announcement read it)."""
        presence = task_recovery.WorkerPresence(backend, task_recovery.interval(mcp_settings))
        presence.start()
        self.stdout.write(f"Task worker {presence.name} ready (backend {backend!r})")
        self.stdout.flush()
        try:
            worker.run()
        finally:
            presence.stop()

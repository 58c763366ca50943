"""``manage.py mcp_prune_tasks``: delete tasks past their expiry (``TASK_TTL_MS``).

Expired tasks also go as new tasks are created; run this daily (cron, a systemd timer, the
host's task queue) so that they go when none are. ``--finished-days`` also deletes
finished tasks (completed, failed, cancelled) last updated that many days ago, before
their expiry. A task still working or waiting for input is deleted only once expired, so
the command is safe to run while workers run.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_endpoint.models import ToolTask


class Command(BaseCommand):
    help = "Delete expired tool tasks, and with --finished-days, finished ones older than that."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--finished-days",
            type=int,
            default=None,
            help="Also delete finished tasks last updated this many days ago or more.",
        )
        parser.add_argument("--database", default=None, help="The database alias to prune.")

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["finished_days"]
        if days is not None and days < 0:
            raise CommandError("--finished-days must be 0 or more.")
        deleted = ToolTask.objects.using(options["database"]).prune(days)
        also = "" if days is None else f", or finished {days} day(s) ago or more"
        self.stdout.write(f"Deleted {deleted} task(s) past their expiry{also}.")

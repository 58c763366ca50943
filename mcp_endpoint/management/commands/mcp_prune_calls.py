"""``manage.py mcp_prune_calls``: delete call-log rows older than ``LOG_RETENTION_DAYS``.

Run it daily (cron, a systemd timer, the host's task queue); ``--days`` overrides the
setting for one run.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_endpoint.calllog import prune
from mcp_endpoint.conf import mcp_settings


class Command(BaseCommand):
    help = "Delete tool-call log rows older than MCP_ENDPOINT['LOG_RETENTION_DAYS'] days."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--days", type=int, default=None, help="Keep this many days instead of the setting."
        )
        parser.add_argument("--database", default=None, help="The database alias to prune.")

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["days"] if options["days"] is not None else mcp_settings.LOG_RETENTION_DAYS
        if days is None:
            self.stdout.write("LOG_RETENTION_DAYS is None: the call log is kept in full.")
            return
        if days < 0:
            raise CommandError("--days must be 0 or more.")
        deleted = prune(days, using=options["database"])
        self.stdout.write(f"Deleted {deleted} tool call(s) older than {days} day(s).")

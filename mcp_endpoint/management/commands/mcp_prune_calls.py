"""``manage.py mcp_prune_calls``: delete call-log rows older than ``LOG_RETENTION_DAYS``.

Run it daily (cron, a systemd timer, the host's task queue); ``--days`` overrides the
setting for one run. With ``LOG_SPOOL_DIR`` set it first writes what the workers of the
machine it runs on have spooled (the files of those that died included) to the call log,
and deletes the spool's marks of files finished a day ago. It then counts the hours of the
admin overview's longest period that are not counted yet (everyone's calls, in the current
time zone), so that the first look at the overview does not wait for them; ``--no-count``
leaves them to that first look.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone

from mcp_endpoint import callspool, overview, rollup
from mcp_endpoint.calllog import prune
from mcp_endpoint.conf import mcp_settings


class Command(BaseCommand):
    help = "Delete tool-call log rows older than MCP_ENDPOINT['LOG_RETENTION_DAYS'] days."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--days", type=int, default=None, help="Keep this many days instead of the setting."
        )
        parser.add_argument("--database", default=None, help="The database alias to prune.")
        parser.add_argument(
            "--no-count",
            action="store_true",
            help="Leave the overview's hours to be counted when it is first read.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["days"] if options["days"] is not None else mcp_settings.LOG_RETENTION_DAYS
        if days is not None and days < 0:
            raise CommandError("--days must be 0 or more.")
        if mcp_settings.LOG_SPOOL_DIR:
            written = callspool.write_spooled(mcp_settings.LOG_SPOOL_DIR)
            self.stdout.write(f"Wrote {written} spooled tool call(s) of other workers.")
        callspool.prune_marks(using=options["database"])
        if days is None:
            self.stdout.write("LOG_RETENTION_DAYS is None: the call log is kept in full.")
        else:
            deleted = prune(days, using=options["database"])
            self.stdout.write(f"Deleted {deleted} tool call(s) older than {days} day(s).")
        if options["no_count"]:
            return
        # The overview reads the default database, and counts hours on these two only.
        using = options["database"] or DEFAULT_DB_ALIAS
        if using != DEFAULT_DB_ALIAS or connections[using].vendor not in rollup.VENDORS:
            return
        now = timezone.now()
        longest = max(overview.PERIODS, key=lambda period: period.length)
        counted = rollup.count_ahead(overview.Interval.ending_now(longest, now), now)
        self.stdout.write(f"Counted {counted} hour(s) of the call log for the overview.")

"""``manage.py mcp_oauth_cleanup``: forget what open registration and redeemed codes leave.

Anyone may register a client (MCP clients register anonymously), so a table of clients that
registered and never came back grows without bound. This deletes the self-registered ones
(RFC 7591) older than ``MCP_ENDPOINT["OAUTH_UNUSED_CLIENT_SECONDS"]`` that never obtained a
token, and the records of redeemed authorisation codes whose tokens are all gone. Run it
from cron beside the toolkit's ``cleartokens`` and ``clearcimdapplications``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from mcp_endpoint import compat
from mcp_endpoint.conf import mcp_settings


class Command(BaseCommand):
    help = (
        "Delete self-registered OAuth clients that never obtained a token, once older than "
        "MCP_ENDPOINT['OAUTH_UNUSED_CLIENT_SECONDS'], and records of redeemed codes whose "
        "tokens are gone."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than",
            type=int,
            default=None,
            help="Age in seconds instead of MCP_ENDPOINT['OAUTH_UNUSED_CLIENT_SECONDS'].",
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=1000,
            help="Clients locked and deleted per transaction (default: 1000).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        age = options["older_than"]
        if age is None:
            age = mcp_settings.OAUTH_UNUSED_CLIENT_SECONDS
        if not isinstance(age, int) or age < 0:
            raise CommandError("The age must be a number of seconds, 0 or more.")
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be a positive integer.")
        if not compat.oauth_enabled():
            raise CommandError(
                "OAuth for MCP clients is off (django-oauth-toolkit 3.4 or later is not in "
                "INSTALLED_APPS): there are no self-registered clients to delete."
            )
        from mcp_endpoint.oauth.cleanup import delete_spent_redemptions, delete_unused_clients

        clients = delete_unused_clients(
            timezone.now() - timedelta(seconds=age), options["batch_size"]
        )
        records = delete_spent_redemptions()
        self.stdout.write(
            f"Deleted {clients} unused self-registered client(s) and {records} record(s) "
            "of redeemed codes"
        )

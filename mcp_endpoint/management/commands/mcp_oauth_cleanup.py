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
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)
from oauth2_provider.settings import oauth2_settings

from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.oauth.models import RedeemedAuthorizationCode


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
        clients = delete_unused_clients(
            timezone.now() - timedelta(seconds=age), options["batch_size"]
        )
        records = delete_spent_redemptions()
        self.stdout.write(
            f"Deleted {clients} unused self-registered client(s) and {records} record(s) "
            "of redeemed codes"
        )


def delete_unused_clients(registered_before: Any, batch_size: int) -> int:
    """Delete self-registered clients registered before the time given that never got a token."""
    application_model = get_application_model()
    candidates = application_model.objects.filter(
        registration_source=application_model.RegistrationSource.DCR,
        created__lt=registered_before,
    ).order_by("pk")
    deleted = 0
    last_pk = None
    while True:
        page = candidates if last_pk is None else candidates.filter(pk__gt=last_pk)
        batch = list(page.values_list("pk", flat=True)[:batch_size])
        if not batch:
            return deleted
        last_pk = batch[-1]
        with transaction.atomic():
            # Locked, so a token issued meanwhile is either seen below or waits for the
            # delete to end; it is never deleted along with a client that just got it.
            locked = list(
                application_model.objects.select_for_update()
                .filter(pk__in=batch)
                .values_list("pk", "client_id")
            )
            used = used_applications([pk for pk, _ in locked])
            redeemed = set(
                RedeemedAuthorizationCode.objects.filter(
                    client_id__in=[client_id for _, client_id in locked]
                ).values_list("client_id", flat=True)
            )
            unused = [
                pk for pk, client_id in locked if pk not in used and client_id not in redeemed
            ]
            application_model.objects.filter(pk__in=unused).delete()
            deleted += len(unused)


def used_applications(pks: list[Any]) -> set[Any]:
    """Of the applications ``pks``, those that obtained a token or are in an authorisation.

    The registration access token (RFC 7592) is issued to every registered client, so it
    does not count.
    """
    used: set[Any] = set()
    tokens = get_access_token_model().objects.filter(application_id__in=pks)
    used.update(
        tokens.exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE).values_list(
            "application_id", flat=True
        )
    )
    for model in (get_refresh_token_model(), get_grant_model()):
        used.update(
            model.objects.filter(application_id__in=pks).values_list("application_id", flat=True)
        )
    return used


def delete_spent_redemptions() -> int:
    """Delete records of redeemed codes with nothing left to revoke.

    The newest record of each client stays: it shows the client once obtained a token, so
    :func:`delete_unused_clients` does not take it for one that never did.
    """
    access_token_model = get_access_token_model()
    refresh_token_model = get_refresh_token_model()
    newest = set(
        RedeemedAuthorizationCode.objects.values("client_id")
        .annotate(newest=Max("pk"))
        .values_list("newest", flat=True)
    )
    spent = []
    for record in RedeemedAuthorizationCode.objects.exclude(pk__in=newest).iterator():
        live_access = access_token_model.objects.filter(
            token_checksum=record.access_token_checksum
        ).exists()
        live_refresh = record.token_family is not None and (
            refresh_token_model.objects.filter(
                token_family=record.token_family, revoked__isnull=True
            ).exists()
        )
        if not live_access and not live_refresh:
            spent.append(record.pk)
    RedeemedAuthorizationCode.objects.filter(pk__in=spent).delete()
    return len(spent)

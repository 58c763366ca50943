"""What ``manage.py mcp_oauth_cleanup`` deletes: self-registered clients that never came
back, and records of redeemed codes whose tokens are all gone."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)
from oauth2_provider.settings import oauth2_settings

from mcp_endpoint.oauth.models import RedeemedAuthorizationCode


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

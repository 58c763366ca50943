"""Ending an application's access: every token and pending code, for everyone or one user.

The admin's action and the user's connected-apps page share it; neither needs the other.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from oauth2_provider.models import (
    get_access_token_model,
    get_grant_model,
    get_refresh_token_model,
    revoke_access_token,
)


def revoke_application_tokens(application: Any, user: Any = None) -> int:
    """Revoke every access and refresh token and pending code of ``application`` (of one
    ``user`` only, when given); the number of access tokens revoked."""
    mine = (
        {"application": application} if user is None else {"application": application, "user": user}
    )
    revoked = 0
    with transaction.atomic():
        for token in get_access_token_model().objects.filter(**mine):
            revoke_access_token(token)
            revoked += 1
        for refresh in get_refresh_token_model().objects.filter(**mine, revoked__isnull=True):
            refresh.revoke()
        get_grant_model().objects.filter(**mine).delete()
    return revoked

"""The product's own credential: a signed user id in an ``X-Api-Token`` header."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core import signing
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

SALT = "headerauth.api-token"
MAX_AGE = 3600


def issue(user: Any) -> str:
    """A token for ``user``, good for an hour."""
    return signing.TimestampSigner(salt=SALT).sign(str(user.pk))


class HeaderTokenAuthentication(BaseAuthentication):
    """``X-Api-Token: <token>``; no header, no opinion; a bad token is refused."""

    # What messages call the credential (a 401 at /mcp, a refused call, W030).
    mcp_credential_name = "product API tokens"

    def authenticate(self, request: Request) -> tuple[Any, str] | None:
        token = request.META.get("HTTP_X_API_TOKEN")
        if not token:
            return None
        try:
            pk = signing.TimestampSigner(salt=SALT).unsign(token, max_age=MAX_AGE)
        except signing.BadSignature as exc:
            raise exceptions.AuthenticationFailed("Invalid or expired API token.") from exc
        user = get_user_model()._default_manager.filter(pk=pk, is_active=True).first()
        if user is None:
            raise exceptions.AuthenticationFailed("Invalid or expired API token.")
        return user, token

    def authenticate_header(self, request: Request) -> str:
        return 'ApiToken realm="headerauth", header="X-Api-Token"'

"""A new API key's secret, shown once on the page after the POST that made it.

A page that creates a key answers its POST with a redirect, so that reloading the next page
creates nothing. The secret still has to reach that next page, and it must not rest in the
server's storage (database, cache, session), where it would outlive the moment it is shown.
It travels in a cookie instead: signed, ``HttpOnly``, ``SameSite=Strict``, limited to the
reveal page's path and to a few minutes. The reveal page checks it against the key's digest,
shows it, and deletes the cookie; a reload finds no cookie and says the key is not shown
again.
"""

from __future__ import annotations

import hmac

from django.core.signing import BadSignature
from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers

from mcp_endpoint.models import AbstractAPIKey, digest_of

COOKIE = "mcp_endpoint_new_key"
SALT = "mcp_endpoint.reveal"
# Long enough for a redirect on a slow connection, short enough to be gone soon after.
MAX_AGE_SECONDS = 300


def stash(
    response: HttpResponse, request: HttpRequest, key: AbstractAPIKey, raw: str, path: str
) -> None:
    """Hand ``raw``, the secret of ``key``, to the reveal page at ``path``."""
    response.set_signed_cookie(
        COOKIE,
        f"{key.pk}:{raw}",
        salt=SALT,
        max_age=MAX_AGE_SECONDS,
        path=path,
        secure=request.is_secure(),
        httponly=True,
        samesite="Strict",
    )


def take(request: HttpRequest, key: AbstractAPIKey) -> str | None:
    """The secret of ``key`` if this request carries it (the first visit after creation)."""
    try:
        value = request.get_signed_cookie(COOKIE, salt=SALT, max_age=MAX_AGE_SECONDS)
    except (KeyError, BadSignature):
        return None
    if value is None:
        return None
    pk, sep, raw = value.partition(":")
    if not sep or pk != str(key.pk) or not hmac.compare_digest(digest_of(raw), key.digest):
        return None
    return raw


def forget(response: HttpResponse, path: str) -> HttpResponse:
    """Delete the cookie, and keep the page out of every cache (it may hold a secret)."""
    response.delete_cookie(COOKIE, path=path, samesite="Strict")
    add_never_cache_headers(response)
    return response

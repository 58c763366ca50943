"""Credentials: API keys, OAuth access tokens, and whatever else the host's DRF accepts.

The MCP transport asks :func:`authenticate` for the caller of a request; it runs the DRF
authentication classes the ``AUTHENTICATION_CLASSES`` setting names, the same classes a
host lists in its REST API, so a key or a token works the same in both places.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.http import HttpRequest
from rest_framework import HTTP_HEADER_ENCODING, exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.parsers import FormParser, JSONParser
from rest_framework.request import Request

from mcp_endpoint import compat, key_cache, key_memory, permissions, scopes
from mcp_endpoint.credential import Credential
from mcp_endpoint.last_use import note_key_use, note_token_use
from mcp_endpoint.models import (
    AbstractAPIKey,
    digest_of,
    get_api_key_model,
    split_key,
)

logger = logging.getLogger("mcp_endpoint.authentication")


# Classes that read every ``Authorization: Bearer`` value and refuse those that are not
# theirs (simplejwt's), and classes that pass over such values (the app's); by class name,
# so that optional packages need not be installed to be named. DRF stops at the first class
# that refuses: listed first, the former refuse API keys and OAuth tokens (check W110).
BEARER_CLAIMING_CLASSES = frozenset(
    {"JWTAuthentication", "JWTStatelessUserAuthentication", "JWTTokenUserAuthentication"}
)
BEARER_SHARING_CLASSES = frozenset(
    {"APIKeyAuthentication", "OAuth2TokenAuthentication", "OAuth2Authentication"}
)


class CredentialRefused(Exception):
    """A credential was presented and refused (unknown, revoked, expired, wrong audience):
    ``status`` 401; or the request carrying it was refused (403: a browser session without
    its CSRF token, as ``SessionAuthentication`` refuses it on REST)."""

    def __init__(self, detail: str, *, status: int = 401) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status


class APIKeyAuthentication(BaseAuthentication):
    """DRF authentication by ``Authorization: Bearer <key>`` for keys made in the admin.

    Put it in ``REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"]`` so the REST API accepts
    the same keys as ``/mcp``, and :class:`~mcp_endpoint.permissions.HasScopes` in
    ``DEFAULT_PERMISSION_CLASSES`` so a key's scopes mean on REST what they mean there (on
    a view that does not list it, this class applies it). Bearer values that are not
    key-shaped are left to the next class (an OAuth token, say). A refused key says only
    that it is invalid, never whether it exists. Nothing is written: the key's last use is
    recorded after the answer (:mod:`mcp_endpoint.last_use`).
    """

    keyword = "Bearer"
    www_authenticate_realm = "api"

    def authenticate(self, request: Request) -> tuple[Any, AbstractAPIKey] | None:
        raw = bearer_value(request)
        if raw is None:
            return None
        prefix = split_key(raw)
        if prefix is None or not prefix.startswith(_key_prefix()):
            return None
        # Hashed once: the digest finds the key in the cache and in the database alike.
        digest = digest_of(raw)
        # This worker's memory first (no round trip at all), then the shared cache, then
        # the database; what cannot be kept (the expiry against the clock) is checked on
        # every request.
        key = key_memory.get(digest)
        cached = key is not None
        if key is None:
            key, cached = _look_up_key(digest)
        if key is None or not key.is_usable() or not key.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid API key.")
        note_key_use(key, cached=cached)
        permissions.apply_unlisted(request, key)
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="{self.www_authenticate_realm}"'


def _look_up_key(digest: str) -> tuple[AbstractAPIKey | None, bool]:
    """The key of ``digest`` from the shared cache or the database (and whether it came
    from the cache), remembered when it is usable."""
    mark = key_memory.begin()
    key = key_cache.get(digest)
    cached = key is not None
    if key is None:
        key = get_api_key_model()._default_manager.get_for_digest(digest)
        if key is not None and key.is_usable() and key.user.is_active:
            key_cache.remember(key)
    if key is not None and key.is_usable() and key.user.is_active:
        key_memory.remember(key, mark)
    return key, cached


def _key_prefix() -> str:
    from mcp_endpoint.conf import mcp_settings

    return f"{mcp_settings.API_KEY_PREFIX}_"


class OAuth2TokenAuthentication(BaseAuthentication):
    """django-oauth-toolkit's access tokens, with their audience checked by the toolkit.

    The toolkit refuses a token bound to another resource (RFC 8707) but accepts one bound
    to none, which would then be good at every service of the site; such a token is refused
    here unless ``MCP_ENDPOINT["OAUTH_ACCEPT_UNBOUND_TOKENS"]`` is on.

    Use it in ``REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"]`` instead of the toolkit's
    own class, so a token is read on REST as at ``/mcp``; its scopes are decided by
    :class:`~mcp_endpoint.permissions.HasScopes`, as an API key's are.

    The toolkit's own class does the checking, imported on first use, so that this class can
    be named (it is in the default ``AUTHENTICATION_CLASSES``) where the toolkit is not
    installed. Where OAuth for MCP clients is off (no toolkit, or one older than it needs:
    :func:`mcp_endpoint.compat.oauth_enabled`) it passes every bearer value to the next
    class, as it passes over API keys: the host's own OAuth class, if it has one.

    The toolkit reads form fields for a token in the body; an MCP body is JSON, so the
    Django request is handed over as it is, and the JSON is not parsed a second time here.
    """

    www_authenticate_realm = "api"
    # The toolkit's class whose check this one runs: a view that lists either takes the
    # other's tokens (mcp_endpoint.rest_framework.credentials).
    toolkit_counterpart = "OAuth2Authentication"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        if bearer_value(request) is None or not compat.oauth_enabled():
            return None
        result: tuple[Any, Any] | None = self.toolkit_authentication().authenticate(
            request._request
        )
        if result is None and getattr(request._request, "oauth2_error", None):
            request.oauth2_error = request._request.oauth2_error  # type: ignore[attr-defined]
        if result is not None and not getattr(result[0], "is_active", True):
            # The toolkit does not look at the user: a deactivated one is refused here, as
            # DRF's token and password classes refuse them and as an API key is.
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if result is not None and not getattr(result[1], "resource", None):
            from mcp_endpoint.conf import mcp_settings

            if not mcp_settings.OAUTH_ACCEPT_UNBOUND_TOKENS:
                raise exceptions.AuthenticationFailed(
                    "This access token is not bound to a resource; ask for one with "
                    "resource=<the URL of this endpoint>."
                )
        if result is not None:
            from mcp_endpoint.oauth.machine import refuse_revoked

            revoked = refuse_revoked(result[1])
            if revoked is not None:
                raise exceptions.AuthenticationFailed(revoked)
            note_token_use(result[1])
            permissions.apply_unlisted(request, result[1])
        return result

    def authenticate_header(self, request: Request) -> str:
        if not compat.oauth_enabled():
            return f'Bearer realm="{self.www_authenticate_realm}"'
        return str(self.toolkit_authentication().authenticate_header(request))

    def toolkit_authentication(self) -> Any:
        from oauth2_provider.contrib.rest_framework import OAuth2Authentication

        toolkit = OAuth2Authentication()
        toolkit.www_authenticate_realm = self.www_authenticate_realm
        return toolkit


def bearer_value(request: Request | HttpRequest) -> str | None:
    # From META, as DRF's get_authorization_header() read it before it went through
    # request.headers, which builds a dict of every header on each request.
    header = request.META.get("HTTP_AUTHORIZATION", b"")
    if isinstance(header, str):
        header = header.encode(HTTP_HEADER_ENCODING)
    header = header.split()
    if len(header) != 2 or header[0].lower() != b"bearer":
        return None
    try:
        return header[1].decode("ascii")
    except UnicodeDecodeError:
        return None


def has_authorization(request: HttpRequest) -> bool:
    return bool(request.META.get("HTTP_AUTHORIZATION"))


def drf_request(request: HttpRequest, classes: Sequence[type[BaseAuthentication]]) -> Request:
    """The one DRF request the transport makes of ``request``: credential and throttles."""
    return Request(
        request,
        parsers=[JSONParser(), FormParser()],
        authenticators=[cls() for cls in classes],
    )


def authenticate(drf_request: Request) -> Credential | None:
    """The credential of ``drf_request``, None when it carries none, or :class:`CredentialRefused`.

    A presented credential that no class accepts is refused, not ignored: a client that
    sent a stale token must learn so (``error="invalid_token"``).
    """
    try:
        user = drf_request.user
    except exceptions.AuthenticationFailed as exc:
        raise CredentialRefused(str(exc.detail)) from exc
    except exceptions.PermissionDenied as exc:
        # SessionAuthentication's CSRF check: the caller is known, the request forbidden.
        raise CredentialRefused(str(exc.detail), status=403) from exc
    auth = drf_request.auth
    # A class that accepted the request is the credential, as for REST, even when its user
    # is anonymous: a product's team or service tokens authenticate as AnonymousUser with
    # the token in request.auth, which the view's permissions read.
    authenticated = user is not None and user.is_authenticated
    if not authenticated and (drf_request.successful_authenticator is None or auth is None):
        if has_authorization(drf_request._request):
            raise CredentialRefused("Invalid credential.")
        return None
    return Credential(
        user=user,
        auth=auth,
        scopes=scopes.held_scopes(auth),
        authenticator=drf_request.successful_authenticator,
    )


def authenticate_again(
    request: HttpRequest,
    classes: Sequence[type[BaseAuthentication]],
    credential: Credential | None,
) -> Credential | None:
    """The credential ``request`` carries now, read as the transport read it first, for a
    stream that outlives its request and must end once its credential no longer holds.

    Raises :class:`CredentialRefused` when the classes refuse it now (revoked, expired,
    its user deactivated) or read another caller from it. An API key is read through the
    worker's memory of keys (or the key cache), so the check costs no query.
    """
    current = authenticate(drf_request(request, classes))
    if not same_caller(current, credential):
        raise CredentialRefused("The credential is no longer the one the stream was opened with.")
    return current


def same_caller(first: Credential | None, second: Credential | None) -> bool:
    if first is None or second is None:
        return first is second
    return first.ident() == second.ident() and getattr(first.user, "pk", None) == getattr(
        second.user, "pk", None
    )

"""Open dynamic client registration, bounded: the checks the toolkit leaves to its host.

django-oauth-toolkit's registration endpoint (RFC 7591) creates the application; MCP
clients register anonymously, so ``OAUTH2_PROVIDER["DCR_REGISTRATION_PERMISSION_CLASSES"]``
lets anyone in, and this module puts limits in front of it:

- a throttle per client address (``MCP_ENDPOINT["OAUTH_REGISTRATION_THROTTLE_CLASSES"]``,
  ``OAUTH_REGISTRATION_RATE``);
- policies on the metadata (``OAUTH_REGISTRATION_POLICY_CLASSES``): which redirect URIs a
  client may register, and what its ``application_type`` allows.

The same redirect-URI policy applies to client ID metadata documents through
:class:`MetadataDocumentFetcher`, so a client cannot get around it by hosting a document
instead of registering.

Whatever the policies, a registration is refused (``invalid_client_metadata``) when it holds
text no database stores (NUL, a lone surrogate) or asks for a grant or response type the
authorisation server metadata does not advertise: an anonymous registrant must not get a
``client_credentials`` client, whose tokens name no user. A redirect URI holding whitespace
or a control character is refused (:func:`redirect_uri_character_refusal`), and a
registration is kept only when the list the toolkit stored reads back as exactly the list
that was checked: the toolkit keeps the URIs in one space-separated text field, so
``"http://127.0.0.1/cb https://evil.example/steal"`` would otherwise be checked as one
loopback URI and stored as two.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
import unicodedata
from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.request import validate_host
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher
from oauth2_provider.models import get_application_model
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.oauth.parameters import is_storable, strings_in, unadvertised_metadata

LOOPBACK_NAMES = {"localhost"}
APPLICATION_TYPES = ("native", "web")


class RegistrationRefused(Exception):
    """A registration the policy refuses, with its RFC 7591 error code."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status

    def response(self) -> JsonResponse:
        return JsonResponse(
            {"error": self.error, "error_description": self.description}, status=self.status
        )


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# RFC 3986 URIs are printable ASCII; anything else is percent-encoded by a client that means
# it. A space, tab or newline would split one checked entry into several stored ones.
URI_CHARACTERS = re.compile(r"[\x21-\x7e]+")


def redirect_uri_character_refusal(uri: str) -> str | None:
    """Why ``uri`` holds characters no redirect URI may hold, or None when it holds none."""
    for character in uri:
        if not URI_CHARACTERS.fullmatch(character):
            name = unicodedata.name(character, f"U+{ord(character):04X}")
            return (
                f"a redirect URI may not contain {name}: only printable ASCII without "
                "spaces (percent-encode anything else)"
            )
    return None


def check_redirect_uri_characters(metadata: dict[str, Any]) -> None:
    """Refuse (:class:`RegistrationRefused`) any redirect URI with whitespace or controls.

    Not a policy a host can leave out: it keeps the list the toolkit stores equal to the
    list the policies checked.
    """
    for uri in redirect_uris_of(metadata):
        reason = redirect_uri_character_refusal(uri)
        if reason:
            raise RegistrationRefused("invalid_redirect_uri", f"{uri!r}: {reason}")


def stored_as_checked(client_id: str, metadata: dict[str, Any]) -> bool:
    """Whether the application ``client_id`` stores exactly the redirect URIs checked."""
    application = get_application_model().objects.filter(client_id=client_id).first()
    if application is None:
        return False
    stored: list[str] = application.redirect_uris.split()
    return stored == redirect_uris_of(metadata)


def redirect_uris_of(metadata: dict[str, Any]) -> list[str]:
    uris = metadata.get("redirect_uris", [])
    if not isinstance(uris, list):
        return []
    return [uri for uri in uris if isinstance(uri, str)]


class RegistrationPolicy:
    """A check on the metadata of a client that registers (or updates its registration)."""

    def check(self, request: HttpRequest | None, metadata: dict[str, Any]) -> None:
        """Return if the metadata may be registered; raise :class:`RegistrationRefused`."""
        raise NotImplementedError(".check() must be overridden")


class RedirectURIPolicy(RegistrationPolicy):
    """Redirect URIs a client may register, beyond the toolkit's own validation.

    - ``http``: loopback hosts only, on any port (native clients, RFC 8252 §7.3);
    - ``https``: loopback, or a host in ``MCP_ENDPOINT["OAUTH_REDIRECT_URI_HOSTS"]``;
    - any other scheme: only a private-use scheme listed in the toolkit's
      ``ALLOWED_REDIRECT_URI_SCHEMES`` (``cursor``, say), which the toolkit also checks
      when it redirects.

    No fragment, no user information, and at least one URI.
    """

    def check(self, request: HttpRequest | None, metadata: dict[str, Any]) -> None:
        uris = metadata.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            raise RegistrationRefused("invalid_redirect_uri", "redirect_uris must not be empty")
        for uri in uris:
            if not isinstance(uri, str):
                raise RegistrationRefused("invalid_redirect_uri", "Each redirect_uri is a string")
            reason = self.refusal(uri)
            if reason:
                raise RegistrationRefused("invalid_redirect_uri", f"{uri!r}: {reason}")

    def refusal(self, uri: str) -> str | None:
        """Why ``uri`` may not be registered, or None when it may."""
        characters = redirect_uri_character_refusal(uri)
        if characters:
            return characters
        try:
            parts = urlsplit(uri)
            host = parts.hostname
            parts.port  # noqa: B018 - raises ValueError on a port out of range
        except ValueError:
            return "not a valid URI"
        scheme = parts.scheme.lower()
        if parts.fragment or "#" in uri:
            return "a redirect URI may not have a fragment"
        if parts.username is not None or parts.password is not None:
            return "a redirect URI may not carry user information"
        if scheme == "http":
            if is_loopback_host(host):
                return None
            return "plain http is allowed for loopback addresses only"
        if scheme == "https":
            if not host:
                return "an https redirect URI needs a host"
            if is_loopback_host(host) or validate_host(host, self.allowed_hosts()):
                return None
            return f"the host {host} is not allowed for redirects"
        private = {s.lower() for s in oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES}
        if scheme and scheme in private - {"http", "https"}:
            return None
        return f"the scheme {scheme or '(none)'!r} is not allowed"

    def allowed_hosts(self) -> list[str]:
        return list(mcp_settings.OAUTH_REDIRECT_URI_HOSTS or [])


class ApplicationTypePolicy(RegistrationPolicy):
    """``application_type`` (OpenID Connect Registration, required of MCP clients by SEP-837).

    A ``web`` client is a server: its redirect URIs must be https on a real host. A
    ``native`` client runs on the user's device: loopback, private-use schemes and https
    are its kinds of redirect URI. When absent, it is inferred from the redirect URIs.
    """

    def check(self, request: HttpRequest | None, metadata: dict[str, Any]) -> None:
        application_type = metadata.get("application_type")
        if application_type is None:
            return
        if application_type not in APPLICATION_TYPES:
            raise RegistrationRefused(
                "invalid_client_metadata",
                f"application_type must be one of {', '.join(APPLICATION_TYPES)}",
            )
        if application_type == "web":
            for uri in redirect_uris_of(metadata):
                parts = urlsplit(uri)
                if parts.scheme.lower() != "https" or is_loopback_host(parts.hostname):
                    raise RegistrationRefused(
                        "invalid_redirect_uri",
                        f"{uri!r}: a web application redirects to https on a public host",
                    )


def application_type_of(metadata: dict[str, Any]) -> str:
    """The declared ``application_type``, or the one the redirect URIs imply."""
    declared = metadata.get("application_type")
    if declared in APPLICATION_TYPES:
        return str(declared)
    for uri in redirect_uris_of(metadata):
        parts = urlsplit(uri)
        if parts.scheme.lower() not in {"http", "https"} or is_loopback_host(parts.hostname):
            return "native"
    return "web"


def check_policies(request: HttpRequest | None, metadata: dict[str, Any]) -> None:
    for policy_class in mcp_settings.OAUTH_REGISTRATION_POLICY_CLASSES:
        policy_class().check(request, metadata)


class RegistrationRateThrottle(SimpleRateThrottle):
    """Registrations per client address, at ``MCP_ENDPOINT["OAUTH_REGISTRATION_RATE"]``.

    The address is ``REMOTE_ADDR`` unless the host declares its proxies with DRF's
    ``REST_FRAMEWORK["NUM_PROXIES"]``; then it is found as the REST API finds it. DRF
    itself trusts the whole ``X-Forwarded-For`` header when ``NUM_PROXIES`` is unset, and
    any client can send that header: one forged value per request would make each
    registration the first of a new address.
    """

    scope = "mcp_oauth_registration"

    def get_rate(self) -> str | None:
        rate: str | None = mcp_settings.OAUTH_REGISTRATION_RATE
        return rate

    def get_ident(self, request: Any) -> str:
        if api_settings.NUM_PROXIES is None:
            remote_addr: str = request.META.get("REMOTE_ADDR", "")
            return remote_addr
        ident: str = super().get_ident(request)
        return ident

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def metadata_of(request: HttpRequest) -> dict[str, Any] | None:
    """The JSON object in the body, or None (the toolkit answers malformed bodies itself)."""
    try:
        data = json.loads(request.body)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def unparsable_body(request: HttpRequest) -> JsonResponse | None:
    """The toolkit's answer to a body that is not JSON, for the bodies its parser raises on
    instead (nesting past the recursion limit), or None."""
    try:
        json.loads(request.body)
    except RecursionError:
        return RegistrationRefused(
            "invalid_client_metadata", "Request body must be valid JSON"
        ).response()
    except ValueError:
        return None
    return None


def check_metadata(request: HttpRequest, metadata: dict[str, Any]) -> None:
    """Every check a registration or an update passes before the toolkit stores it: redirect
    URIs without whitespace or controls, text a database stores, only advertised grant and
    response types (none of which a host's policies can turn off), then the host's policies.
    Raises :class:`RegistrationRefused`."""
    check_redirect_uri_characters(metadata)
    for text in strings_in(metadata):
        if not is_storable(text):
            raise RegistrationRefused(
                "invalid_client_metadata",
                "The metadata holds a NUL or an unpaired surrogate character",
            )
    unadvertised = unadvertised_metadata(metadata)
    if unadvertised is not None:
        raise RegistrationRefused("invalid_client_metadata", unadvertised)
    check_policies(request, metadata)


def stored_refusal(response: HttpResponse, metadata: dict[str, Any] | None) -> JsonResponse | None:
    """The refusal to send instead of a successful ``response`` whose stored redirect URIs are
    not the checked ones, or None."""
    if response.status_code not in (200, 201):
        return None
    client_id = json.loads(response.content).get("client_id", "")
    if metadata is not None and stored_as_checked(client_id, metadata):
        return None
    return RegistrationRefused(
        "invalid_redirect_uri", "The redirect URIs cannot be stored as they were sent"
    ).response()


def with_application_type(response: HttpResponse, application_type: str) -> HttpResponse:
    """Echo ``application_type`` in the registration response, as RFC 7591 §3.2.1 asks."""
    if response.status_code not in (200, 201):
        return response
    data = json.loads(response.content)
    data["application_type"] = application_type
    return JsonResponse(data, status=response.status_code)


@method_decorator(csrf_exempt, name="dispatch")
class RegistrationView(DynamicClientRegistrationView):
    """The toolkit's RFC 7591 endpoint, behind a throttle and the registration policies."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        wait = self.throttle_wait(request)
        if wait is not None:
            seconds = max(1, math.ceil(wait))
            response = JsonResponse(
                {
                    "error": "temporarily_unavailable",
                    "error_description": f"Too many registrations; retry in {seconds} s",
                },
                status=429,
            )
            response["Retry-After"] = str(seconds)
            return response
        unparsable = unparsable_body(request)
        if unparsable is not None:
            return unparsable
        metadata = metadata_of(request)
        if metadata is not None:
            try:
                check_metadata(request, metadata)
            except RegistrationRefused as refused:
                return refused.response()
        with transaction.atomic():
            response = super().post(request, *args, **kwargs)
            refusal = stored_refusal(response, metadata)
            if refusal is not None:
                transaction.set_rollback(True)
                return refusal
        if metadata is None:
            return response
        return with_application_type(response, application_type_of(metadata))

    def throttle_wait(self, request: HttpRequest) -> float | None:
        """None when the request may go on, else the seconds to wait."""
        for throttle_class in mcp_settings.OAUTH_REGISTRATION_THROTTLE_CLASSES:
            throttle = throttle_class()
            if not throttle.allow_request(request, self):
                wait: float | None = throttle.wait()
                return wait or 0.0
        return None


@method_decorator(csrf_exempt, name="dispatch")
class RegistrationManagementView(DynamicClientRegistrationManagementView):
    """The toolkit's RFC 7592 endpoint; an update passes the same policies as a registration.

    The registration access token is checked first, so a stranger learns nothing from the
    policy's answer.
    """

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        # The toolkit's read of the registration (RFC 7592 §2.1) checks the token the
        # update must carry, and answers as the update would when it does not hold.
        current: HttpResponse = super().get(request, client_id, *args, **kwargs)
        if current.status_code != 200:
            return current
        unparsable = unparsable_body(request)
        if unparsable is not None:
            return unparsable
        metadata = metadata_of(request)
        if metadata is not None:
            try:
                check_metadata(request, metadata)
            except RegistrationRefused as refused:
                return refused.response()
        with transaction.atomic():
            response: HttpResponse = super().put(request, client_id, *args, **kwargs)
            refusal = stored_refusal(response, metadata)
            if refusal is not None:
                transaction.set_rollback(True)
                return refusal
        if metadata is None:
            return response
        return with_application_type(response, application_type_of(metadata))


class MetadataDocumentFetcher(SafeMetadataFetcher):
    """The toolkit's SSRF-hardened fetcher, with the redirect-URI policy on the document.

    Set ``OAUTH2_PROVIDER["CIMD_METADATA_FETCHER"]`` to this class. Besides what
    :class:`RedirectURIPolicy` allows, a document may name https redirect URIs on its own
    host: the site that publishes the client's identity is where it receives the code.
    """

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        metadata, max_age = super().fetch(client_id)
        self.check(client_id, metadata)
        return metadata, max_age

    def check(self, client_id: str, metadata: dict[str, Any]) -> None:
        """Raise :class:`~oauth2_provider.cimd.CIMDError` for a document the policy refuses."""
        own_host = (urlsplit(client_id).hostname or "").lower()
        policy = RedirectURIPolicy()
        for uri in redirect_uris_of(metadata):
            # The toolkit stores the list space-joined, as for a registration.
            characters = redirect_uri_character_refusal(uri)
            if characters:
                raise CIMDError(f"redirect URI {uri!r} refused: {characters}")
            parts = urlsplit(uri)
            if parts.scheme.lower() == "https" and (parts.hostname or "").lower() == own_host:
                continue
            reason = policy.refusal(uri)
            if reason:
                raise CIMDError(f"redirect URI {uri!r} refused: {reason}")
        unadvertised = unadvertised_metadata(metadata)
        if unadvertised is not None:
            raise CIMDError(unadvertised)
        try:
            ApplicationTypePolicy().check(None, metadata)
        except RegistrationRefused as refused:
            raise CIMDError(refused.description) from refused

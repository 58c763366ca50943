"""The metadata documents clients read first: RFC 9728 for ``/mcp``, RFC 8414 for the server.

Both views are django-oauth-toolkit's own, told what only this app knows: which MCP
endpoint a protected-resource document describes (its canonical URL and the scopes its
tools use), and which issuer the authorisation server really has.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import OAuthProtectedResourceMetadataView, OAuthServerMetadataView
from oauth2_provider.views.metadata import bcp_filter_response_types

from mcp_endpoint.resource import endpoint_path, resource_url

if TYPE_CHECKING:
    from mcp_endpoint.endpoint import Endpoint

__all__ = ["endpoint_path", "resource_url"]  # where they were; the account pages need no toolkit


def endpoint_at(path: str) -> Endpoint | None:
    """The MCP endpoint that answers ``path`` (``/mcp`` or ``/mcp/``), or None."""
    from mcp_endpoint.views import MCPView

    try:
        match = resolve(path)
    except Resolver404:
        return None
    view_class = getattr(match.func, "view_class", None)
    if view_class is None or not issubclass(view_class, MCPView):
        return None
    endpoint: Endpoint | None = getattr(match.func, "view_initkwargs", {}).get("endpoint")
    return endpoint


DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> tuple[str, str, int | None] | None:
    """Scheme, host and port of ``url`` (the port made explicit), or None if it has none."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not parts.hostname or parts.username is not None:
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS.get(scheme)


def is_own_resource(url: str, request: HttpRequest) -> bool:
    """Whether ``url`` is a resource of this site, so a token may be bound to it (RFC 8707).

    A URL on the origin the request came to is this site's; so is any endpoint's configured
    ``RESOURCE_URL`` and the toolkit's ``OAUTH2_PROTECTED_RESOURCE_IDENTIFIER`` (both name
    the site as clients see it through a proxy). Anything else names another server.
    """
    from mcp_endpoint.endpoint import endpoints

    if origin_of(url) == origin_of(request.build_absolute_uri("/")):
        return True
    configured = {e.settings.RESOURCE_URL for e in list(endpoints)} | {
        oauth2_settings.OAUTH2_PROTECTED_RESOURCE_IDENTIFIER
    }
    return url.rstrip("/") in {c.rstrip("/") for c in configured if c}


def advertised_grant_types() -> list[str]:
    """The ``grant_types_supported`` of the authorisation server metadata, as the toolkit
    computes them: its setting less the grants an RFC 9700 gate turns off."""
    grant_types = list(oauth2_settings.OAUTH2_GRANT_TYPES_SUPPORTED)
    if oauth2_settings.COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT:
        grant_types = [g for g in grant_types if g != "implicit"]
    if oauth2_settings.COMPLIANT_BCP_RFC9700_PASSWORD_GRANT:
        grant_types = [g for g in grant_types if g != "password"]
    return grant_types


def advertised_response_types() -> list[str]:
    """The ``response_types_supported`` of the authorisation server metadata."""
    response_types: list[str] = bcp_filter_response_types(
        oauth2_settings.OAUTH2_RESPONSE_TYPES_SUPPORTED
    )
    return response_types


def not_found(description: str) -> JsonResponse:
    return JsonResponse({"error": "not_found", "error_description": description}, status=404)


@method_decorator(csrf_exempt, name="dispatch")
class ProtectedResourceMetadataView(OAuthProtectedResourceMetadataView):
    """RFC 9728 metadata of an MCP endpoint.

    At ``/.well-known/oauth-protected-resource/<path>`` it describes the endpoint mounted
    at ``/<path>``; at the bare well-known URL, the view's ``endpoint`` (the default
    ``mcp_endpoint.site``). ``resource`` is the endpoint's canonical URL and
    ``scopes_supported`` the scopes its tools use; the authorisation servers and bearer
    methods are the toolkit's settings.
    """

    endpoint: Endpoint | None = None
    http_method_names = ["get", "head", "options"]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        resource_path = kwargs.get("resource_path")
        if resource_path:
            path = "/" + resource_path.strip("/")
            found = endpoint_at(path)
            if found is None:
                return not_found(f"No MCP endpoint at {path}")
            self.described, self.path = found, path
        else:
            if self.endpoint is None:
                from mcp_endpoint.sites import site

                self.endpoint = site
            self.described, self.path = self.endpoint, None
        response: HttpResponse = super().get(request, *args, **kwargs)
        return response

    def get_resource(self, request: HttpRequest) -> str:
        return resource_url(self.described, request, self.path)

    def get_scopes_supported(self) -> list[str]:
        return self.described.scopes()

    def get_resource_name(self) -> str:
        name: str = oauth2_settings.OAUTH2_PROTECTED_RESOURCE_NAME
        settings = self.described.settings
        return name or settings.SERVER_TITLE or settings.SERVER_NAME


@method_decorator(csrf_exempt, name="dispatch")
class AuthorizationServerMetadataView(OAuthServerMetadataView):
    """RFC 8414 metadata of django-oauth-toolkit, served only for its real issuer.

    The toolkit derives the issuer from the URL the document was fetched at, so any path
    after the well-known prefix would make up a new issuer; here a path form that names
    another issuer is a 404. The bare root form, which RFC 8414 reserves for an issuer
    without a path, names the real issuer too: clients of the 2025-03-26 revision look
    there first, and a document that contradicts the ``iss`` of every authorisation
    response would only make them fail later and less clearly.
    """

    http_method_names = ["get", "head", "options"]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        issuer = oauth2_settings.oauth2_authorization_server_issuer(request)
        derived = oauth2_settings.oauth2_metadata_issuer(request)
        root = request.build_absolute_uri("/").rstrip("/")
        if derived not in (issuer, root):
            return not_found(f"This server's issuer is {issuer}")
        response: HttpResponse = super().get(request, *args, **kwargs)
        if response.status_code != 200:
            return response
        data = json.loads(response.content)
        data["issuer"] = issuer
        response.content = json.dumps(registration_first(data)).encode()
        return response


# How a client gets a client id, in the order the MCP authorisation spec prefers them:
# a client ID metadata document first; dynamic registration (deprecated in 2026-07-28),
# when it is on, after it.
REGISTRATION_KEYS = ("client_id_metadata_document_supported", "registration_endpoint")


def registration_first(data: dict[str, Any]) -> dict[str, Any]:
    """The metadata with the registration keys just after ``issuer``, metadata documents
    first, so a client (or person) reading it top-down meets the preferred way first."""
    head = {"issuer": data.pop("issuer")}
    for key in REGISTRATION_KEYS:
        if key in data:
            head[key] = data.pop(key)
    return {**head, **data}

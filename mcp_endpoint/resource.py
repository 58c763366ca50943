"""The canonical URL of an endpoint: the resource (RFC 8707) its OAuth tokens are bound to,
and the URL a user pastes into an AI client. Apart from :mod:`mcp_endpoint.oauth` so that
the account pages and the admin show it without django-oauth-toolkit installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

if TYPE_CHECKING:
    from mcp_endpoint.interfaces import EndpointLike


def endpoint_path(endpoint: EndpointLike) -> str:
    """The path ``endpoint`` is mounted at, without a trailing slash (``/mcp``)."""
    try:
        path = reverse(f"{endpoint.name}:endpoint")
    except NoReverseMatch:
        path = f"/{endpoint.name}"
    return path.rstrip("/") or "/"


def resource_url(endpoint: EndpointLike, request: HttpRequest, path: str | None = None) -> str:
    """The canonical URL of ``endpoint``, as a user types it: the RFC 8707 resource.

    ``MCP_ENDPOINT["RESOURCE_URL"]`` when set (a server behind a proxy that rewrites
    paths); otherwise the absolute URL of the endpoint's path, without a trailing slash.
    """
    configured: str | None = endpoint.settings.RESOURCE_URL
    if configured:
        # A URL under the endpoint's (its toolsets' paths) is that much under the configured one.
        base = endpoint_path(endpoint)
        suffix = path.rstrip("/")[len(base) :] if path and path.startswith(base + "/") else ""
        return configured.rstrip("/") + suffix if suffix else configured
    if path is None:
        path = endpoint_path(endpoint)
    return request.build_absolute_uri(path.rstrip("/") or "/")

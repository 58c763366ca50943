"""System checks of the OAuth set-up (``mcp_endpoint.E070`` to ``W074``).

Only :mod:`oauth2_provider`'s REST framework glue is imported at module level: the rest
of the toolkit defines models, which cannot be imported when the toolkit is not installed,
and that is one of the set-ups checked here.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.urls import NoReverseMatch, Resolver404, resolve, reverse
from oauth2_provider.contrib.rest_framework import OAuth2Authentication

from mcp_endpoint.conf import mcp_settings

METADATA_PREFIX = "/.well-known/oauth-protected-resource"
VALIDATOR = "mcp_endpoint.oauth.validators.OAuth2Validator"


def accepts_oauth_tokens(endpoint: Any) -> bool:
    """Whether ``endpoint`` takes django-oauth-toolkit's access tokens as credentials."""
    return any(
        isinstance(cls, type) and issubclass(cls, OAuth2Authentication)
        for cls in endpoint.settings.AUTHENTICATION_CLASSES or []
    )


def mounted_path(endpoint: Any) -> str | None:
    """The path ``endpoint`` answers at (``/mcp``), or None when no URL mounts it."""
    try:
        path: str = reverse(f"{endpoint.name}:endpoint")
    except NoReverseMatch:
        return None
    return path.rstrip("/") or "/"


@register(Tags.security)
def check_oauth(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from mcp_endpoint.checks import all_endpoints

    messages: list[CheckMessage] = []
    installed = apps.is_installed("oauth2_provider")
    for endpoint in all_endpoints():
        if not accepts_oauth_tokens(endpoint):
            continue
        if not installed:
            messages.append(
                Error(
                    f"Endpoint {endpoint.name!r} accepts OAuth access tokens, but "
                    "'oauth2_provider' is not in INSTALLED_APPS: no token can be checked.",
                    hint="Add 'oauth2_provider' to INSTALLED_APPS (see docs/oauth.md), or "
                    "leave the OAuth class out of MCP_ENDPOINT['AUTHENTICATION_CLASSES'] "
                    "(['mcp_endpoint.authentication.APIKeyAuthentication'] for API keys only).",
                    obj=endpoint,
                    id="mcp_endpoint.E071",
                )
            )
            continue
        if endpoint.settings.REQUIRE_CREDENTIAL:
            messages.extend(check_metadata_mounted(endpoint))
    return messages


def check_metadata_mounted(endpoint: Any) -> list[CheckMessage]:
    """E070: the 401's ``resource_metadata`` must name a URL that serves this endpoint's."""
    from mcp_endpoint.oauth.metadata import ProtectedResourceMetadataView, endpoint_at

    path = mounted_path(endpoint)
    if path is None:
        return []
    url = METADATA_PREFIX + path
    try:
        match = resolve(url)
    except Resolver404:
        match = None
    view_class = getattr(match.func, "view_class", None) if match else None
    served = (
        isinstance(view_class, type)
        and issubclass(view_class, ProtectedResourceMetadataView)
        and endpoint_at(path) is endpoint
    )
    if served:
        return []
    return [
        Error(
            f"The 401 answers of endpoint {endpoint.name!r} send OAuth clients to {url}, "
            "which does not serve its protected resource metadata (RFC 9728): they cannot "
            "find the authorisation server.",
            hint="Mount the OAuth URLs at the site root, before the toolkit's own: "
            "path('', include('mcp_endpoint.oauth.urls')).",
            obj=endpoint,
            id="mcp_endpoint.E070",
        )
    ]


@register(Tags.security, deploy=True)
def check_oauth_deploy(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if mcp_settings.OAUTH_ACCEPT_UNBOUND_TOKENS is not True:
        return []
    return [
        Warning(
            "MCP_ENDPOINT['OAUTH_ACCEPT_UNBOUND_TOKENS'] is on: /mcp accepts access tokens "
            "issued for no resource, which every other service of the site accepts too, so "
            "a token meant for one of them also drives the MCP tools.",
            hint="Turn it off once your clients send resource=<the endpoint URL> (RFC 8707), "
            "as MCP clients do.",
            id="mcp_endpoint.W072",
        )
    ]


@register(Tags.compatibility)
def check_oauth_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """E073 for the OAuth keys of MCP_ENDPOINT of the wrong type; W074 for toolkit settings
    that leave out what MCP clients are promised."""
    messages: list[CheckMessage] = []
    accept = mcp_settings.OAUTH_ACCEPT_UNBOUND_TOKENS
    seconds = mcp_settings.OAUTH_UNUSED_CLIENT_SECONDS
    if not isinstance(accept, bool):
        messages.append(
            Error(
                "MCP_ENDPOINT['OAUTH_ACCEPT_UNBOUND_TOKENS'] must be True or False.",
                id="mcp_endpoint.E073",
            )
        )
    if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 0:
        messages.append(
            Error(
                "MCP_ENDPOINT['OAUTH_UNUSED_CLIENT_SECONDS'] must be a number of seconds, "
                "0 or more.",
                id="mcp_endpoint.E073",
            )
        )
    if apps.is_installed("oauth2_provider"):
        messages.extend(check_toolkit_settings())
    return messages


def check_toolkit_settings() -> list[CheckMessage]:
    from oauth2_provider.settings import oauth2_settings

    from mcp_endpoint.oauth.validators import OAuth2Validator

    missing = []
    if not issubclass(oauth2_settings.OAUTH2_VALIDATOR_CLASS, OAuth2Validator):
        missing.append(
            f"OAUTH2_VALIDATOR_CLASS is not {VALIDATOR} (a replayed code keeps its tokens)"
        )
    if not oauth2_settings.COMPLIANT_BCP_RFC9700_PKCE_METHOD:
        missing.append("COMPLIANT_BCP_RFC9700_PKCE_METHOD is off (PKCE 'plain' is accepted)")
    if not oauth2_settings.PKCE_REQUIRED:
        missing.append("PKCE_REQUIRED is off")
    if not missing:
        return []
    return [
        Warning(
            "OAUTH2_PROVIDER leaves out what MCP clients are promised: " + "; ".join(missing) + ".",
            hint="Build it with mcp_endpoint.oauth.provider_settings(existing={...}).",
            id="mcp_endpoint.W074",
        )
    ]

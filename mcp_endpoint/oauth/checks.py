"""System checks of the OAuth set-up (``mcp_endpoint.E070`` to ``W075``).

Nothing of :mod:`oauth2_provider` is imported here unless OAuth for MCP clients is on
(:func:`mcp_endpoint.compat.oauth_enabled`): a host without the toolkit, or with an older
one, is one of the set-ups checked.
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.urls import NoReverseMatch, Resolver404, resolve, reverse

from mcp_endpoint import compat
from mcp_endpoint.conf import mcp_settings

METADATA_PREFIX = "/.well-known/oauth-protected-resource"
VALIDATOR = "mcp_endpoint.oauth.validators.OAuth2Validator"


def accepts_oauth_tokens(endpoint: Any) -> bool:
    """Whether ``endpoint`` takes django-oauth-toolkit's access tokens as credentials."""
    from mcp_endpoint.authentication import OAuth2TokenAuthentication

    return any(
        isinstance(cls, type)
        and (
            issubclass(cls, OAuth2TokenAuthentication)
            or compat.is_toolkit_class(cls, {"OAuth2Authentication"})
        )
        for cls in endpoint.settings.AUTHENTICATION_CLASSES or []
    )


def names_authentication_classes(endpoint: Any) -> bool:
    """Whether the host chose ``endpoint``'s authentication classes rather than the defaults."""
    key = "AUTHENTICATION_CLASSES"
    return key in endpoint.settings.overrides or key in endpoint.settings.user_settings


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
    installed = compat.toolkit_in_use()
    enabled = compat.oauth_enabled()
    too_old = False
    for endpoint in all_endpoints():
        if not accepts_oauth_tokens(endpoint):
            continue
        if not installed and not names_authentication_classes(endpoint):
            # The default classes name the OAuth class too: without the toolkit (installed
            # without the "oauth" extra) it passes bearer values on, and API keys are all.
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
        if not enabled:
            too_old = True
            continue
        if endpoint.settings.REQUIRE_CREDENTIAL:
            messages.extend(check_metadata_mounted(endpoint))
    if too_old:
        messages.append(toolkit_too_old(compat.toolkit_version()))
    return messages


def toolkit_too_old(version: str | None) -> CheckMessage:
    """W075: the host's toolkit is not one OAuth for MCP clients runs on; that part is off."""
    lowest = ".".join(map(str, compat.TOOLKIT_MINIMUM))
    below = ".".join(map(str, compat.TOOLKIT_BELOW))
    return Warning(
        f"django-oauth-toolkit {version or '(version unknown)'} is installed; OAuth for MCP "
        f"clients needs {lowest} or later, before {below} (client ID metadata documents, "
        "resource binding, the RFC 9700 gates), so it is off: /mcp takes API keys, and a "
        "bearer value that is not one is left to the host's own authentication classes.",
        hint=f"Keep the toolkit your product needs; upgrade it to {lowest} (pip install "
        "'mcp-endpoint[oauth]', then migrate) when MCP clients should sign in with OAuth.",
        id="mcp_endpoint.W075",
    )


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
    swallowed = ""
    metadata_view = isinstance(view_class, type) and issubclass(
        view_class, ProtectedResourceMetadataView
    )
    if match is not None and not metadata_view:
        # Another pattern answers the URL: the OAuth URLs may be mounted, but after it.
        swallowed = f" (the URL pattern {match.route!r} answers it)"
    return [
        Error(
            f"The 401 answers of endpoint {endpoint.name!r} send OAuth clients to {url}, "
            f"which does not serve its protected resource metadata (RFC 9728){swallowed}: "
            "they cannot find the authorisation server.",
            hint="Mount the OAuth URLs at the site root, before the toolkit's own and before "
            "any catch-all route: path('', include('mcp_endpoint.oauth.urls')).",
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
    """W074 for toolkit settings that leave out what MCP clients are promised, W142 when
    no MCP client can get a client id by itself (the types of the OAuth keys of
    MCP_ENDPOINT are checked with every other key's, by ``check_settings``)."""
    messages: list[CheckMessage] = []
    if compat.oauth_enabled():
        messages.extend(check_toolkit_settings())
        messages.extend(check_registration_ways())
    return messages


def check_registration_ways() -> list[CheckMessage]:
    """W142: neither client ID metadata documents nor dynamic registration is on, so no
    MCP client can get a client id by itself."""
    from oauth2_provider.settings import oauth2_settings

    if oauth2_settings.CIMD_ENABLED or oauth2_settings.DCR_ENABLED:
        return []
    return [
        Warning(
            "OAUTH2_PROVIDER turns off both client ID metadata documents (CIMD_ENABLED) and "
            "dynamic registration (DCR_ENABLED): an MCP client can connect with OAuth only "
            "with an application an administrator made for it.",
            hint="Keep CIMD_ENABLED on (what MCP clients prefer); turn DCR_ENABLED off alone "
            "to refuse dynamic registration.",
            id="mcp_endpoint.W142",
        )
    ]


def check_toolkit_settings() -> list[CheckMessage]:
    from oauth2_provider.settings import oauth2_settings

    from mcp_endpoint.oauth.provider import PKCERequired
    from mcp_endpoint.oauth.validators import OAuth2Validator

    missing = []
    ours = issubclass(oauth2_settings.OAUTH2_VALIDATOR_CLASS, OAuth2Validator)
    if not ours:
        missing.append(
            f"OAUTH2_VALIDATOR_CLASS is not {VALIDATOR} (a replayed code keeps its tokens)"
        )
    # Our validator refuses 'plain' to MCP clients whatever the gate says; the host's own
    # clients keep what the gate gives them.
    if not ours and not oauth2_settings.COMPLIANT_BCP_RFC9700_PKCE_METHOD:
        missing.append("COMPLIANT_BCP_RFC9700_PKCE_METHOD is off (PKCE 'plain' is accepted)")
    pkce = oauth2_settings.PKCE_REQUIRED
    if pkce is not True and not isinstance(pkce, PKCERequired):
        missing.append("PKCE_REQUIRED does not require PKCE of MCP clients")
    if not missing:
        return []
    return [
        Warning(
            "OAUTH2_PROVIDER leaves out what MCP clients are promised: " + "; ".join(missing) + ".",
            hint="Build it with mcp_endpoint.oauth.provider_settings(existing={...}).",
            id="mcp_endpoint.W074",
        )
    ]

"""django-oauth-toolkit's settings for MCP clients, merged with a host's own.

Importable from a settings module: nothing here touches Django's settings or models.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

# What MCP clients need of the authorisation server, besides what the host decides.
MCP_PROVIDER_SETTINGS: dict[str, Any] = {
    # PKCE with S256 on every code grant; "plain" is refused (MCP authorisation, RFC 9700).
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    # No implicit and no password grant: neither belongs in OAuth 2.1.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    # iss in every authorisation response (RFC 9207); tokens in headers only and stored as
    # digests; refresh tokens rotated, a reused one revoking its family.
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    # Native clients listen on a loopback port of their choosing (RFC 8252); Cursor uses
    # its own private-use scheme.
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https", "cursor"],
    # What the server metadata advertises: the code grant, for public clients too.
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "client_secret_basic",
        "client_secret_post",
        "none",
    ],
    # MCP clients register anonymously (RFC 7591), bounded by MCP_ENDPOINT["OAUTH_*"], or
    # name a client ID metadata document, fetched over https from public addresses only.
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": "mcp_endpoint.oauth.registration.MetadataDocumentFetcher",
    "CIMD_MAX_DOCUMENT_SIZE": 5 * 1024,
    # Revokes the tokens of an authorisation code that comes back (RFC 6749 §4.1.2).
    "OAUTH2_VALIDATOR_CLASS": "mcp_endpoint.oauth.validators.OAuth2Validator",
    # The admin shows how each client registered and the resource each token is bound to.
    "APPLICATION_ADMIN_CLASS": "mcp_endpoint.oauth.admin.ApplicationAdmin",
    "ACCESS_TOKEN_ADMIN_CLASS": "mcp_endpoint.oauth.admin.AccessTokenAdmin",
}

# Values a host may not change: each would let a client past what MCP requires.
REQUIRED: dict[str, Any] = {
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
}
# Lists where a host's entries are kept and the MCP ones added.
UNIONS = ("OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED", "ALLOWED_REDIRECT_URI_SCHEMES")


def provider_settings(
    existing: Mapping[str, Any] | None = None, **overrides: Any
) -> dict[str, Any]:
    """``OAUTH2_PROVIDER`` for a host that serves MCP clients::

        from mcp_endpoint.oauth import provider_settings

        OAUTH2_PROVIDER = provider_settings(
            existing=OAUTH2_PROVIDER,  # the host's own dict, if it has one
            SCOPES={"read": "See your data", "write": "Change your data"},
        )

    The MCP defaults (:data:`MCP_PROVIDER_SETTINGS`: S256 PKCE only, no implicit or password
    grant, ``iss``, open registration, client ID metadata documents, the replay-revoking
    validator) first, then the host's ``existing`` dict and keyword ``overrides``, which win,
    except that the lists in :data:`UNIONS` keep the MCP entries as well, and the values in
    :data:`REQUIRED` may not be turned off (:class:`ImproperlyConfigured` says which).
    """
    merged = {**MCP_PROVIDER_SETTINGS, **dict(existing or {}), **overrides}
    for key in UNIONS:
        host = list(merged[key])
        merged[key] = host + [v for v in MCP_PROVIDER_SETTINGS[key] if v not in host]
    for key, value in REQUIRED.items():
        if merged[key] != value:
            raise ImproperlyConfigured(
                f"OAUTH2_PROVIDER[{key!r}] must be {value!r} for MCP clients (S256 PKCE only, "
                "no implicit or password grant); leave it out of the settings you pass."
            )
    return merged

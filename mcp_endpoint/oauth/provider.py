"""django-oauth-toolkit's settings for MCP clients, merged with a host's own.

Importable from a settings module: nothing here touches Django's settings or models when
imported (the PKCE policy reads an application's row when it is asked about a client).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

# What MCP clients need of the authorisation server, besides what the host decides.
MCP_PROVIDER_SETTINGS: dict[str, Any] = {
    # PKCE with S256 on every code grant; "plain" is refused (MCP authorisation, RFC 9700).
    # A host whose own clients skip PKCE or use "plain" keeps that for them: PKCE_REQUIRED
    # then becomes a PKCERequired, and the validator refuses "plain" to MCP clients.
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
    # What the server metadata advertises: the code grant, for public clients too, and the
    # client-credentials grant for services acting as a user an administrator names
    # (mcp_endpoint.oauth.machine; a self-registered client never gets it).
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token", "client_credentials"],
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
    # The scopes MCP_ENDPOINT["SCOPES_BY_METHOD"] asks for by default; a host's own scopes
    # are kept beside them.
    "SCOPES": {"read": "Reading scope", "write": "Writing scope"},
}

# How a client registered when it came through the MCP registration paths: anonymous
# dynamic registration (RFC 7591) or a client ID metadata document.
MCP_REGISTRATION_SOURCES = frozenset({"dcr", "cimd"})


def is_mcp_client(client_id: str) -> bool:
    """Whether ``client_id`` registered itself as MCP clients do, rather than being an
    application the host's administrators made."""
    from oauth2_provider.models import get_application_model

    source = (
        get_application_model()
        ._default_manager.filter(client_id=client_id)
        .values_list("registration_source", flat=True)
        .first()
    )
    if source is None:
        # Not registered yet: a client ID metadata document's URL, fetched on first use.
        return client_id.startswith("https://")
    return source in MCP_REGISTRATION_SOURCES


class PKCERequired:
    """``PKCE_REQUIRED`` per client, as the toolkit allows it (a callable of the client id):
    always for MCP clients, the host's own policy (a boolean or a callable) for the others.
    """

    def __init__(self, others: bool | Callable[[str], bool]) -> None:
        self.others = others

    def __call__(self, client_id: str) -> bool:
        if is_mcp_client(client_id):
            return True
        return bool(self.others(client_id) if callable(self.others) else self.others)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PKCERequired) and other.others == self.others

    def __hash__(self) -> int:
        return hash((PKCERequired, self.others))

    def __repr__(self) -> str:
        return f"PKCERequired(others={self.others!r})"


# Values a host may not change: each would let a client past what MCP requires. PKCE is
# not here: it is decided per client (PKCERequired and the validator).
REQUIRED: dict[str, Any] = {
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
    except that the lists in :data:`UNIONS` keep the MCP entries as well, ``SCOPES`` keeps
    every scope named by any of the three, and the values in :data:`REQUIRED` may not be
    turned off (:class:`ImproperlyConfigured` says which).

    PKCE stays what the host had for its own applications: a ``PKCE_REQUIRED`` of False (or
    a callable) becomes a :class:`PKCERequired`, which asks PKCE of every MCP client (those
    registered dynamically or by a client ID metadata document) and leaves the host's
    applications to the host's value; the validator refuses "plain" to MCP clients.
    """
    host = {**dict(existing or {}), **overrides}
    merged = {**MCP_PROVIDER_SETTINGS, **host}
    for key in UNIONS:
        own = list(merged[key])
        merged[key] = own + [v for v in MCP_PROVIDER_SETTINGS[key] if v not in own]
    merged["SCOPES"] = {
        **MCP_PROVIDER_SETTINGS["SCOPES"],
        **dict((existing or {}).get("SCOPES", {})),
        **dict(overrides.get("SCOPES", {})),
    }
    pkce = merged["PKCE_REQUIRED"]
    if pkce is not True and not isinstance(pkce, PKCERequired):
        merged["PKCE_REQUIRED"] = PKCERequired(pkce)
    for key, value in REQUIRED.items():
        if merged[key] != value:
            raise ImproperlyConfigured(
                f"OAUTH2_PROVIDER[{key!r}] must be {value!r} for MCP clients (no implicit or "
                "password grant); leave it out of the settings you pass."
            )
    return merged

"""The product's ``OAUTH2_PROVIDER`` as it was, and as ``provider_settings()`` makes it."""

from __future__ import annotations

from typing import Any

from mcp_endpoint.oauth import provider_settings

PRODUCT_OAUTH2_PROVIDER: dict[str, Any] = {
    "SCOPES": {
        "orders:read": "See your orders",
        "orders:write": "Place and cancel orders",
    },
    "DEFAULT_SCOPES": ["orders:read"],
    # The product's partners integrated before PKCE was asked of anyone.
    "PKCE_REQUIRED": False,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": False,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https"],
}

OAUTH2_PROVIDER = provider_settings(existing=PRODUCT_OAUTH2_PROVIDER)

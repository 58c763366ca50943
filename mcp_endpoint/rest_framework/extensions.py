"""What drf-spectacular needs to know about the app's own DRF classes."""

from __future__ import annotations

from typing import Any

from drf_spectacular.contrib.django_oauth_toolkit import DjangoOAuthToolkitScheme
from drf_spectacular.extensions import OpenApiAuthenticationExtension


class APIKeyScheme(OpenApiAuthenticationExtension):
    """Describes API keys to drf-spectacular (and keeps it from warning about them)."""

    target_class = "mcp_endpoint.authentication.APIKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer"}


class OAuth2TokenScheme(DjangoOAuthToolkitScheme):
    """The toolkit's description of its tokens, for the app's subclass of its class (which
    drf-spectacular otherwise does not recognise, and warns about for every action)."""

    target_class = "mcp_endpoint.authentication.OAuth2TokenAuthentication"

"""What drf-spectacular needs to know about the app's own DRF classes."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class APIKeyScheme(OpenApiAuthenticationExtension):
    """Describes API keys to drf-spectacular (and keeps it from warning about them)."""

    target_class = "mcp_endpoint.authentication.APIKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer"}

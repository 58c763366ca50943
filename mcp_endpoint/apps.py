from __future__ import annotations

from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class MCPEndpointConfig(AppConfig):
    name = "mcp_endpoint"
    verbose_name = "MCP endpoint"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from mcp_endpoint import checks  # noqa: F401  (registers the system checks)
        from mcp_endpoint.oauth import checks as oauth_checks  # noqa: F401

        # Each installed app's mcp.py registers its tools, as admin.py modules do.
        autodiscover_modules("mcp")

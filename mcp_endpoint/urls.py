"""URLs of the default endpoint: ``path("mcp", include("mcp_endpoint.urls"))``."""

from __future__ import annotations

from mcp_endpoint.sites import site

app_name = "mcp_endpoint"
urlpatterns = site.get_urls()

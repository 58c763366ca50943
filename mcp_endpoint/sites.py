"""The default endpoint, as ``django.contrib.admin.sites.site`` is the default admin."""

from __future__ import annotations

from mcp_endpoint.endpoint import Endpoint

site = Endpoint("mcp")

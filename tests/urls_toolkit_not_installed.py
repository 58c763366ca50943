"""The MCP endpoint alone, for :mod:`tests.settings_toolkit_not_installed`."""

from __future__ import annotations

from django.urls import path

from mcp_endpoint import site

urlpatterns = [path("mcp", site.urls)]

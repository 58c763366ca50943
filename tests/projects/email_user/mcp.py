"""The host's tools: its notes API, on the default endpoint."""

from __future__ import annotations

from mcp_endpoint import site
from tests.projects.email_user.api import router

site.register_router(router)

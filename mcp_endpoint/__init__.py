"""A Model Context Protocol endpoint for Django REST framework products.

Add ``"mcp_endpoint"`` to ``INSTALLED_APPS``, mount ``mcp_endpoint.site.urls`` at ``mcp``,
and register tools in a ``mcp.py`` module of any installed app (discovered at start-up,
as ``admin.py`` modules are).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_endpoint.endpoint import Endpoint

    site: Endpoint

__all__ = ["site"]


def __getattr__(name: str) -> Any:
    # The default endpoint is created lazily so importing the package needs no settings.
    if name == "site":
        from mcp_endpoint.sites import site

        return site
    raise AttributeError(name)

"""Template tags of the app's pages: ``{% load mcp_endpoint %}``."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.simple_tag(takes_context=True)
def product_name(context: Any) -> str:
    """What the product calls itself: the endpoint's ``SERVER_TITLE`` (the name MCP
    clients show for it too), or else the site's name (``django.contrib.sites``, or the
    request's host), as Django's login view gives it."""
    from mcp_endpoint.sites import site

    title: str = site.settings.SERVER_TITLE
    return title or str(context.get("site_name") or "")

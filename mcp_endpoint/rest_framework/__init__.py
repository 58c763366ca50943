"""DRF viewsets as MCP tools: the one place that knows viewsets.

``register_viewset(endpoint, TaskViewSet)`` (or ``endpoint.register_viewset(...)``) turns
each action of the viewset into a tool. The package is split by concern:

- :mod:`.registration`: registering viewsets and routers, and the checks of a registration;
- :mod:`.naming`: tool names and the nouns in them;
- :mod:`.spec`: the frozen per-action spec built once from drf-spectacular (schemas,
  scopes, annotations, description);
- :mod:`.calling`: the inner request and the view subclass that answers it;
- :mod:`.results`: the view's response as a tool result or a tool error;
- :mod:`.tool`: :class:`ViewSetTool`, which holds its spec;
- :mod:`.extensions`: what drf-spectacular needs to know of the app's classes.

A call becomes a real DRF request dispatched to the viewset, so the view's
authentication, permissions, ``required_scopes``, querysets, throttles, validation,
pagination and exception handler all run exactly as they do for the REST API.
"""

from __future__ import annotations

from mcp_endpoint.rest_framework.extensions import APIKeyScheme, OAuth2TokenScheme
from mcp_endpoint.rest_framework.registration import (
    APIViewRegistration,
    ViewSetRegistration,
    register_router,
    register_view,
    register_viewset,
)
from mcp_endpoint.rest_framework.spec import ActionOptions, ActionSpec
from mcp_endpoint.rest_framework.tool import ViewSetTool

__all__ = [
    "APIKeyScheme",
    "APIViewRegistration",
    "ActionOptions",
    "ActionSpec",
    "OAuth2TokenScheme",
    "ViewSetRegistration",
    "ViewSetTool",
    "register_router",
    "register_view",
    "register_viewset",
]

"""What the transport and the state it consults use of an endpoint.

The view, sessions, streams, subscriptions, the event store, the call log and request
states are handed the :class:`~mcp_endpoint.endpoint.Endpoint` they serve; they see it
through :class:`EndpointLike`, so that none of them imports the endpoint module, which
imports them (a request flows from the view into the endpoint, never back).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from mcp_endpoint.conf import MCPSettings
from mcp_endpoint.protocol.request_context import RequestContext
from mcp_endpoint.registry import NamedRegistry


class EndpointLike(Protocol):
    name: str
    settings: MCPSettings

    @property
    def tools(self) -> NamedRegistry[Any]: ...

    def scopes(self) -> list[str]: ...

    def supported_versions(self) -> Sequence[str]: ...

    def handle(self, message: Any, context: RequestContext) -> dict[str, Any] | None: ...

    def read_resource(self, uri: str, context: RequestContext) -> dict[str, Any]: ...
